import { Injectable } from '@nestjs/common';
import { isAllowed } from '@runplane/auth';
import { Bus } from '@runplane/bus';
import {
  isFinalStatus,
  isRunplaneError,
  JOB_LIMITS,
  RunplaneError,
  SchedulerRpc,
  type HealthRecord,
  type JobAccepted,
  type JobRecord,
  type JobRequestDto,
  type JobStatus,
  type ListJobsResponse,
  type Principal,
  type PurgeResponse,
} from '@runplane/contracts';
import { BUS_MARGIN_MS, LongPolls } from '../http/long-polls.js';
import { IdempotencyService } from './idempotency.service.js';
import { newJobId } from './job-ids.js';

interface JobScope {
  ownerId: string;
  endpointId: string;
  jobId: string;
}

/**
 * Queue operations of the public API: each one is a
 * scheduler request over the bus; this class only translates and applies the edge's own rules
 * (idempotency keys, wait budgets).
 */
@Injectable()
export class QueueService {
  constructor(
    private readonly bus: Bus,
    private readonly idempotency: IdempotencyService,
    private readonly polls: LongPolls,
  ) {}

  async run(
    principal: Principal,
    endpointId: string,
    job: JobRequestDto,
    idempotencyKey?: string,
  ): Promise<JobAccepted> {
    const accepted = await this.submit(principal, endpointId, job, idempotencyKey);
    return { id: accepted.id, status: accepted.status };
  }

  /**
   * Submits and blocks up to `wait` ms in one scheduler request; past the wait only `{id, status}`
   * is returned.
   */
  async runsync(
    principal: Principal,
    endpointId: string,
    job: JobRequestDto,
    wait: number = JOB_LIMITS.runsyncWait.default,
    idempotencyKey?: string,
  ): Promise<JobRecord | JobAccepted> {
    // Shutting down: queue it without waiting; the client fetches the result with /status.
    if (this.polls.draining) return this.run(principal, endpointId, job, idempotencyKey);
    const record = await this.submit(principal, endpointId, job, idempotencyKey, wait);
    return isFinalStatus(record.status) ? record : { id: record.id, status: record.status };
  }

  status(
    principal: Principal,
    endpointId: string,
    jobId: string,
    ttlMs?: number,
  ): Promise<JobRecord> {
    // /status is a read, but `?ttl=` rewrites when the job is deleted: a write, refused like one.
    if (ttlMs !== undefined && !isAllowed(principal, 'write')) {
      throw RunplaneError.unauthorized(
        `setting ttl needs a readwrite key: this API key (scope ${principal.scope}) may only read the job`,
      );
    }
    return this.bus.request(SchedulerRpc.getJob, {
      ownerId: principal.userId,
      endpointId,
      jobId,
      ...(ttlMs === undefined ? {} : { ttlMs }),
    });
  }

  /** `/status` that blocks up to `wait` ms for a final state. */
  statusSync(
    principal: Principal,
    endpointId: string,
    jobId: string,
    wait: number = JOB_LIMITS.runsyncWait.default,
  ): Promise<JobRecord> {
    return this.awaitRecord({ ownerId: principal.userId, endpointId, jobId }, wait);
  }

  cancel(principal: Principal, endpointId: string, jobId: string): Promise<JobAccepted> {
    return this.bus.request(SchedulerRpc.cancelJob, {
      ownerId: principal.userId,
      endpointId,
      jobId,
    });
  }

  retry(principal: Principal, endpointId: string, jobId: string): Promise<JobAccepted> {
    return this.bus.request(SchedulerRpc.retryJob, {
      ownerId: principal.userId,
      endpointId,
      jobId,
    });
  }

  purge(principal: Principal, endpointId: string): Promise<PurgeResponse> {
    return this.bus.request(SchedulerRpc.purgeQueue, { ownerId: principal.userId, endpointId });
  }

