import { Injectable } from '@nestjs/common';
import { PrismaClient, type Worker } from '../generated/prisma/client.js';
import { SchedulerTables } from '../shared/sql.js';

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
        state = CASE WHEN ${this.t.worker}.state IN ('initializing', 'unhealthy') THEN 'ready' ELSE ${this.t.worker}.state END
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

  /** It got or finished a job: its idle time starts again. */
  async markBusy(endpointId: string, id: string, now: Date): Promise<void> {
    await this.db.worker.updateMany({ where: { endpointId, id }, data: { lastBusyAt: now } });
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

  /** The worker said it is about to exit (failed fitness check) or stopped answering. */
  async markUnhealthy(endpointId: string, id: string): Promise<LostWorker | null> {
    const [row] = await this.db.$queryRawUnsafe<LostWorker[]>(
      `
      UPDATE ${this.t.worker} SET state = 'unhealthy'
      WHERE "endpointId" = $1 AND id = $2 AND state IN ('initializing', 'ready')
      RETURNING "endpointId", id, managed,
        ("firstSeenAt" IS NULL OR "lastSeenAt" - "firstSeenAt" < interval '1 minute') AS "diedYoung"`,
      endpointId,
      id,
    );
    return row ?? null;
  }

  /**
   * Workers silent for 3 ping intervals, and managed workers that never called in within the
   * start timeout, turn unhealthy.
   */
  sweepSilent(now: Date, startTimeoutMs: number): Promise<LostWorker[]> {
    return this.db.$queryRawUnsafe<LostWorker[]>(
      `
      UPDATE ${this.t.worker} SET state = 'unhealthy'
      WHERE (state = 'ready' AND "lastSeenAt" + 3 * "pingIntervalMs" * interval '1 millisecond' <= $1::timestamp(3))
         OR (state = 'initializing' AND "createdAt" + $2 * interval '1 millisecond' <= $1::timestamp(3))
      RETURNING "endpointId", id, managed,
        ("firstSeenAt" IS NULL OR "lastSeenAt" - "firstSeenAt" < interval '1 minute') AS "diedYoung"`,
      ts(now),
      startTimeoutMs,
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

  /** A managed worker whose stop was sent: a tombstone until its process is silent (see WorkerState). */
  async markStopped(endpointId: string, id: string, failed = false): Promise<void> {
    await this.db.worker.updateMany({
      where: { endpointId, id },
      data: { state: failed ? 'failed' : 'stopped', stopRequested: true },
    });
  }

  /** The endpoint works again (a managed worker finished a job): its failed workers are history. */
  async forgetFailed(endpointId: string): Promise<void> {
    await this.db.worker.deleteMany({ where: { endpointId, state: 'failed' } });
  }

  /** Tombstones of stopped workers whose process has not called for `afterMs`. */
  async forgetStopped(now: Date, afterMs: number): Promise<void> {
    const before = new Date(now.getTime() - afterMs);
    await this.db.worker.deleteMany({
      where: {
        state: { in: TOMBSTONES },
        OR: [{ lastSeenAt: { lt: before } }, { lastSeenAt: null, createdAt: { lt: before } }],
      },
    });
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
