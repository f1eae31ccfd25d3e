import { Inject, Injectable } from '@nestjs/common';
import {
  RunplaneError,
  secretNamesIn,
  substituteSecrets,
  type Ack,
  type ResolveSecretsResponse,
  type Secret,
  type SecretCreateDto,
} from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { randomBytes } from 'node:crypto';
import { MasterKeyring } from '../crypto/master-keyring.js';
import {
  NAME_TAKEN,
  NO_SUCH_USER,
  secretAad,
  SecretsRepository,
  type SecretRow,
} from './secrets.repository.js';

/** Binds a ciphertext to its row: moving it to another secret or owner makes it unreadable. */

const view = (row: SecretRow): Secret => ({
  id: row.id,
  name: row.name,
  description: row.description,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/**
 * Users' secrets. Values go in once (create) and come out only for the compute path
 * (`resolve`, when a worker or Pod starts); every other answer is the value-less view.
 */
@Injectable()
export class SecretsService {
  constructor(
    private readonly secrets: SecretsRepository,
    private readonly keyring: MasterKeyring,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async create(ownerId: string, input: SecretCreateDto): Promise<Secret> {
    const id = `sec_${randomBytes(12).toString('hex')}`;
    const sealed = this.keyring.seal(input.value, secretAad({ id, ownerId }));
    const row = await this.secrets.create({
      id,
      ownerId,
      name: input.name,
      description: input.description ?? null,
      ...sealed,
    });
    if (row === NAME_TAKEN)
      throw RunplaneError.conflict(
        `a secret named "${input.name}" already exists`,
        'SECRET_NAME_TAKEN',
      );
    if (row === NO_SUCH_USER)
      throw RunplaneError.notFound(`user ${ownerId} not found`, 'USER_NOT_FOUND');
    return view(row);
  }

  async list(ownerId: string): Promise<Secret[]> {
    return (await this.secrets.listOwned(ownerId)).map(view);
  }

  async delete(ownerId: string, id: string): Promise<Ack> {
    if (!(await this.secrets.deleteOwned(ownerId, id)))
      throw RunplaneError.notFound(`secret ${id} not found`, 'SECRET_NOT_FOUND');
    return { ok: true };
  }

  /**
   * The env with its `{{ RUNPOD_SECRET_<name> }}` references replaced by the owner's values. A
   * reference to a secret the owner does not have fails the whole start (400), naming the secret
   * and the variable; nothing about any value is in the message.
   */
  async resolve(ownerId: string, env: Record<string, string>): Promise<ResolveSecretsResponse> {
    const names = secretNamesIn(env);
    if (!names.length) return { env };
    const rows = await this.secrets.findByNames(ownerId, names);
    const missing = names.filter((n) => !rows.some((r) => r.name === n));
    if (missing.length) {
      const where = Object.entries(env)
        .filter(([, v]) => missing.some((n) => secretNamesIn({ v }).includes(n)))
        .map(([k]) => k);
      throw new RunplaneError(
        400,
        `the template env references secret${missing.length > 1 ? 's' : ''} that do${missing.length > 1 ? '' : 'es'} not exist: ` +
          `${missing.map((n) => `"${n}"`).join(', ')} (in ${where.join(', ')}); create ${missing.length > 1 ? 'them' : 'it'} with secretCreate`,
        missing.map((n) => ({
          path: `env.RUNPOD_SECRET_${n}`,
          message: `secret "${n}" does not exist`,
        })),
        'SECRET_NOT_FOUND',
      );
    }
    const values: Record<string, string> = {};
    for (const row of rows) values[row.name] = this.keyring.open(row, secretAad(row));
    return { env: substituteSecrets(env, values) };
  }
}
