import {
  DEDUP_WINDOW_MS,
  type EventJournal,
  type JournalEvent,
  type PendingDelivery,
} from './journal.js';

/** The little a journal needs from a Postgres client; PGlite and node-postgres both fit. */
export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

/**
 * Durable journal in a Postgres schema of its own (the standalone server's embedded database), so
 * that the in-process bus keeps the at-least-once promise across a crash. Bus infrastructure, like
 * JetStream's storage: it is not a service's data and no service reads it.
 */
export class SqlEventJournal implements EventJournal {
  private lastPrune = 0;

  private constructor(
    private readonly db: SqlClient,
    private readonly schema: string,
  ) {}

  static async open(db: SqlClient, schema = 'runplane_bus'): Promise<SqlEventJournal> {
    const s = quoteIdent(schema);
    await db.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await db.query(`CREATE TABLE IF NOT EXISTS ${s}.event (
      seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, subject TEXT NOT NULL,
      payload JSONB, headers JSONB NOT NULL, published_at TIMESTAMPTZ NOT NULL)`);
    await db.query(`CREATE TABLE IF NOT EXISTS ${s}.delivery (
      event_id TEXT NOT NULL REFERENCES ${s}.event(id) ON DELETE CASCADE, grp TEXT NOT NULL,
      state TEXT NOT NULL DEFAULT 'pending', attempts INT NOT NULL DEFAULT 0, last_error TEXT,
      PRIMARY KEY (event_id, grp))`);
    await db.query(
      `CREATE INDEX IF NOT EXISTS delivery_pending ON ${s}.delivery (grp) WHERE state = 'pending'`,
    );
    await db.query(`CREATE INDEX IF NOT EXISTS event_published_at ON ${s}.event (published_at)`);
    return new SqlEventJournal(db, s);
  }

  async append(event: JournalEvent, groups: readonly string[]): Promise<boolean> {
    const { rows } = await this.db.query<{ id: string }>(
      `WITH e AS (INSERT INTO ${this.schema}.event (id, subject, payload, headers, published_at)
                  VALUES ($1, $2, $3::jsonb, $4::jsonb, $5) ON CONFLICT (id) DO NOTHING RETURNING id),
            d AS (INSERT INTO ${this.schema}.delivery (event_id, grp) SELECT e.id, g FROM e, unnest($6::text[]) AS g)
       SELECT id FROM e`,
      [
        event.id,
        event.subject,
        JSON.stringify(event.payload ?? null),
        JSON.stringify(event.headers),
        event.publishedAt,
        [...groups],
      ],
    );
    return rows.length > 0;
  }

  async pending(subject: string, group: string): Promise<PendingDelivery[]> {
    const { rows } = await this.db.query<{
      id: string;
      subject: string;
      payload: unknown;
      headers: Record<string, string>;
      published_at: Date | string;
      attempts: number;
    }>(
      `SELECT e.id, e.subject, e.payload, e.headers, e.published_at, d.attempts
         FROM ${this.schema}.event e JOIN ${this.schema}.delivery d ON d.event_id = e.id
        WHERE e.subject = $1 AND d.grp = $2 AND d.state = 'pending' ORDER BY e.seq`,
      [subject, group],
    );
    return rows.map((r) => ({
      attempts: r.attempts,
      event: {
        id: r.id,
        subject: r.subject,
        payload: r.payload,
        headers: r.headers,
        publishedAt: new Date(r.published_at).toISOString(),
      },
    }));
  }

  async recordAttempt(eventId: string, group: string, error: string): Promise<void> {
    await this.db.query(
      `UPDATE ${this.schema}.delivery SET attempts = attempts + 1, last_error = $3 WHERE event_id = $1 AND grp = $2`,
      [eventId, group, error.slice(0, 2000)],
    );
  }

  async settle(
    eventId: string,
    group: string,
    outcome: 'acked' | 'dead',
    error?: string,
  ): Promise<void> {
    await this.db.query(
      `UPDATE ${this.schema}.delivery SET state = $3, last_error = COALESCE($4, last_error) WHERE event_id = $1 AND grp = $2`,
      [eventId, group, outcome, error?.slice(0, 2000) ?? null],
    );
    await this.prune();
  }

  /**
   * Drops events every group acknowledged once their de-duplication window is over (their row is
   * what makes a re-publish with the same id a no-op). Dead letters keep their event for inspection.
   * Runs at most every 10 s: it is housekeeping, not part of settling.
   */
  private async prune(): Promise<void> {
    if (Date.now() - this.lastPrune < 10_000) return;
    this.lastPrune = Date.now();
    await this.db.query(
      `DELETE FROM ${this.schema}.event e WHERE e.published_at < $1
      AND NOT EXISTS (SELECT 1 FROM ${this.schema}.delivery d WHERE d.event_id = e.id AND d.state <> 'acked')`,
      [new Date(Date.now() - DEDUP_WINDOW_MS).toISOString()],
    );
  }

  async close(): Promise<void> {}
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid schema name "${name}"`);
  return `"${name}"`;
}
