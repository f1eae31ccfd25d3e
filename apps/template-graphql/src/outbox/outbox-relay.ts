import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { TemplateEvents, type EventDefinition } from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { OutboxRepository, type OutboxRow } from './outbox.repository.js';

/** Events this service announces through its outbox, by subject. */
const RELAYED: ReadonlyMap<string, EventDefinition<unknown>> = new Map(
  [TemplateEvents.updated].map((def) => [def.subject, def as EventDefinition<unknown>]),
);

/**
 * Publishes the outbox. The writer publishes its own event right after the commit (`publishNow`,
 * on a row it inserted already leased to itself, so the loop leaves it alone); the loop, every few
 * seconds, publishes whatever a crash or a failed publish left behind once its lease ran out.
 * Delivery is at-least-once: dying after publishing but before deleting the row publishes it again
 * later with the same event id, which the bus drops inside its duplicate window and consumers
 * de-duplicate on beyond it.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnModuleDestroy {
  static readonly INTERVAL_MS = 5000;
  /** How long a claimed row is this relay's; a relay that crashed loses it after this. */
  static readonly LEASE_MS = 15_000;
  private static readonly BATCH = 50;

  private timer?: NodeJS.Timeout;
  private draining?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), OutboxRelay.INTERVAL_MS);
    this.timer.unref();
    this.kick(); // whatever the last run left unpublished
  }

  /** Stops the loop and lets a pass in progress finish (the bus is closed only after the app). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.draining;
  }

  /** A row `leaseFor()` already leased to this caller: publish it now; on failure the loop retries it later. */
  async publishNow(row: Pick<OutboxRow, 'id' | 'subject' | 'payload' | 'attempts'>): Promise<void> {
    try {
      await this.publish(row);
    } catch (err) {
      // The change is committed and the row is kept: never fail the caller for this.
      this.logger.warn({ err, eventId: row.id }, 'finishing an outbox event failed; the relay will see to it');
    }
  }

  /** The lease a writer gives the row it inserts for `publishNow`. */
  static leaseFor(now = Date.now()): Date {
    return new Date(now + OutboxRelay.LEASE_MS);
  }

  /** Starts a pass now; calls during a pass schedule one more. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err) => this.logger.error({ err }, 'outbox relay pass failed; retrying on the next tick'))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const now = Date.now();
      const rows = await this.outbox.claim(OutboxRelay.BATCH, new Date(now), new Date(now + OutboxRelay.LEASE_MS));
      if (!rows.length || this.stopped) return;
      for (const row of rows) await this.publish(row);
      if (rows.length < OutboxRelay.BATCH) return;
    }
  }

  private async publish(row: Pick<OutboxRow, 'id' | 'subject' | 'payload' | 'attempts'>): Promise<void> {
    const def = RELAYED.get(row.subject);
    if (!def) {
      // Written by a newer version of this service: leave it to that version (the lease defers it).
      this.logger.error({ eventId: row.id, subject: row.subject }, 'outbox holds an event this version cannot publish');
      return;
    }
    try {
      await this.bus.publish(def, row.payload, { id: row.id });
    } catch (err) {
      // Left leased: the lease running out is the retry delay.
      this.logger.warn({ err, eventId: row.id, subject: row.subject, attempts: row.attempts }, 'publishing an outbox event failed; will retry');
      return;
    }
    await this.outbox.remove(row.id);
  }
}
