import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  CreateSecretRequest,
  OwnedRequest,
  ResolveSecretsRequest,
  SecretScopedRequest,
  VaultRpc,
} from '@runplane/contracts';
import { SecretsService } from './secrets.service.js';

/** Secrets as template-graphql (GraphQL secretCreate/secretDelete/myself.secrets) and pod-rest (worker start) ask for them. */
@Controller()
export class SecretsBusController {
  constructor(private readonly secrets: SecretsService) {}

  @OnRpc(VaultRpc.createSecret)
  create(@Payload() request: CreateSecretRequest) {
    return this.secrets.create(request.ownerId, request.secret);
  }

  @OnRpc(VaultRpc.listSecrets)
  list(@Payload() request: OwnedRequest) {
    return this.secrets.list(request.ownerId);
  }

  @OnRpc(VaultRpc.deleteSecret)
  delete(@Payload() request: SecretScopedRequest) {
    return this.secrets.delete(request.ownerId, request.secretId);
  }

  @OnRpc(VaultRpc.resolveSecrets)
  resolve(@Payload() request: ResolveSecretsRequest) {
    return this.secrets.resolve(request.ownerId, request.env);
  }
}
