import { Injectable } from '@nestjs/common';
import {
  RunplaneError,
  type JobFinishedEvent,
  type WebhookDeliveryView,
} from '@runplane/contracts';
import { WebhookSettings } from '../settings.js';
import { SigningSecrets } from '../signing/signing-secrets.js';
import {
  DeliveriesRepository,
  type DeliveryRow,
  type DeliveryWithAttempts,
} from './deliveries.repository.js';
import { Dispatcher } from './dispatcher.service.js';

const LIST_LIMIT = 100;

/** Job webhooks: accepted from the scheduler's events, listed and redelivered for their owner. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly dispatcher: Dispatcher,
    private readonly secrets: SigningSecrets,
    private readonly settings: WebhookSettings,
  ) {}

  /**
   * Records the delivery of a `job.finished` event (its id becomes the `webhook-id`). The event
   * is acknowledged only after this commits, so a crash before loses nothing (the bus redelivers)
   * and a redelivery after creates nothing. With a slot free it is created leased to this
   * instance and its first attempt starts at once.
   */
  async accept(event: JobFinishedEvent, eventId: string): Promise<void> {
    const host = hostOf(event.webhook);
    const leasedUntil = this.dispatcher.reserve(host);
    let created: DeliveryRow | null;
    try {
      created = await this.deliveries.create(
        {
          id: eventId,
          jobId: event.jobId,
          endpointId: event.endpointId,
          ownerId: event.ownerId,
          event: event.status,
          url: event.webhook,
          host,
          body: event.body,
          maxAttempts: this.settings.maxAttempts,
        },
        new Date(),
        leasedUntil,
      );
    } catch (err) {
      if (leasedUntil) this.dispatcher.releaseReserved(host);
      throw err;
    }
    if (!leasedUntil) {
      if (created) this.dispatcher.kick();
    } else if (created) this.dispatcher.startReserved(created);
    else this.dispatcher.releaseReserved(host);
  }

  async list(ownerId: string, jobId?: string): Promise<WebhookDeliveryView[]> {
    return (await this.deliveries.listForOwner(ownerId, jobId, LIST_LIMIT)).map(toView);
  }

  async get(ownerId: string, id: string): Promise<WebhookDeliveryView> {
    const row = await this.deliveries.findForOwner(ownerId, id);
    if (!row) throw notFound(id);
    return toView(row);
  }

  /** Sends it again now, with the same webhook-id and a fresh set of attempts. */
  async redeliver(ownerId: string, id: string): Promise<WebhookDeliveryView> {
    if (!(await this.deliveries.redeliver(ownerId, id, this.settings.maxAttempts, new Date())))
      throw notFound(id);
    this.dispatcher.kick();
    return this.get(ownerId, id);
  }

  /** The caller's signing secret, to verify webhooks (`verifyWebhook` in @runplane/contracts). */
  async signingSecret(ownerId: string): Promise<{ key: string }> {
    return { key: await this.secrets.forOwner(ownerId) };
  }
}

function notFound(id: string): RunplaneError {
  return RunplaneError.notFound(`webhook delivery ${id} not found`, 'WEBHOOK_DELIVERY_NOT_FOUND');
}

/** Host (and port) of a URL; an unparsable one gets its own bucket (its attempt fails at once). */
function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase() || url;
  } catch {
    return url.slice(0, 200);
  }
}

function toView(row: DeliveryWithAttempts): WebhookDeliveryView {
  return {
    id: row.id,
    jobId: row.jobId,
    endpointId: row.endpointId,
    event: row.event,
    url: row.url,
    status: row.status as WebhookDeliveryView['status'],
    attemptCount: row.attemptCount,
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    attempts: row.attempts.map((a) => ({
      attempt: a.attempt,
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      error: a.error,
      createdAt: a.createdAt.toISOString(),
    })),
  };
}
