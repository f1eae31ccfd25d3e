import { Injectable } from '@nestjs/common';
import { DatabaseTargets, DirectSql } from '@runplane/database';
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

/**
 * Data access of deliveries and attempts; the only code that knows these tables. Claims are
 * conditional statements with leases, so several webhook-sender replicas share the work and a
 * crashed one's attempts are taken over once its lease runs out. The statements every delivery
 * goes through (create, claim, record an attempt) run through `DirectSql`, without Prisma's
 * per-call work; the rest through Prisma.
 */
@Injectable()
export class DeliveriesRepository {
  private readonly table: string;
  private readonly attemptTable: string;

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
   * nothing: null.
   */
  async create(delivery: NewDelivery, now: Date, leasedUntil?: Date): Promise<DeliveryRow | null> {
    const d = delivery;
    const [row] = await this.direct.query<DeliveryRow>({
      text: `
      INSERT INTO ${this.table} (id, "jobId", "endpointId", "ownerId", event, url, host, body, "maxAttempts",
        "nextAttemptAt", "createdAt", "claimedUntil")
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::timestamp(3), $10::timestamp(3), $11::timestamp(3))
      ON CONFLICT (id) DO NOTHING
      RETURNING *`,
      values: [
        d.id,
        d.jobId,
        d.endpointId,
        d.ownerId,
        d.event,
        d.url,
        d.host,
        d.body,
        d.maxAttempts,
        ts(now),
        leasedUntil ? ts(leasedUntil) : null,
      ],
    });
    return row ?? null;
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
    const [updated] = await this.direct.query<DeliveryRow>({
      text: `
      WITH updated AS (
        UPDATE ${this.table} SET "attemptCount" = $2, status = $3, "claimedUntil" = NULL,
          "nextAttemptAt" = $4::timestamp(3), "deliveredAt" = CASE WHEN $5 THEN $6::timestamp(3) ELSE "deliveredAt" END
        WHERE id = $1 RETURNING *
      ), recorded AS (
        INSERT INTO ${this.attemptTable} (id, "deliveryId", attempt, "statusCode", "latencyMs", error, "createdAt")
        SELECT $7, id, $2, $8, $9, $10, $6::timestamp(3) FROM updated
      )
      SELECT * FROM updated`,
      values: [
        delivery.id,
        attempt,
        status,
        ts(nextAttemptAt),
        outcome.ok,
        ts(now),
        `${delivery.id}.${attempt}.${now.getTime().toString(36)}`,
        outcome.statusCode,
        outcome.latencyMs,
        outcome.error,
      ],
    });
    if (!updated) throw new Error(`delivery ${delivery.id} is gone`);
    return updated;
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
