import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { SigningSecretRequest, WebhookVaultRpc } from '@runplane/contracts';
import { WebhookSigningService } from './webhook-signing.service.js';

/** `secrets-vault.webhooks.signing-secret`, asked by webhook-sender (to sign, and to show the owner). */
@Controller()
export class WebhookSigningBusController {
  constructor(private readonly signing: WebhookSigningService) {}

  @OnRpc(WebhookVaultRpc.signingSecret)
  signingSecret(@Payload() request: SigningSecretRequest) {
    return this.signing.signingSecret(request.userId);
  }
}
