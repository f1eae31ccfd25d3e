import { Injectable } from '@nestjs/common';
import {
  isFinalStatus,
  JOB_LIMITS,
  RunplaneError,
  type AwaitJobRequest,
  type EndpointScopedRequest,
  type GetJobRequest,
  type HealthRecord,
  type JobAccepted,
  type JobDetail,
  type JobEvent,
  type JobRecord,
  type JobScopedRequest,
  type ListJobsRequest,
  type ListJobsResponse,
  type PurgeResponse,
  type RunJobSyncRequest,
  type StreamJobRequest,
  type StreamResponse,
  type SubmitJobRequest,
} from '@runplane/contracts';
import type { Prisma } from '../generated/prisma/client.js';
import { EndpointsService } from '../endpoints/endpoints.service.js';
import { SchedulerSettings } from '../settings.js';
import { JobChanges } from '../shared/job-changes.js';
import { WorkersRepository } from '../store/workers.repository.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { isGone, jobNotFound, resultsExpired, toJobRecord } from '../store/job-view.js';
import { JobControlRepository } from '../store/job-control.repository.js';
import { JobDispatchRepository } from '../store/job-dispatch.repository.js';
import { JobIntakeRepository } from '../store/job-intake.repository.js';
import { JobCountsRepository } from '../store/job-counts.repository.js';
import { JobQueriesRepository } from '../store/job-queries.repository.js';
import type { ClaimedJob, JobRow, JobState } from '../store/job-rows.js';

/** The job lifecycle as clients drive it (through queue-api). The scheduler is the only writer of job state. */
@Injectable()
export class JobsService {
  constructor(
    private readonly intake: JobIntakeRepository,
    private readonly dispatch: JobDispatchRepository,
    private readonly control: JobControlRepository,
    private readonly queries: JobQueriesRepository,
    private readonly counts: JobCountsRepository,
    private readonly workers: WorkersRepository,
    private readonly endpoints: EndpointsService,
    private readonly changes: JobChanges,
    private readonly settings: SchedulerSettings,
  ) {}

  /**
   * Queues the job on the caller's endpoint and answers IN_QUEUE (as on RunPod: `/run` answers IN_QUEUE),
   * even when a waiting worker got it at once; the same id again is the same job, as it is now.
   */
  async submit(request: SubmitJobRequest): Promise<JobAccepted> {
    const { row, created } = await this.create(request);
    return { id: row.id, status: created ? 'IN_QUEUE' : row.status };
  }

  /** `/runsync`: queues the job, then waits like `await` for its final state. */
  async runSync(request: RunJobSyncRequest): Promise<JobRecord> {
    const deadline = Date.now() + request.waitMs;
    const { row, created } = await this.create(request);
    // A new job's row is as the insert left it: the first look needs no read.
    return this.awaitFinal(
      request,
      deadline,
      created ? { row, mark: this.changes.mark() } : undefined,
    );
  }

  private async create(request: SubmitJobRequest): Promise<{ row: JobRow; created: boolean }> {
    const endpoint = await this.endpoints.requireOwned(request.ownerId, request.endpointId);
    // A job-take waiting here gets the job straight away (stored already running on its worker).
    const taker = this.changes.handOff<ClaimedJob>(endpoint.id);
    let handed = false;
    try {
      const { row, created } = await this.insert(
        request,
        endpoint.executionTimeoutMs,
        taker?.workerId,
      );
      handed = created && row.workerId !== null;
      if (handed) taker!.give([row]);
      return { row, created };
    } finally {
      if (!handed) taker?.decline();
    }
  }

  private async insert(
    request: SubmitJobRequest,
    endpointTimeoutMs: number,
    offeredTo?: string,
  ): Promise<{ row: JobRow; created: boolean }> {
    const { job } = request;
    const { row, created } = await this.intake.insert(
      {
        id: request.jobId,
        endpointId: request.endpointId,
        ownerId: request.ownerId,
        mode: request.mode,
        input: job.input as Prisma.InputJsonValue,
        webhook: job.webhook,
        s3Config: plain(job.s3Config),
        policy: plain(job.policy),
        lowPriority: job.policy?.lowPriority ?? false,
        // Policy beats the endpoint setting, fixed at submission.
        executionTimeoutMs: job.policy?.executionTimeout ?? endpointTimeoutMs,
        ttlMs: job.policy?.ttl ?? JOB_LIMITS.ttl.default,
        offeredTo,
      },
      new Date(),
    );
    if (!created && (row.endpointId !== request.endpointId || row.ownerId !== request.ownerId)) {
      throw RunplaneError.conflict(`job id ${request.jobId} is already used`, 'JOB_ID_IN_USE');
    }
    return { row, created };
  }

