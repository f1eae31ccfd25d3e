import { Inject, Injectable } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import {
  RunplaneError,
  type NetworkVolume,
  type NetworkVolumeCreateDto,
  type NetworkVolumeUpdateDto,
} from '@runplane/contracts';
import { randomBytes } from 'node:crypto';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import { dataCenterIds } from '../catalogue/offers.js';
import { ComputeProvider } from '../compute/compute-provider.js';
import { PodsRepository } from '../pods/pods.repository.js';
import { NetworkVolumesRepository, type NetworkVolumeRow } from './network-volumes.repository.js';

/** A volume a Pod mounts: the user's own, or one the operator lists in the catalogue. */
export interface MountableVolume extends NetworkVolume {
  /** What the compute provider mounts (Kubernetes: the PersistentVolumeClaim). */
  claimName: string;
  /** Set for a user's volume, which the provider creates when a workload first mounts it. */
  sizeInGb?: number;
}

/**
 * Network volumes (RunPod REST v1 `/v1/networkvolumes`): storage of one user in one data center
 * of this installation, mounted by the Pods that name it. The operator's catalogue may list shared
 * volumes too (existing claims); those are mountable by every user but not managed here.
 */
@Injectable()
export class NetworkVolumesService {
  constructor(
    private readonly volumes: NetworkVolumesRepository,
    private readonly pods: PodsRepository,
    private readonly catalogue: CatalogueService,
    private readonly compute: ComputeProvider,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async create(ownerId: string, input: NetworkVolumeCreateDto): Promise<NetworkVolume> {
    const centers = dataCenterIds(this.catalogue.get());
    if (!centers.includes(input.dataCenterId)) {
      throw RunplaneError.badRequest(
        `dataCenterId "${input.dataCenterId}" is not a data center of this installation (${centers.join(', ')})`,
        [{ path: 'dataCenterId', message: `must be one of ${centers.join(', ')}` }],
      );
    }
    for (;;) {
      const row = await this.volumes.insert({
        id: volumeId(),
        ownerId,
        name: input.name,
        size: input.size,
        dataCenterId: input.dataCenterId,
      });
      if (row) return view(row);
    }
  }

  async list(ownerId: string): Promise<NetworkVolume[]> {
    return (await this.volumes.listOwned(ownerId)).map(view);
  }

  async get(ownerId: string, id: string): Promise<NetworkVolume> {
    return view(await this.owned(ownerId, id));
  }

  /** A new name, or a larger size: a volume never shrinks (its data would not fit). */
  async update(ownerId: string, id: string, input: NetworkVolumeUpdateDto): Promise<NetworkVolume> {
    const current = await this.owned(ownerId, id);
    if (input.size !== undefined && input.size < current.size) {
      throw RunplaneError.badRequest(
        `a network volume cannot shrink: size must be at least ${current.size} (GB)`,
        [{ path: 'size', message: `must not be less than the current size, ${current.size}` }],
      );
    }
    const row = await this.volumes.updateOwned(ownerId, id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.size !== undefined ? { size: input.size } : {}),
    });
    return view(row ?? notFound(id));
  }

  /** Refused while a Pod (running or stopped) still uses it: its data would vanish under it. */
  async delete(ownerId: string, id: string): Promise<void> {
    await this.owned(ownerId, id);
    const users = await this.pods.idsUsingNetworkVolume(id);
    if (users.length) {
      throw RunplaneError.conflict(
        `network volume ${id} is used by pod ${users.slice(0, 5).join(', ')}${users.length > 5 ? ' and others' : ''}: delete those pods first`,
        'NETWORK_VOLUME_IN_USE',
      );
    }
    if (!(await this.volumes.deleteOwned(ownerId, id))) notFound(id);
    // The data goes with the record; if the provider fails, the record is gone anyway (logged).
    await this.compute
      .deleteNetworkVolume(claimOf(id))
      .catch((err: unknown) =>
        this.logger.error(
          { networkVolumeId: id, err: String(err) },
          'could not delete the storage of a network volume',
        ),
      );
  }

  /** The volume `id` as `ownerId` may mount it, or undefined. */
  async mountable(ownerId: string, id: string): Promise<MountableVolume | undefined> {
    const own = await this.volumes.findOwned(ownerId, id);
    if (own) return { ...view(own), claimName: claimOf(own.id), sizeInGb: own.size };
    const catalogue = this.catalogue.get();
    const shared = catalogue.networkVolumes.find((v) => v.id === id);
    if (!shared) return undefined;
    return {
      id: shared.id,
      name: shared.name,
      size: shared.size,
      dataCenterId: shared.dataCenterId ?? catalogue.defaults.dataCenterId,
      claimName: shared.claimName ?? shared.id,
    };
  }

  private async owned(ownerId: string, id: string): Promise<NetworkVolumeRow> {
    return (await this.volumes.findOwned(ownerId, id)) ?? notFound(id);
  }
}

const claimOf = (id: string) => `nv-${id}`;

function view(row: NetworkVolumeRow): NetworkVolume {
  return { id: row.id, name: row.name, size: row.size, dataCenterId: row.dataCenterId };
}

function notFound(id: string): never {
  throw RunplaneError.notFound(`network volume ${id} not found`, 'NETWORK_VOLUME_NOT_FOUND');
}

/** RunPod-style id: 10 lowercase letters and digits (also valid in a Kubernetes name). */
function volumeId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let id = '';
  while (id.length < 10)
    for (const b of randomBytes(12)) if (b < 252 && id.length < 10) id += alphabet[b % 36];
  return id;
}
