import { IsIn, IsNotEmpty, IsString } from 'class-validator';
import { defineEvent, defineRpc } from './definitions.js';

export const WEBHOOK_JOB_STATES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;

/**
 * A job with a `webhook` reached a final state. Written by the scheduler in the transaction of the
 * state change (outbox), so it exists exactly when the change does. It carries everything the call
 * needs: the job may have been retried, or its results dropped, by the time it is delivered.
 */
export class JobFinishedEvent {
  @IsString() @IsNotEmpty() jobId!: string;
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsString() @IsNotEmpty() ownerId!: string;
  @IsIn(WEBHOOK_JOB_STATES) status!: (typeof WEBHOOK_JOB_STATES)[number];
  @IsString() @IsNotEmpty() webhook!: string;
  /**
   * The webhook body exactly as it is sent (the `/status` object plus `input` and
   * `webhook`), as JSON text: kept byte for byte (key order, escapes) and signed as is.
   */
  @IsString() body!: string;
}

export const JobEvents = {
  /** The event id is the delivery's `webhook-id`. */
  finished: defineEvent<JobFinishedEvent>({
    name: 'job.finished',
    version: 1,
    producer: 'scheduler',
    consumers: ['webhook-sender'],
    payloadType: JobFinishedEvent,
  }),
} as const;

export class SigningSecretRequest {
  @IsString() @IsNotEmpty() userId!: string;
}

export interface SigningSecretResponse {
  /** `whsec_<base64>`; created on first use. Only webhook-sender asks, to sign and to show its owner. */
  secret: string;
}

/** The vault keeps each account's webhook signing secret (a separate RPC from API keys and template secrets). */
export const WebhookVaultRpc = {
  signingSecret: defineRpc<SigningSecretRequest, SigningSecretResponse>(
    'secrets-vault',
    'webhooks.signing-secret',
    SigningSecretRequest,
  ),
} as const;
