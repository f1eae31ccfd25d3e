import type { DirectSql, SqlStatement } from '../direct-sql.js';
import type { PrismaClientLike } from '../prisma-client.js';

/** One event waiting in a service's outbox. */
export interface OutboxEntry {
  id: string;
  /** Bus subject of the event definition, e.g. runplane.evt.job.finished.v1 */
  subject: string;
  payload: unknown;
  attempts: number;
}

/** The row a writer inserts, in the transaction of the change it announces (see OutboxRelay.entry). */
export interface NewOutboxRow {
  id: string;
  subject: string;
  payload: object;
  /**
   * Leased to the writer, which publishes it right after the commit (the relay takes over once the
   * lease runs out); null: the relay publishes it on its next pass (writers `kick()` it).
   */
  claimedUntil: Date | null;
  attempts: number;
}

/**
 * Data access of a service's `OutboxEvent` table (same columns in every service that has one:
 * id, subject, payload, createdAt, attempts, claimedUntil). Raw SQL on the service's own client,
 * qualified with its schema, so one implementation serves every service's generated client.
 * Times are bound as ISO strings cast to timestamp(3), the way Prisma stores DateTime.
 */
export class OutboxStore {
  private readonly table: string;

  constructor(
    private readonly db: PrismaClientLike,
    schema: string,
    private readonly direct: DirectSql,
  ) {
    this.table = `"${schema.replace(/"/g, '""')}"."OutboxEvent"`;
  }

  /**
   * The statement that writes `rows`, created at `now`, for the writer to run in the transaction
   * of the change they announce (one statement for any number of rows).
   */
  insertStatement(rows: readonly NewOutboxRow[], now: Date): SqlStatement {
    return {
      text: `
      INSERT INTO ${this.table} (id, subject, payload, "createdAt", attempts, "claimedUntil")
      SELECT id, subject, payload::jsonb, $4::timestamp(3), attempts, "claimedUntil"::timestamp(3)
      FROM unnest($1::text[], $2::text[], $3::text[], $5::int[], $6::text[])
        AS r(id, subject, payload, attempts, "claimedUntil")`,
      values: [
        rows.map((r) => r.id),
        rows.map((r) => r.subject),
        rows.map((r) => JSON.stringify(r.payload)),
        now.toISOString(),
        rows.map((r) => r.attempts),
        rows.map((r) => r.claimedUntil?.toISOString() ?? null),
      ],
    };
  }

  /**
   * Leases up to `limit` unclaimed (or lease-expired) events, oldest first, to the caller until
   * `leaseUntil`. `FOR UPDATE SKIP LOCKED` plus the re-checked condition make two relays racing
   * for a row get it once between them.
   */
  async claim(limit: number, now: Date, leaseUntil: Date): Promise<OutboxEntry[]> {
    const free = `("claimedUntil" IS NULL OR "claimedUntil" < $1::timestamp(3))`;
    const rows = await this.db.$queryRawUnsafe<Array<OutboxEntry & { createdAt: Date | string }>>(
      `
      UPDATE ${this.table} SET "claimedUntil" = $2::timestamp(3), attempts = attempts + 1
      WHERE id = ANY(ARRAY(SELECT id FROM ${this.table} WHERE ${free} ORDER BY "createdAt", id LIMIT $3 FOR UPDATE SKIP LOCKED))
        AND ${free}
      RETURNING id, subject, payload, attempts, "createdAt"`,
      now.toISOString(),
      leaseUntil.toISOString(),
      limit,
    );
    const at = (r: { createdAt: Date | string }) => new Date(r.createdAt).getTime();
    return rows
      .sort((a, b) => at(a) - at(b) || a.id.localeCompare(b.id))
      .map(({ id, subject, payload, attempts }) => ({
        id,
        subject,
        payload: typeof payload === 'string' ? JSON.parse(payload) : payload,
        attempts,
      }));
  }

  /** Deletes published events (one statement for a relay's whole batch). */
  async remove(ids: readonly string[]): Promise<void> {
    await this.direct.query({
      text: `DELETE FROM ${this.table} WHERE id = ANY($1::text[])`,
      values: [[...ids]],
    });
  }

  async count(): Promise<number> {
    const [row] = await this.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM ${this.table}`,
    );
    return Number(row.n);
  }
}
