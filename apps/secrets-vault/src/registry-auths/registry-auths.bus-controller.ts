import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  CreateRegistryAuthRequest,
  OwnedRequest,
  RegistryAuthScopedRequest,
  UpdateRegistryAuthRequest,
  VaultRpc,
} from '@runplane/contracts';
import { RegistryAuthsService } from './registry-auths.service.js';

/** Registry auths as template-graphql asks for them (saveRegistryAuth, updateRegistryAuth, deleteRegistryAuth, myself), and their credentials for pod-rest's image pulls. */
@Controller()
export class RegistryAuthsBusController {
  constructor(private readonly auths: RegistryAuthsService) {}

  @OnRpc(VaultRpc.createRegistryAuth)
  create(@Payload() request: CreateRegistryAuthRequest) {
    return this.auths.create(request.ownerId, request.auth);
  }

  @OnRpc(VaultRpc.listRegistryAuths)
  list(@Payload() request: OwnedRequest) {
    return this.auths.list(request.ownerId);
  }

  @OnRpc(VaultRpc.updateRegistryAuth)
  update(@Payload() request: UpdateRegistryAuthRequest) {
    return this.auths.update(request.ownerId, request.registryAuthId, request.credentials);
  }

  /** pod-rest's pull of a private image: the only place the credentials are opened. */
  @OnRpc(VaultRpc.resolveRegistryAuth)
  resolve(@Payload() request: RegistryAuthScopedRequest) {
    return this.auths.resolve(request.ownerId, request.registryAuthId);
  }

  @OnRpc(VaultRpc.deleteRegistryAuth)
  delete(@Payload() request: RegistryAuthScopedRequest) {
    return this.auths.delete(request.ownerId, request.registryAuthId);
  }
}