  health(principal: Principal, endpointId: string): Promise<HealthRecord> {
    return this.bus.request(SchedulerRpc.health, { ownerId: principal.userId, endpointId });
  }

  list(
    principal: Principal,
    endpointId: string,
    query: { status?: JobStatus; limit?: number; cursor?: string },
  ): Promise<ListJobsResponse> {
    return this.bus.request(SchedulerRpc.listJobs, {
      ownerId: principal.userId,
      endpointId,
      limit: query.limit ?? 50,
      ...(query.status ? { status: query.status } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
  }

  /**
   * The job id is chosen here. With an Idempotency-Key it is bound to the key first (the primary
   * key decides between concurrent duplicates), and every duplicate resubmits that same id: the
   * scheduler's insert is idempotent on it, so a key never enqueues twice, even while the first
   * submission is still in flight.
   *
   * With `waitMs` (runsync) the scheduler also waits for the job's final state, and the record is
   * returned as it is then.
   */
  private async submit(
    principal: Principal,
    endpointId: string,
    job: JobRequestDto,
    idempotencyKey?: string,
  ): Promise<JobAccepted>;
  private async submit(
    principal: Principal,
    endpointId: string,
    job: JobRequestDto,
    idempotencyKey: string | undefined,
    waitMs: number,
  ): Promise<JobRecord>;
  private async submit(
    principal: Principal,
    endpointId: string,
    job: JobRequestDto,
    idempotencyKey?: string,
    waitMs?: number,
  ): Promise<JobAccepted | JobRecord> {
    const ownerId = principal.userId;
    const mode = waitMs === undefined ? 'run' : 'runsync';
    let jobId = newJobId(mode);
    let bound = false;
    const scope = { ownerId, endpointId, key: idempotencyKey ?? '' };
    if (idempotencyKey) {
      const claim = await this.idempotency.claim(scope, jobId);
      jobId = claim.jobId;
      bound = claim.created;
    }
    try {
      if (waitMs === undefined)
        return await this.bus.request(SchedulerRpc.submitJob, {
          ownerId,
          endpointId,
          jobId,
          mode,
          job,
        });
      const call = () =>
        this.bus.request(
          SchedulerRpc.runJobSync,
          { ownerId, endpointId, jobId, mode, job, waitMs },
          { timeoutMs: waitMs + BUS_MARGIN_MS },
        );
      // Cut short by shutdown within the moment before the scheduler stored the job: it is on its way.
      return await this.awaitRecord({ ownerId, endpointId, jobId }, waitMs, call, {
        id: jobId,
        status: 'IN_QUEUE',
      });
    } catch (err) {
      // A rejection (4xx) created no job: free the key. After a timeout or 5xx the job may exist,
      // so the key stays bound and a retry resubmits the same id; a runsync job whose TTL ran out
      // while it was awaited existed too.
      if (bound && isRunplaneError(err) && err.status < 500 && err.code !== 'JOB_NOT_FOUND')
        await this.idempotency.forget(scope, jobId);
      throw err;
    }
  }

  /**
   * A blocking scheduler request (awaitJob by default); if shutdown starts or the bus gives up
   * first, the record as it is now (`unseen` when the job is not stored yet).
   */
  private async awaitRecord(
    scope: JobScope,
    waitMs: number,
    call = () =>
      this.bus.request(
        SchedulerRpc.awaitJob,
        { ...scope, waitMs },
        { timeoutMs: waitMs + BUS_MARGIN_MS },
      ),
    unseen?: JobRecord,
  ): Promise<JobRecord> {
    try {
      const held = await this.polls.hold(call);
      if (!held.ended) return held.value;
    } catch (err) {
      if (!(isRunplaneError(err) && err.status === 504)) throw err;
    }
    try {
      return await this.bus.request(SchedulerRpc.getJob, scope);
    } catch (err) {
      if (unseen && isRunplaneError(err) && err.code === 'JOB_NOT_FOUND') return unseen;
      throw err;
    }
  }
}
