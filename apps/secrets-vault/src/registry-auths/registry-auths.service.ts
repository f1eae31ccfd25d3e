import { Injectable } from '@nestjs/common';
import {
  RunplaneError,
  type Ack,
  type ContainerRegistryAuth,
  type ContainerRegistryAuthCreateDto,
  type ContainerRegistryCredentialsDto,
  type RegistryCredentials,
} from '@runplane/contracts';
import { randomBytes } from 'node:crypto';
import { MasterKeyring } from '../crypto/master-keyring.js';
import {
  NAME_TAKEN,
  NO_SUCH_USER,
  registryAuthAad,
  RegistryAuthsRepository,
  type RegistryAuthRow,
} from './registry-auths.repository.js';

const view = (row: RegistryAuthRow): ContainerRegistryAuth => ({ id: row.id, name: row.name });

const notFound = (id: string) =>
  RunplaneError.notFound(`container registry auth ${id} not found`, 'REGISTRY_AUTH_NOT_FOUND');

/**
 * Users' container registry credentials. They go in (create, update) and are only ever shown as
 * `{id, name}`; the username and password are sealed together like secret values.
 */
@Injectable()
export class RegistryAuthsService {
  constructor(
    private readonly auths: RegistryAuthsRepository,
    private readonly keyring: MasterKeyring,
  ) {}

  async create(
    ownerId: string,
    input: ContainerRegistryAuthCreateDto,
  ): Promise<ContainerRegistryAuth> {
    const id = `cra_${randomBytes(12).toString('hex')}`;
    const row = await this.auths.create({
      id,
      ownerId,
      name: input.name,
      ...this.seal({ id, ownerId }, input),
    });
    if (row === NAME_TAKEN)
      throw RunplaneError.conflict(
        `a container registry auth named "${input.name}" already exists`,
        'REGISTRY_AUTH_NAME_TAKEN',
      );
    if (row === NO_SUCH_USER)
      throw RunplaneError.notFound(`user ${ownerId} not found`, 'USER_NOT_FOUND');
    return view(row);
  }

  async list(ownerId: string): Promise<ContainerRegistryAuth[]> {
    return (await this.auths.listOwned(ownerId)).map(view);
  }

  async get(ownerId: string, id: string): Promise<ContainerRegistryAuth> {
    const row = await this.auths.findOwned(ownerId, id);
    if (!row) throw notFound(id);
    return view(row);
  }

  async update(
    ownerId: string,
    id: string,
    credentials: ContainerRegistryCredentialsDto,
  ): Promise<ContainerRegistryAuth> {
    const row = await this.auths.reseal(ownerId, id, this.seal({ id, ownerId }, credentials));
    if (!row) throw notFound(id);
    return view(row);
  }

  /** The credentials, opened: for an image pull only (bus rpc registry-auths.resolve, never HTTP). */
  async resolve(ownerId: string, id: string): Promise<RegistryCredentials> {
    const row = await this.auths.findOwned(ownerId, id);
    if (!row) throw notFound(id);
    const { username, password } = JSON.parse(
      this.keyring.open(row, registryAuthAad(row)),
    ) as RegistryCredentials;
    return { username, password };
  }

  async delete(ownerId: string, id: string): Promise<Ack> {
    if (!(await this.auths.deleteOwned(ownerId, id))) throw notFound(id);
    return { ok: true };
  }

  private seal(row: Pick<RegistryAuthRow, 'id' | 'ownerId'>, c: ContainerRegistryCredentialsDto) {
    const plain = JSON.stringify({ username: c.username, password: c.password });
    return this.keyring.seal(plain, registryAuthAad(row));
  }
}
