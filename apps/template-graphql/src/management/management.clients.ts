import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  PodApiRpc,
  SchedulerRpc,
  UserRpc,
  VaultRpc,
  type Ack,
  type ContainerRegistryAuth,
  type ContainerRegistryAuthCreateDto,
  type ContainerRegistryCredentialsDto,
  type Endpoint,
  type EndpointCreateDto,
  type EndpointUpdateDto,
  type ListPodsRequest,
  type Pod,
  type PodCreateDto,
  type Principal,
} from '@runplane/contracts';

/** The caller, as the Pod RPCs carry it (nothing but the principal's own fields). */
const principalOf = (p: Principal): Principal => ({
  userId: p.userId,
  keyId: p.keyId,
  scope: p.scope,
  endpointId: p.endpointId ?? null,
});

/**
 * GraphQL's doors to operations other services own: Pods, the catalogue and network volumes
 * (pod-rest), endpoints (scheduler), users (secrets-vault). No rule of theirs is repeated here.
 */
@Injectable()
export class PodsClient {
  constructor(private readonly bus: Bus) {}

  create(principal: Principal, pod: PodCreateDto): Promise<Pod> {
    return this.bus.request(PodApiRpc.createPod, { principal: principalOf(principal), pod });
  }

  list(principal: Principal, options: Omit<ListPodsRequest, 'principal'> = {}): Promise<Pod[]> {
    return this.bus.request(PodApiRpc.listPods, { principal: principalOf(principal), ...options });
  }

  get(
    principal: Principal,
    podId: string,
    include: { includeMachine?: boolean; includeNetworkVolume?: boolean } = {},
  ): Promise<Pod> {
    return this.bus.request(PodApiRpc.getPod, {
      principal: principalOf(principal),
      podId,
      includeWorkers: true,
      ...include,
    });
  }

  start(principal: Principal, podId: string): Promise<Pod> {
    return this.bus.request(PodApiRpc.startPod, { principal: principalOf(principal), podId });
  }

  stop(principal: Principal, podId: string): Promise<Pod> {
    return this.bus.request(PodApiRpc.stopPod, { principal: principalOf(principal), podId });
  }

  async delete(principal: Principal, podId: string): Promise<void> {
    await this.bus.request(PodApiRpc.deletePod, { principal: principalOf(principal), podId });
  }
}

@Injectable()
export class CatalogueClient {
  constructor(private readonly bus: Bus) {}

  gpuTypes(ids?: string[]) {
    return this.bus.request(PodApiRpc.gpuTypes, ids ? { ids } : {});
  }

  lowestPrice(gpuTypeId: string, gpuCount: number, secureCloud?: boolean) {
    return this.bus.request(PodApiRpc.lowestPrice, { gpuTypeId, gpuCount, secureCloud });
  }

  dataCenters() {
    return this.bus.request(PodApiRpc.dataCenters, {});
  }

  networkVolumes(ownerId: string) {
    return this.bus.request(PodApiRpc.listNetworkVolumes, { ownerId });
  }
}

@Injectable()
export class EndpointsClient {
  constructor(private readonly bus: Bus) {}

  create(ownerId: string, endpoint: EndpointCreateDto): Promise<Endpoint> {
    return this.bus.request(SchedulerRpc.createEndpoint, { ownerId, endpoint });
  }

  list(ownerId: string): Promise<Endpoint[]> {
    return this.bus.request(SchedulerRpc.listEndpoints, { ownerId });
  }

  update(ownerId: string, endpointId: string, changes: EndpointUpdateDto): Promise<Endpoint> {
    return this.bus.request(SchedulerRpc.updateEndpoint, { ownerId, endpointId, changes });
  }

  async delete(ownerId: string, endpointId: string): Promise<void> {
    await this.bus.request(SchedulerRpc.deleteEndpoint, { ownerId, endpointId });
  }
}

@Injectable()
export class UsersClient {
  constructor(private readonly bus: Bus) {}

  get(userId: string) {
    return this.bus.request(UserRpc.get, { userId });
  }

  setPubKey(userId: string, pubKey: string) {
    return this.bus.request(UserRpc.updateSettings, { userId, pubKey });
  }
}

/** Container registry auths belong to secrets-vault: credentials go in and never come back. */
@Injectable()
export class RegistryAuthsClient {
  constructor(private readonly bus: Bus) {}

  create(ownerId: string, auth: ContainerRegistryAuthCreateDto): Promise<ContainerRegistryAuth> {
    return this.bus.request(VaultRpc.createRegistryAuth, { ownerId, auth });
  }

  list(ownerId: string): Promise<ContainerRegistryAuth[]> {
    return this.bus.request(VaultRpc.listRegistryAuths, { ownerId });
  }

  update(
    ownerId: string,
    registryAuthId: string,
    credentials: ContainerRegistryCredentialsDto,
  ): Promise<ContainerRegistryAuth> {
    return this.bus.request(VaultRpc.updateRegistryAuth, { ownerId, registryAuthId, credentials });
  }

  delete(ownerId: string, registryAuthId: string): Promise<Ack> {
    return this.bus.request(VaultRpc.deleteRegistryAuth, { ownerId, registryAuthId });
  }
}
