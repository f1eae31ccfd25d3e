import { Injectable } from '@nestjs/common';
import { DatabaseTargets, DirectSql, GroupCommit } from '@runplane/database';
import {
  PrismaClient,
  type WebhookAttempt,
  type WebhookDelivery,
} from '../generated/prisma/client.js';

export type DeliveryRow = WebhookDelivery;
export type DeliveryWithAttempts = WebhookDelivery & { attempts: WebhookAttempt[] };

export interface NewDelivery {
  id: string;
  jobId: string;
  endpointId: string;
  ownerId: string;
  event: string;
  url: string;
  host: string;
  body: string;
  maxAttempts: number;
}

export interface RecordedAttempt {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

const ts = (d: Date) => d.toISOString();

/** A delivery to create, waiting for its batch (`create`). */
interface Creation {
  delivery: NewDelivery;
  now: Date;
  leasedUntil?: Date;
}

/** An attempt's outcome and what follows it, waiting for its batch (`recordAttempt`). */
interface Attempt {
  id: string;
  attempt: number;
  status: 'delivered' | 'failed' | 'pending';
  nextAttemptAt: Date;
  outcome: RecordedAttempt;
  now: Date;
}

/**
 * Data access of deliveries and attempts; the only code that knows these tables. Claims are
 * conditional statements with leases, so several webhook-sender replicas share the work and a
 * crashed one's attempts are taken over once its lease runs out. The statements every delivery
 * goes through (create, claim, record an attempt) run through `DirectSql`, without Prisma's
 * per-call work, and creations and attempts made together share one statement (group commit);
 * the rest goes through Prisma.
 */
@Injectable()
export class DeliveriesRepository {
  private readonly table: string;
  private readonly attemptTable: string;
  private readonly creates = new GroupCommit<Creation, DeliveryRow | null>((items) =>
    this.createBatch(items),
  );
  private readonly attempts = new GroupCommit<Attempt, DeliveryRow | null>((items) =>
    this.recordBatch(items),
  );

  constructor(
    private readonly db: PrismaClient,
    private readonly direct: DirectSql,
    targets: DatabaseTargets,
  ) {
    const schema = `"${targets.targetFor('webhook-sender').schema.replace(/"/g, '""')}"`;
    this.table = `${schema}."WebhookDelivery"`;
    this.attemptTable = `${schema}."WebhookAttempt"`;
  }

  /**
   * Creates the delivery of an event, due now, and leased until `leasedUntil` when given (its
   * first attempt is then this instance's to make). The same event again (a redelivery) creates
   * nothing: null. Grouped: the deliveries of events consumed together are one statement.
   */
  create(delivery: NewDelivery, now: Date, leasedUntil?: Date): Promise<DeliveryRow | null> {
    return this.creates.call({ delivery, now, leasedUntil });
  }

  private async createBatch(items: Creation[]): Promise<Array<DeliveryRow | null>> {
    const rows = await this.direct.query<DeliveryRow>({
      text: `
      INSERT INTO ${this.table} (id, "jobId", "endpointId", "ownerId", event, url, host, body, "maxAttempts",
        "nextAttemptAt", "createdAt", "claimedUntil")
      SELECT id, "jobId", "endpointId", "ownerId", event, url, host, body, "maxAttempts",
        at::timestamp(3), at::timestamp(3), "claimedUntil"::timestamp(3)
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
        $8::text[], $9::int[], $10::text[], $11::text[])
        AS d(id, "jobId", "endpointId", "ownerId", event, url, host, body, "maxAttempts", at, "claimedUntil")
      ON CONFLICT (id) DO NOTHING
      RETURNING *`,
      values: [
        items.map((c) => c.delivery.id),
        items.map((c) => c.delivery.jobId),
        items.map((c) => c.delivery.endpointId),
        items.map((c) => c.delivery.ownerId),
        items.map((c) => c.delivery.event),
        items.map((c) => c.delivery.url),
        items.map((c) => c.delivery.host),
        items.map((c) => c.delivery.body),
        items.map((c) => c.delivery.maxAttempts),
        items.map((c) => ts(c.now)),
        items.map((c) => (c.leasedUntil ? ts(c.leasedUntil) : null)),
      ],
    });
    // The same event twice in one batch (a redelivery racing the first): the first call creates it.
    const created = new Map(rows.map((row) => [row.id, row]));
    return items.map(({ delivery }) => {
      const row = created.get(delivery.id) ?? null;
      created.delete(delivery.id);
      return row;
    });
  }

  /**
   * Leases up to `limit` due deliveries until `leaseUntil`, oldest due first, at most `slots(host)`
   * per receiving host, in one statement. The candidates are chosen by a subquery and claimed by
   * an UPDATE that re-checks that each is still due and free on the row's latest version, so a
   * replica racing for the same rows gets each once.
   */
  async claimDue(
    limit: number,
    now: Date,
    leaseUntil: Date,
    busyHosts: Record<string, number>,
    perHost: number,
  ): Promise<DeliveryRow[]> {
    const due = `status = 'pending' AND "nextAttemptAt" <= $1::timestamp(3) AND ("claimedUntil" IS NULL OR "claimedUntil" < $1::timestamp(3))`;
    return this.direct.query<DeliveryRow>({
      text: `
      UPDATE ${this.table} SET "claimedUntil" = $5::timestamp(3)
      WHERE id = ANY(ARRAY(
        SELECT id FROM (
          SELECT id, host, "nextAttemptAt", row_number() OVER (PARTITION BY host ORDER BY "nextAttemptAt", id) AS rank
          FROM ${this.table} WHERE ${due}
        ) c
        WHERE rank <= $3::int - COALESCE(($4::jsonb ->> host)::int, 0)
        ORDER BY "nextAttemptAt", id LIMIT $2))
        AND ${due}
      RETURNING *`,
      values: [ts(now), limit, perHost, JSON.stringify(busyHosts), ts(leaseUntil)],
    });
  }

