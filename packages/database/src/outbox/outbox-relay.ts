import type {
  FactoryProvider,
  InjectionToken,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Bus, type BusLogger } from '@runplane/bus';
import type { EventDefinition, ServiceName } from '@runplane/contracts';
import { randomUUID } from 'node:crypto';
import { DatabaseTargets } from '../database.module.js';
import { DirectSql } from '../direct-sql.js';
import type { PrismaClientClass, PrismaClientLike } from '../prisma-client.js';
import { OutboxStore, type NewOutboxRow, type OutboxEntry } from './outbox-store.js';

export interface OutboxRelayOptions {
  store: OutboxStore;
  bus: Bus;
  /** The events this service announces through its outbox. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- events of any payload type
  events: ReadonlyArray<EventDefinition<any>>;
  logger: BusLogger;
  /** How often leftovers are looked for (default 5 s). */
  intervalMs?: number;
}

/**
 * The transactional outbox of a service: an event is inserted in the transaction of the change it
 * announces, so it exists exactly when the change does, and is published from there.
 *
 * The writer publishes its own rows right after the commit (`publishNow`, on rows it inserted
 * already leased to itself, so the loop leaves them alone); the loop, every few seconds and at
 * start, publishes whatever a crash or a failed publish left behind once its lease ran out.
 * Delivery is at-least-once: dying after publishing but before deleting the rows publishes them
 * again with the same event id, which the bus drops inside its duplicate window and consumers
 * de-duplicate on beyond it.
 */
export class OutboxRelay implements OnApplicationBootstrap, OnModuleDestroy {
  static readonly INTERVAL_MS = 5000;
  /** How long a claimed row is its claimer's; a relay that crashed loses it after this. */
  static readonly LEASE_MS = 15_000;
  private static readonly BATCH = 50;

  private readonly events: ReadonlyMap<string, EventDefinition<unknown>>;
  private readonly inflight = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  private draining?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(private readonly options: OutboxRelayOptions) {
    this.events = new Map(
      options.events.map((def) => [def.subject, def as EventDefinition<unknown>]),
    );
  }

  get store(): OutboxStore {
    return this.options.store;
  }

  /**
   * The row announcing `payload` as `event`, to insert in the writer's transaction. Leased to the
   * writer (default), which then calls `publishNow` with it; or unleased (`leased: false`), for
   * the relay's next pass, which the writer starts with `kick()` after the commit (bulk changes).
   */
  static entry<T extends object>(
    event: EventDefinition<T>,
    payload: T,
    options: { id?: string; leased?: boolean; now?: number } = {},
  ): NewOutboxRow {
    const leased = options.leased ?? true;
    return {
      id: options.id ?? randomUUID(),
      subject: event.subject,
      payload: { ...payload },
      claimedUntil: leased ? new Date((options.now ?? Date.now()) + OutboxRelay.LEASE_MS) : null,
      attempts: leased ? 1 : 0,
    };
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), this.options.intervalMs ?? OutboxRelay.INTERVAL_MS);
    this.timer.unref();
    this.kick(); // whatever the last run left unpublished
  }

  /** Stops the loop and lets publishes in progress finish (the bus is closed only after the app). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.draining;
    await Promise.allSettled([...this.inflight]);
  }

  /**
   * Publishes rows the caller inserted (leased to it) and deletes them. Never throws: the change is
   * committed and a row that could not be published waits for the loop.
   */
  async publishNow(
    rows:
      | Pick<OutboxEntry, 'id' | 'subject' | 'payload' | 'attempts'>
      | ReadonlyArray<Pick<OutboxEntry, 'id' | 'subject' | 'payload' | 'attempts'>>,
  ): Promise<void> {
    const list = Array.isArray(rows) ? rows : [rows as OutboxEntry];
    const run = (async () => {
      try {
        await this.publishAll(list);
      } catch (err) {
        this.options.logger.warn(
          { err: String(err), eventIds: list.map((r) => r.id) },
          'finishing outbox events failed; the relay will see to them',
        );
      }
    })();
    this.inflight.add(run);
    try {
      await run;
    } finally {
      this.inflight.delete(run);
    }
  }

  /** Starts a pass now; calls during a pass schedule one more. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err) =>
        this.options.logger.error(
          { err: String(err) },
          'outbox relay pass failed; retrying on the next tick',
        ),
      )
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
      const rows = await this.options.store.claim(
        OutboxRelay.BATCH,
        new Date(now),
        new Date(now + OutboxRelay.LEASE_MS),
      );
      if (!rows.length || this.stopped) return;
      await this.publishAll(rows);
      if (rows.length < OutboxRelay.BATCH) return;
    }
  }

  /** Publishes the rows in order, then deletes those published in one statement. */
  private async publishAll(
    rows: ReadonlyArray<Pick<OutboxEntry, 'id' | 'subject' | 'payload' | 'attempts'>>,
  ): Promise<void> {
    const published: string[] = [];
    for (const row of rows) if (await this.publish(row)) published.push(row.id);
    if (published.length) await this.options.store.remove(published);
  }

  /** True when published; otherwise the row stays leased (its lease's end is the retry delay). */
  private async publish(
    row: Pick<OutboxEntry, 'id' | 'subject' | 'payload' | 'attempts'>,
  ): Promise<boolean> {
    const def = this.events.get(row.subject);
    if (!def) {
      // Written by a newer version of this service: leave it to that version (the lease defers it).
      this.options.logger.error(
        { eventId: row.id, subject: row.subject },
        'outbox holds an event this version cannot publish',
      );
      return false;
    }
    try {
      await this.options.bus.publish(def, row.payload, { id: row.id });
      return true;
    } catch (err) {
      this.options.logger.warn(
        { err: String(err), eventId: row.id, subject: row.subject, attempts: row.attempts },
        'publishing an outbox event failed; will retry',
      );
      return false;
    }
  }
}

/**
 * The Nest provider of a service's relay: `providers: [outboxRelayProvider({service, client, events, logger: LOGGER})]`,
 * then inject `OutboxRelay`. The service's schema needs the `OutboxEvent` table (docs/database.md).
 */
export function outboxRelayProvider<T extends PrismaClientLike>(options: {
  service: ServiceName;
  client: PrismaClientClass<T>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- events of any payload type
  events: ReadonlyArray<EventDefinition<any>>;
  /** Injection token of a pino-style logger (the platform's LOGGER). */
  logger: InjectionToken;
  intervalMs?: number;
}): FactoryProvider<OutboxRelay> {
  return {
    provide: OutboxRelay,
    inject: [options.client, DatabaseTargets, DirectSql, Bus, options.logger],
    useFactory: (db: T, targets: DatabaseTargets, direct: DirectSql, bus: Bus, logger: BusLogger) =>
      new OutboxRelay({
        store: new OutboxStore(db, targets.targetFor(options.service).schema, direct),
        bus,
        events: options.events,
        logger,
        intervalMs: options.intervalMs,
      }),
  };
}
