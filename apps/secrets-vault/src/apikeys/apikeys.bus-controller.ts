import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { MintWorkerKeyRequest, VaultRpc, VerifyApiKeyRequest } from '@runplane/contracts';
import { ApiKeysService } from './apikeys.service.js';

@Controller()
export class ApiKeysBusController {
  constructor(private readonly keys: ApiKeysService) {}

  /** Every HTTP-facing service resolves presented keys here (by hash; cached briefly there). */
  @OnRpc(VaultRpc.verifyApiKey)
  verify(@Payload() request: VerifyApiKeyRequest) {
    return this.keys.verify(request.keyHash);
  }

  /** Minted for each managed worker when it is started (its RUNPOD_AI_API_KEY, contract §4). */
  @OnRpc(VaultRpc.mintWorkerKey)
  mintWorkerKey(@Payload() request: MintWorkerKeyRequest) {
    return this.keys.mintWorkerKey(request);
  }
}
