import { Injectable } from '@nestjs/common';
import { PrismaClient, type Worker } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';

export type WorkerRow = Worker;

/**
 * Stored worker states; health derives idle/running from the jobs a ready worker holds. `stopped`:
 * a managed worker whose stop was sent; kept as a tombstone (never counted, never given a job) so
 * that its process, which may still poll while it shuts down, cannot come back as an external worker.
 * `failed`: the same for a managed worker stopped because it was unhealthy (crashed, silent, failed
 * its checks); `/health` counts it as unhealthy until the endpoint works again or a few minutes pass,
 * so a crash loop is visible.
 */
export type WorkerState =
  'initializing' | 'ready' | 'unhealthy' | 'stopping' | 'stopped' | 'failed';
const TOMBSTONES = ['stopped', 'failed'];

export interface SeenWorker {
  state: WorkerState;
  managed: boolean;
  stopRequested: boolean;
  /** True on the first call of a worker (new external worker, or managed worker coming up). */
  firstSeen: boolean;
}

/** A worker that just turned unhealthy. */
export interface LostWorker {
  endpointId: string;
  id: string;
  managed: boolean;
  /** Never called in, or died within a minute of doing so: counts as a failed start. */
  diedYoung: boolean;
}

const ts = (d: Date) => d.toISOString();

/** Reasons the scheduler itself gives a worker it finds dead. */
const MISSED_PINGS = 'unhealthy: missed pings';
const NEVER_CALLED_IN = 'unhealthy: never called in within the start timeout';
/** Cold starts cover the longest metrics window. */
const COLD_START_KEPT_MS = 25 * 3_600_000;

