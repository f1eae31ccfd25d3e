import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  KeepWorkerKeysRequest,
  MintWorkerKeyRequest,
  RetireWorkerKeysRequest,
  VaultRpc,
  VerifyApiKeyRequest,
} from '@runplane/contracts';
import { ApiKeysService } from './apikeys.service.js';

@Controller()
export class ApiKeysBusController {
  constructor(private readonly keys: ApiKeysService) {}

  /** Every HTTP-facing service resolves presented keys here (by hash; cached briefly there). */
  @OnRpc(VaultRpc.verifyApiKey)
  verify(@Payload() request: VerifyApiKeyRequest) {
    return this.keys.verify(request.keyHash);
  }

  /** Minted for each managed worker when it is started (its RUNPOD_AI_API_KEY). */
  @OnRpc(VaultRpc.mintWorkerKey)
  mintWorkerKey(@Payload() request: MintWorkerKeyRequest) {
    return this.keys.mintWorkerKey(request);
  }

  /** The scheduler retires the key of each managed worker that ended. */
  @OnRpc(VaultRpc.retireWorkerKeys)
  retireWorkerKeys(@Payload() request: RetireWorkerKeysRequest) {
    return this.keys.retireWorkerKeys(request.workerIds);
  }

  /** The scheduler's reconciliation: every managed worker's key whose worker is gone is retired. */
  @OnRpc(VaultRpc.keepWorkerKeys)
  keepWorkerKeys(@Payload() request: KeepWorkerKeysRequest) {
    return this.keys.keepWorkerKeys(request.liveWorkerIds, new Date(request.mintedBefore));
  }
}