  /**
   * `/status`; with `ttlMs` the job's TTL is set anew (counted from submission). A read never
   * deletes the job it answers about: a TTL that has already elapsed is refused, the job kept.
   */
  async get(request: GetJobRequest): Promise<JobRecord> {
    const now = new Date();
    const row = await this.visible(request, now);
    if (request.ttlMs !== undefined) {
      const expiresAt = new Date(row.createdAt.getTime() + request.ttlMs);
      if (expiresAt.getTime() <= now.getTime()) {
        const age = now.getTime() - row.createdAt.getTime();
        throw RunplaneError.badRequest(
          `ttl ${request.ttlMs} ms is not longer than the job's age (${age} ms) and would expire it at once; the job is kept`,
          [{ path: 'ttl', message: `must be more than the job's age, ${age} ms` }],
        );
      }
      await this.intake.setTtl(row.id, request.ttlMs, expiresAt);
      row.ttlMs = request.ttlMs;
      row.expiresAt = expiresAt;
    }
    return toJobRecord(row, now);
  }

  /** Blocks until the job is final or `waitMs` elapsed, then returns its record (runsync, status-sync). */
  await(request: AwaitJobRequest): Promise<JobRecord> {
    return this.awaitFinal(request, Date.now() + request.waitMs);
  }

  /** Waits until the job is final or `deadline`; `known` is its row as it was at `known.mark`. */
  private async awaitFinal(
    request: JobScopedRequest,
    deadline: number,
    known?: { row: JobState; mark: number },
  ): Promise<JobRecord> {
    let seen = known;
    for (;;) {
      if (!seen) {
        const mark = this.changes.mark();
        seen = { row: await this.visible(request, new Date()), mark };
      }
      const now = new Date();
      const left = deadline - now.getTime();
      if (isFinalStatus(seen.row.status) || left <= 0 || this.changes.stopping)
        return toJobRecord(seen.row, now);
      const final = await this.changes.waitForJob<JobState>(
        seen.row.endpointId,
        seen.row.id,
        Math.min(left, this.settings.longPollRecheckMs),
        seen.mark,
      );
      // A final state handed over by the change itself needs no read.
      seen = final ? { row: final, mark: this.changes.mark() } : undefined;
    }
  }

  /**
   * Returns the chunks not returned before, in order. With none and the job not final, waits up
   * to `waitMs` for one. `stream` is always an array.
   */
  async stream(request: StreamJobRequest): Promise<StreamResponse> {
    const deadline = Date.now() + request.waitMs;
    for (;;) {
      const mark = this.changes.mark();
      const now = new Date();
      // Status before draining: a final status read first guarantees every chunk is already stored.
      const row = await this.visible(request, now);
      const chunks = await this.dispatch.drainChunks(row.id);
      const left = deadline - Date.now();
      if (chunks.length || isFinalStatus(row.status) || left <= 0 || this.changes.stopping) {
        return { id: row.id, status: row.status, stream: chunks.map((output) => ({ output })) };
      }
      await this.changes.waitForJob(
        row.endpointId,
        row.id,
        Math.min(left, this.settings.longPollRecheckMs),
        mark,
      );
    }
  }

  /** IN_QUEUE / IN_PROGRESS → CANCELLED at once; a running job's worker gets it on job-stop. */
  async cancel(request: JobScopedRequest): Promise<JobAccepted> {
    for (let attempt = 0; ; attempt++) {
      const now = new Date();
      const row = await this.visible(request, now);
      if (row.status === 'CANCELLED') return { id: row.id, status: 'CANCELLED' }; // repeated cancel
      if (isFinalStatus(row.status)) {
        throw RunplaneError.conflict(
          `job ${row.id} is already ${row.status} and cannot be cancelled`,
          'JOB_FINAL',
        );
      }
      const cancelled = await this.control.cancel(row.id, now);
      if (cancelled) return { id: row.id, status: 'CANCELLED' };
      // It moved between the read and the update (finished, requeued, ...): decide again.
      if (attempt >= 3)
        throw RunplaneError.conflict(
          `job ${row.id} changed while being cancelled; try again`,
          'JOB_BUSY',
        );
    }
  }