  /**
   * When the next pending attempt after `now` is due (to sleep until then), or null. Attempts due
   * already are either in flight (leased) or waiting for a free slot, whose release looks again.
   */
  async nextDueAfter(now: Date): Promise<Date | null> {
    const row = await this.db.webhookDelivery.findFirst({
      where: { status: 'pending', nextAttemptAt: { gt: now } },
      orderBy: { nextAttemptAt: 'asc' },
      select: { nextAttemptAt: true },
    });
    return row?.nextAttemptAt ?? null;
  }

  /**
   * Records an attempt and decides what follows, in one statement: delivered on a 2xx, failed
   * when it was the last allowed attempt, otherwise pending again `retryDelayMs` from now.
   * Grouped: attempts that end together are recorded in one statement.
   */
  async recordAttempt(
    delivery: DeliveryRow,
    outcome: RecordedAttempt,
    now: Date,
    retryDelayMs: number,
  ): Promise<DeliveryRow> {
    const attempt = delivery.attemptCount + 1;
    const status = outcome.ok
      ? 'delivered'
      : attempt >= delivery.maxAttempts
        ? 'failed'
        : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(now.getTime() + retryDelayMs) : now;
    const updated = await this.attempts.call({
      id: delivery.id,
      attempt,
      status,
      nextAttemptAt,
      outcome,
      now,
    });
    if (!updated) throw new Error(`delivery ${delivery.id} is gone`);
    return updated;
  }

  private async recordBatch(items: Attempt[]): Promise<Array<DeliveryRow | null>> {
    const rows = await this.direct.query<DeliveryRow>({
      text: `
      WITH attempts AS (
        SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::boolean[], $6::text[],
          $7::text[], $8::int[], $9::int[], $10::text[])
          AS a(id, attempt, status, "nextAttemptAt", ok, at, "attemptId", "statusCode", "latencyMs", error)
      ), updated AS (
        UPDATE ${this.table} d SET "attemptCount" = a.attempt, status = a.status, "claimedUntil" = NULL,
          "nextAttemptAt" = a."nextAttemptAt"::timestamp(3),
          "deliveredAt" = CASE WHEN a.ok THEN a.at::timestamp(3) ELSE d."deliveredAt" END
        FROM attempts a WHERE d.id = a.id RETURNING d.*
      ), recorded AS (
        INSERT INTO ${this.attemptTable} (id, "deliveryId", attempt, "statusCode", "latencyMs", error, "createdAt")
        SELECT a."attemptId", a.id, a.attempt, a."statusCode", a."latencyMs", a.error, a.at::timestamp(3)
        FROM attempts a JOIN updated u ON u.id = a.id
      )
      SELECT * FROM updated`,
      values: [
        items.map((a) => a.id),
        items.map((a) => a.attempt),
        items.map((a) => a.status),
        items.map((a) => ts(a.nextAttemptAt)),
        items.map((a) => a.outcome.ok),
        items.map((a) => ts(a.now)),
        items.map((a) => `${a.id}.${a.attempt}.${a.now.getTime().toString(36)}`),
        items.map((a) => a.outcome.statusCode),
        items.map((a) => a.outcome.latencyMs),
        items.map((a) => a.outcome.error),
      ],
    });
    const updated = new Map(rows.map((row) => [row.id, row]));
    return items.map((a) => updated.get(a.id) ?? null);
  }

  /** Gives a claimed delivery back without an attempt (e.g. the signing secret was unavailable). */
  async postpone(id: string, until: Date): Promise<void> {
    await this.db.webhookDelivery.updateMany({
      where: { id },
      data: { claimedUntil: null, nextAttemptAt: until },
    });
  }

  listForOwner(
    ownerId: string,
    jobId: string | undefined,
    limit: number,
  ): Promise<DeliveryWithAttempts[]> {
    return this.db.webhookDelivery.findMany({
      where: { ownerId, ...(jobId ? { jobId } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
      include: { attempts: { orderBy: [{ attempt: 'asc' }, { createdAt: 'asc' }] } },
    });
  }

  findForOwner(ownerId: string, id: string): Promise<DeliveryWithAttempts | null> {
    return this.db.webhookDelivery.findFirst({
      where: { id, ownerId },
      include: { attempts: { orderBy: [{ attempt: 'asc' }, { createdAt: 'asc' }] } },
    });
  }

  /** Redeliver: pending again at once with `extra` more attempts (same webhook-id). Null when not the owner's. */
  async redeliver(ownerId: string, id: string, extra: number, now: Date): Promise<boolean> {
    const rows = await this.db.$queryRawUnsafe<Array<{ id: string }>>(
      `
      UPDATE ${this.table} SET status = 'pending', "maxAttempts" = "attemptCount" + $3, "nextAttemptAt" = $4::timestamp(3)
      WHERE id = $1 AND "ownerId" = $2 RETURNING id`,
      id,
      ownerId,
      extra,
      ts(now),
    );
    return rows.length > 0;
  }
}