/** Data access of workers; the only code that knows the Worker table. */
@Injectable()
export class WorkersRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /**
   * Records a call of the worker: creates an external worker on its first call, brings an
   * initializing or unhealthy worker back to ready, and refreshes `lastSeenAt`.
   */
  async touch(
    w: { endpointId: string; id: string; ownerId: string; pingIntervalMs: number; version: number },
    now: Date,
  ): Promise<SeenWorker> {
    const [row] = await this.db.$queryRawUnsafe<
      Array<{ state: WorkerState; managed: boolean; stopRequested: boolean; firstSeen: boolean }>
    >(
      `
      WITH prev AS (SELECT "firstSeenAt" FROM ${this.t.worker} WHERE "endpointId" = $1 AND id = $2)
      INSERT INTO ${this.t.worker} (id, "endpointId", "ownerId", managed, state, "lastSeenAt", "firstSeenAt", "pingIntervalMs", version, "createdAt")
      VALUES ($2, $1, $3, false, 'ready', $4::timestamp(3), $4::timestamp(3), $5, $6, $4::timestamp(3))
      ON CONFLICT ("endpointId", id) DO UPDATE SET
        "lastSeenAt" = EXCLUDED."lastSeenAt",
        "firstSeenAt" = COALESCE(${this.t.worker}."firstSeenAt", EXCLUDED."firstSeenAt"),
        state = CASE WHEN ${this.t.worker}.state IN ('initializing', 'unhealthy') THEN 'ready' ELSE ${this.t.worker}.state END,
        -- back from unhealthy: what was recorded about its end no longer holds
        reason = CASE WHEN ${this.t.worker}.state = 'unhealthy' THEN NULL ELSE ${this.t.worker}.reason END,
        "exitCode" = CASE WHEN ${this.t.worker}.state = 'unhealthy' THEN NULL ELSE ${this.t.worker}."exitCode" END
      RETURNING state, managed, "stopRequested", (SELECT count(*) FROM prev WHERE "firstSeenAt" IS NOT NULL) = 0 AS "firstSeen"`,
      w.endpointId,
      w.id,
      w.ownerId,
      ts(now),
      w.pingIntervalMs,
      w.version,
    );
    return row;
  }

  async find(endpointId: string, id: string): Promise<WorkerRow | null> {
    return this.db.worker.findUnique({ where: { endpointId_id: { endpointId, id } } });
  }

  listForEndpoint(endpointId: string): Promise<WorkerRow[]> {
    return this.db.worker.findMany({ where: { endpointId } });
  }

  listAll(): Promise<WorkerRow[]> {
    return this.db.worker.findMany();
  }

  /**
   * `stopPod` in a result: a managed worker is replaced once it is free. An external worker exits
   * by itself and may come back under the same id, so nothing is recorded for it.
   */
  async requestStop(endpointId: string, id: string): Promise<void> {
    await this.db.worker.updateMany({
      where: { endpointId, id, managed: true },
      data: { stopRequested: true },
    });
  }

  /**
   * The worker said it is about to exit (failed fitness check), or its process ended: `reason`
   * says which (kept when it ends).
   */
  async markUnhealthy(endpointId: string, id: string, reason: string): Promise<LostWorker | null> {
    const [row] = await this.db.$queryRawUnsafe<LostWorker[]>(
      `
      UPDATE ${this.t.worker} SET state = 'unhealthy', reason = COALESCE(reason, $3)
      WHERE "endpointId" = $1 AND id = $2 AND state IN ('initializing', 'ready')
      RETURNING "endpointId", id, managed,
        ("firstSeenAt" IS NULL OR "lastSeenAt" - "firstSeenAt" < interval '1 minute') AS "diedYoung"`,
      endpointId,
      id,
      reason.slice(0, 600),
    );
    return row ?? null;
  }

  /**
   * pod-rest saw the worker's process end by itself: its exit code, and why (unless the worker
   * said why before, e.g. a failed fitness check). Every replica gets the signal: idempotent.
   */
  async recordExit(
    endpointId: string,
    id: string,
    exitCode: number | null,
    reason: string,
  ): Promise<void> {
    await this.db.$executeRawUnsafe(
      `
      UPDATE ${this.t.worker} SET "exitCode" = $3,
        reason = CASE WHEN reason IS NULL OR reason = $5 THEN $4 ELSE reason END
      WHERE "endpointId" = $1 AND id = $2 AND managed AND "exitCode" IS NULL`,
      endpointId,
      id,
      exitCode,
      reason,
      MISSED_PINGS,
    );
  }

  /**
   * Workers silent for 3 ping intervals, and managed workers that never called in within the
   * start timeout, turn unhealthy. Both count only from `listeningSince`, when the caller could
   * last hear workers without a break: a worker's calls made while the scheduler, its database,
   * its bus or queue-api was down were refused, and are no sign that the worker died.
   */
  sweepSilent(now: Date, startTimeoutMs: number, listeningSince: Date): Promise<LostWorker[]> {
    return this.db.$queryRawUnsafe<LostWorker[]>(
      `
      UPDATE ${this.t.worker} SET state = 'unhealthy',
        reason = COALESCE(reason, CASE WHEN state = 'ready' THEN '${MISSED_PINGS}' ELSE '${NEVER_CALLED_IN}' END)
      WHERE (state = 'ready' AND greatest("lastSeenAt", $3::timestamp(3)) + 3 * "pingIntervalMs" * interval '1 millisecond' <= $1::timestamp(3))
         OR (state = 'initializing' AND greatest("createdAt", $3::timestamp(3)) + $2 * interval '1 millisecond' <= $1::timestamp(3))
      RETURNING "endpointId", id, managed,
        ("firstSeenAt" IS NULL OR "lastSeenAt" - "firstSeenAt" < interval '1 minute') AS "diedYoung"`,
      ts(now),
      startTimeoutMs,
      ts(listeningSince),
    );
  }

  /** A managed worker about to be started (the row first, so no other tick starts it twice). */
  async createManaged(
    w: { endpointId: string; id: string; ownerId: string; pingIntervalMs: number; version: number },
    now: Date,
  ): Promise<void> {
    await this.db.worker.create({
      data: { ...w, managed: true, state: 'initializing', createdAt: now },
    });
  }

  async setPod(endpointId: string, id: string, podId: string): Promise<void> {
    await this.db.worker.updateMany({ where: { endpointId, id }, data: { podId } });
  }

  /**
   * Marks a worker for stopping; with `onlyIfIdle`, only when it holds no job (checked in the same
   * statement, so a job taken meanwhile keeps it alive).
   */
  async markStopping(endpointId: string, id: string, onlyIfIdle: boolean): Promise<boolean> {
    const n = await this.db.$executeRawUnsafe(
      `
      UPDATE ${this.t.worker} w SET state = 'stopping'
      WHERE w."endpointId" = $1 AND w.id = $2 AND w.state <> 'stopping'
        ${onlyIfIdle ? `AND NOT EXISTS (SELECT 1 FROM ${this.t.job} j WHERE j."endpointId" = w."endpointId" AND j."workerId" = w.id AND j.status = 'IN_PROGRESS' AND j."deletedAt" IS NULL)` : ''}`,
      endpointId,
      id,
    );
    return n > 0;
  }

  async markAllStopping(endpointId: string): Promise<void> {
    await this.db.worker.updateMany({
      where: { endpointId, state: { notIn: TOMBSTONES } },
      data: { state: 'stopping' },
    });
  }

  /**
   * A managed worker whose stop was sent: a tombstone until its process is silent (see
   * WorkerState), and history (`endedAt`, `reason`) until `forgetStopped`. A reason recorded
   * before (unhealthy, crashed) is kept.
   */
  async markStopped(
    endpointId: string,
    id: string,
    reason: string,
    now: Date,
    failed = false,
  ): Promise<void> {
    await this.db.$executeRawUnsafe(
      `
      UPDATE ${this.t.worker} SET state = $3, "stopRequested" = true,
        "endedAt" = COALESCE("endedAt", $5::timestamp(3)), reason = COALESCE(reason, $4)
      WHERE "endpointId" = $1 AND id = $2`,
      endpointId,
      id,
      failed ? 'failed' : 'stopped',
      reason,
      ts(now),
    );
  }

  /**
   * pod-rest refused to start it (or the vault to mint its key): it ended before it ran, and is
   * kept as history saying why.
   */
  async markStartRefused(endpointId: string, id: string, reason: string, now: Date): Promise<void> {
    await this.db.worker.updateMany({
      where: { endpointId, id },
      data: { state: 'stopped', stopRequested: true, endedAt: now, reason: reason.slice(0, 600) },
    });
  }

  /**
   * The endpoint works again (a managed worker finished a job): its failed workers no longer
   * count as unhealthy, and stay listed as ended.
   */
  async forgetFailed(endpointId: string): Promise<void> {
    await this.db.worker.updateMany({
      where: { endpointId, state: 'failed' },
      data: { state: 'stopped' },
    });
  }

  /**
   * Ended managed workers: kept while their process may still call (`silentMs` since its last
   * call) and as history for `historyMs`, at most the `historyMax` latest per endpoint.
   */
  async forgetStopped(
    now: Date,
    silentMs: number,
    history: { ms: number; max: number },
  ): Promise<void> {
    await this.db.$executeRawUnsafe(
      `
      DELETE FROM ${this.t.worker} w USING (
        SELECT "endpointId", id,
          row_number() OVER (PARTITION BY "endpointId" ORDER BY COALESCE("endedAt", "createdAt") DESC, id) AS n
        FROM ${this.t.worker} WHERE state IN ('stopped', 'failed')
      ) ended
      WHERE w."endpointId" = ended."endpointId" AND w.id = ended.id
        AND COALESCE(w."lastSeenAt", w."createdAt") < $1::timestamp(3)
        AND (COALESCE(w."endedAt", w."createdAt") < $2::timestamp(3) OR ended.n > $3)`,
      ts(new Date(now.getTime() - silentMs)),
      ts(new Date(now.getTime() - history.ms)),
      history.max,
    );
    await this.db.coldStart.deleteMany({
      where: { at: { lt: new Date(now.getTime() - COLD_START_KEPT_MS) } },
    });
  }

  /** A managed worker called in for the first time: how long it took since its start (metrics). */
  async recordColdStart(endpointId: string, id: string): Promise<void> {
    await this.db.$executeRawUnsafe(
      `
      INSERT INTO ${this.t.coldStart} ("endpointId", "workerId", at, ms)
      SELECT "endpointId", id, "firstSeenAt",
        GREATEST(0, (EXTRACT(EPOCH FROM ("firstSeenAt" - "createdAt")) * 1000)::int)
      FROM ${this.t.worker}
      WHERE "endpointId" = $1 AND id = $2 AND managed AND "firstSeenAt" IS NOT NULL
      ON CONFLICT DO NOTHING`,
      endpointId,
      id,
    );
  }

  /** Ids of managed workers that have not ended (their keys must keep working). */
  async liveManagedIds(): Promise<string[]> {
    const rows = await this.db.worker.findMany({
      where: { managed: true, state: { notIn: TOMBSTONES } },
      select: { id: true },
    });
    return rows.map((r) => r.id);
  }

  async delete(endpointId: string, id: string): Promise<void> {
    await this.db.worker.deleteMany({ where: { endpointId, id } });
  }

  /** External workers silent for long are forgotten (health stops listing them). */
  async forgetStaleExternal(now: Date, afterMs: number): Promise<void> {
    await this.db.worker.deleteMany({
      where: {
        managed: false,
        state: 'unhealthy',
        lastSeenAt: { lt: new Date(now.getTime() - afterMs) },
      },
    });
  }
}
