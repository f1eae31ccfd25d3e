import { IsNotEmpty, IsOptional, IsString } from 'class-validator';

/** `pending`: attempts left (or in progress); `delivered`: a 2xx was received; `failed`: every attempt failed. */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One HTTP attempt of a delivery, as recorded by webhook-sender. */
export interface WebhookAttemptView {
  attempt: number;
  /** HTTP status of the answer; null when there was none (refused, timed out, unreachable). */
  statusCode: number | null;
  latencyMs: number;
  /** Why it failed. The receiver's answer is never recorded beyond its status code. */
  error: string | null;
  createdAt: string;
}

/** A job webhook and every attempt made for it (`GET /v1/webhooks/deliveries`). */
export interface WebhookDeliveryView {
  /** The `webhook-id` header: the same for every attempt and redelivery. */
  id: string;
  jobId: string;
  endpointId: string;
  /** Final job state that triggered it: COMPLETED, FAILED, CANCELLED or TIMED_OUT. */
  event: string;
  url: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
  attempts: WebhookAttemptView[];
}

export class ListWebhookDeliveriesQuery {
  @IsOptional() @IsString() @IsNotEmpty() jobId?: string;
}
