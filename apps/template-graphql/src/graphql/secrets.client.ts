import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { VaultRpc, type Ack, type Secret, type SecretCreateDto } from '@runplane/contracts';

/** Secrets belong to secrets-vault; GraphQL only carries them there (the value goes in, never comes back). */
@Injectable()
export class SecretsClient {
  constructor(private readonly bus: Bus) {}

  create(ownerId: string, secret: SecretCreateDto): Promise<Secret> {
    return this.bus.request(VaultRpc.createSecret, { ownerId, secret });
  }

  list(ownerId: string): Promise<Secret[]> {
    return this.bus.request(VaultRpc.listSecrets, { ownerId });
  }

  delete(ownerId: string, secretId: string): Promise<Ack> {
    return this.bus.request(VaultRpc.deleteSecret, { ownerId, secretId });
  }
}
