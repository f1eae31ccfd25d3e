import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { secretNamesIn, VaultRpc } from '@runplane/contracts';

/**
 * `{{ RUNPOD_SECRET_<name> }}` references of a template env, resolved by secrets-vault at the last
 * moment: only for the workload's own environment. The result is handed to the
 * compute provider and nowhere else: never stored on the Pod, logged or returned.
 */
@Injectable()
export class SecretEnv {
  constructor(private readonly bus: Bus) {}

  /** The env ready to run; unchanged (and no vault call) when it references no secret. */
  async resolve(ownerId: string, env: Record<string, string>): Promise<Record<string, string>> {
    if (!secretNamesIn(env).length) return env;
    return (
      await this.bus.request(VaultRpc.resolveSecrets, { ownerId, env }, { timeoutMs: 10_000 })
    ).env;
  }
}