  /** FAILED / TIMED_OUT whose results are kept → IN_QUEUE again, same id; otherwise 409. */
  async retry(request: JobScopedRequest): Promise<JobAccepted> {
    const now = new Date();
    const row = await this.visible(request, now);
    if (await this.control.retry(row, now)) return { id: row.id, status: 'IN_QUEUE' };
    const latest = (await this.intake.find(row.id)) ?? row;
    if (latest.status !== 'FAILED' && latest.status !== 'TIMED_OUT') {
      throw RunplaneError.conflict(
        `job ${row.id} is ${latest.status}; only FAILED or TIMED_OUT jobs can be retried`,
        'JOB_NOT_RETRYABLE',
      );
    }
    if (resultsExpired(latest, now))
      throw RunplaneError.conflict(
        `the results of job ${row.id} have expired; it can no longer be retried`,
        'JOB_RESULTS_EXPIRED',
      );
    throw RunplaneError.conflict(
      `job ${row.id} changed while being retried; try again`,
      'JOB_BUSY',
    );
  }

  /** The job with its input, for its owner's operators (the caller's live job, else 404). */
  async detail(request: JobScopedRequest): Promise<JobDetail> {
    const now = new Date();
    const row = await this.visible(request, now);
    const payload = await this.queries.payload(row.id);
    if (!payload) throw jobNotFound(row.id);
    return {
      ...toJobRecord(row, now),
      input: payload.input,
      createdAt: row.createdAt.toISOString(),
      mode: row.mode as JobDetail['mode'],
      ...(row.webhook ? { webhook: row.webhook } : {}),
    };
  }

  /** The job's history, oldest first (the caller's live job, else 404 like every job read). */
  async events(request: JobScopedRequest): Promise<JobEvent[]> {
    const row = await this.visible(request, new Date());
    return this.queries.events(row.id);
  }

  /** Removes the queued jobs only; running ones continue. */
  async purge(request: EndpointScopedRequest): Promise<PurgeResponse> {
    await this.endpoints.requireOwned(request.ownerId, request.endpointId);
    const removed = await this.control.purgeQueued(request.endpointId);
    return { removed, status: 'completed' };
  }

  /** `/requests`: newest first, paged by an opaque cursor. */
  async list(request: ListJobsRequest): Promise<ListJobsResponse> {
    await this.endpoints.requireOwned(request.ownerId, request.endpointId);
    const after = request.cursor ? decodeCursor(request.cursor) : undefined;
    const now = new Date();
    const rows = await this.queries.list(
      request.endpointId,
      request.status,
      request.limit + 1,
      after,
      now,
    );
    const page = rows.slice(0, request.limit);
    return {
      requests: page.map((r) => ({
        id: r.id,
        status: r.status,
        createdAt: r.createdAt.toISOString(),
        ...(r.startedAt
          ? {
              delayTime: Math.max(0, r.startedAt.getTime() - r.createdAt.getTime()),
              executionTime: Math.max(0, (r.completedAt ?? now).getTime() - r.startedAt.getTime()),
            }
          : {}),
      })),
      nextCursor: rows.length > request.limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  /** `/health`: job counts of the endpoint and its workers by state (external ones included). */
  async health(request: EndpointScopedRequest): Promise<HealthRecord> {
    const endpoint = await this.endpoints.requireOwned(request.ownerId, request.endpointId);
    const now = new Date();
    const [jobs, workers, held] = await Promise.all([
      this.counts.forHealth(endpoint.id, now),
      this.workers.listForEndpoint(endpoint.id),
      this.queries.heldCounts(endpoint.id),
    ]);
    const busy = new Set(held.map((h) => h.workerId));
    const counts = { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 };
    for (const w of workers) {
      if (busy.has(w.id)) counts.running += 1;
      else if (w.state === 'initializing') counts.initializing += 1;
      else if (w.state === 'ready') counts.idle += 1;
      else if (w.state === 'unhealthy' || w.state === 'failed') counts.unhealthy += 1; // failed: a recent crash (see WorkerState)
      // an idle "stopping" worker is on its way out: not counted
    }
    if (endpoint.startBackoffUntil && endpoint.startBackoffUntil > now) {
      // Workers the endpoint should have but may not start yet (crash-loop back-off).
      const active = workers.filter(
        (w) => w.managed && (w.state === 'initializing' || w.state === 'ready'),
      ).length;
      counts.throttled = Math.max(0, endpoint.workersMin - active);
    }
    return { jobs, workers: counts };
  }

  /** The caller's live job, else 404 (unknown, another endpoint's or user's, or deleted by its TTL). */
  private async visible(request: JobScopedRequest, now: Date): Promise<JobState> {
    const row = await this.intake.findOwned(request.ownerId, request.endpointId, request.jobId);
    if (!row || isGone(row, now)) throw jobNotFound(request.jobId);
    return row;
  }
}

/** A validated DTO instance as plain JSON (only the fields that were given), or undefined. */
function plain(value: object | undefined): Prisma.InputJsonValue | undefined {
  return value === undefined || value === null
    ? undefined
    : (JSON.parse(JSON.stringify(value)) as Prisma.InputJsonValue);
}
