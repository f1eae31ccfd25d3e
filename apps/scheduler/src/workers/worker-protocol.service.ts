import { Inject, Injectable } from '@nestjs/common';
import {
  RunplaneError,
  type Ack,
  type JobDoneRequest,
  type JobStreamRequest,
  type PingRequest,
  type ReleaseJobsRequest,
  type StopJobsRequest,
  type StopJobsResponse,
  type TakeJobsRequest,
  type TakeJobsResponse,
  type WorkerExitedSignal,
  type WorkerRequest,
} from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { EndpointsRepository, type EndpointRow } from '../store/endpoints.repository.js';
import { EndpointsService } from '../endpoints/endpoints.service.js';
import { isGone, jobNotFound } from '../store/job-view.js';
import { JobDispatchRepository } from '../store/job-dispatch.repository.js';
import { JobIntakeRepository } from '../store/job-intake.repository.js';
import { JobResultsRepository } from '../store/job-results.repository.js';
import type { ClaimedJob, JobState } from '../store/job-rows.js';
import { isWorkerLeaving } from '../store/job-rules.js';
import { JobStopsRepository } from '../store/job-stops.repository.js';
import { JobTimersRepository } from '../store/job-timers.repository.js';
import { splitStreamOutput } from '../store/stream-chunks.js';
import { SchedulerSettings } from '../settings.js';
import { ANY_JOB, JobChanges } from '../shared/job-changes.js';
import { endedReason, errorString, exitedWith, isError, toWorkerJob } from './worker-messages.js';
import { WorkerLiveness } from './worker-liveness.service.js';
import { WorkerRelay } from './worker-relay.js';
import { WorkersRepository, type SeenWorker } from '../store/workers.repository.js';

/**
 * The worker side of the queue: workers pull jobs (job-take), report
 * progress, results and stream chunks, ping, and long-poll job-stop. Dispatch happens here, in
 * `take`: a claim in the job table, so a job is handed to exactly one worker whatever the number
 * of workers, queue-api instances or scheduler replicas.
 */
@Injectable()
export class WorkerProtocolService {
  /** Last liveness write per worker: calls in quick succession write once. */
  private readonly touched = new Map<string, { at: number; seen: SeenWorker }>();

  constructor(
    private readonly intake: JobIntakeRepository,
    private readonly dispatch: JobDispatchRepository,
    private readonly results: JobResultsRepository,
    private readonly stops: JobStopsRepository,
    private readonly jobTimers: JobTimersRepository,
    private readonly workers: WorkersRepository,
    private readonly endpoints: EndpointsService,
    private readonly endpointRows: EndpointsRepository,
    private readonly liveness: WorkerLiveness,
    private readonly relay: WorkerRelay,
    private readonly changes: JobChanges,
    private readonly settings: SchedulerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** job-take(-batch): up to `batchSize` jobs, waiting up to `waitMs` for one. */
  async take(request: TakeJobsRequest): Promise<TakeJobsResponse> {
    const endpoint = await this.endpointFor(request);
    const deadline = Date.now() + request.waitMs;
    this.relay.pollArrived(request);
    for (;;) {
      // Refreshed on every round: a worker holding a long poll is alive, while it is held.
      if (!this.relay.isHeld(request)) return { jobs: [] }; // nobody left to answer
      const mark = this.changes.mark();
      const seen = await this.seen(endpoint, request.workerId);
      const leaving = isWorkerLeaving(seen);
      if (
        !leaving &&
        !this.changes.knownIdle(endpoint.id, request.workerId, this.settings.longPollRecheckMs)
      ) {
        const rows = await this.dispatch.claim(
          endpoint.id,
          request.workerId,
          request.batchSize,
          new Date(),
        );
        if (rows.length) return { jobs: rows.map(toWorkerJob) };
        this.changes.claimedNothing(endpoint.id, request.workerId, mark);
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.changes.stopping) return { jobs: [] };
      const wait = Math.min(left, this.settings.longPollRecheckMs);
      // A worker on its way out gets nothing, but still after the full wait (answering at once
      // would make runpod-python poll in a hot loop); it must not use up a new job's wake-up either.
      if (leaving) {
        await this.changes.pause(wait);
        continue;
      }
      const handed = await this.changes.waitForWork<ClaimedJob>(
        endpoint.id,
        request.workerId,
        wait,
        mark,
      );
      if (handed?.length) return { jobs: handed.map(toWorkerJob) };
    }
  }

  /** Jobs queue-api could not deliver to the worker: back to the queue without counting a retry. */
  async release(request: ReleaseJobsRequest): Promise<Ack> {
    const endpoint = await this.endpointFor(request);
    await this.dispatch.release(endpoint.id, request.workerId, request.jobIds, new Date());
    return { ok: true };
  }

  /**
   * job-done: `{status: "IN_PROGRESS", output}` is progress; `{error}` makes the
   * job FAILED (error stored as a string); otherwise COMPLETED with `output`. Only the first final
   * post of the worker holding the job counts; later or stray posts are acknowledged and dropped
   * (runpod-python retries posts, and a cancelled, timed-out or expired job keeps its state).
   */
  async done(request: JobDoneRequest): Promise<Ack> {
    const endpoint = await this.endpointFor(request);
    const seen = await this.seen(endpoint, request.workerId);
    const body = request.body ?? {};
    const now = new Date();
    if (body.status !== 'IN_PROGRESS') {
      const failed = isError(body.error);
      const result = {
        status: failed ? ('FAILED' as const) : ('COMPLETED' as const),
        output: 'output' in body ? body.output : undefined,
        error: failed ? errorString(body.error) : undefined,
      };
      const finished = await this.results.finish(
        endpoint.id,
        request.workerId,
        request.jobId,
        result,
        now,
      );
      if (finished) {
        await this.finished(endpoint, seen);
      } else {
        const job = await this.requireJob(endpoint, request.jobId); // unknown: 404
        this.logger.debug(
          {
            endpointId: endpoint.id,
            jobId: job.id,
            workerId: request.workerId,
            status: job.status,
          },
          'job-done dropped: the job is not running on this worker',
        );
      }
    } else {
      const job = await this.requireJob(endpoint, request.jobId);
      if (!isGone(job, now))
        await this.dispatch.progress(endpoint.id, request.workerId, job.id, body.output, now);
    }
    if (body.stopPod === true) {
      await this.workers.requestStop(endpoint.id, request.workerId);
      this.touched.delete(key(endpoint.id, request.workerId)); // its next take must see the request
      this.changes.changed(endpoint.id, ANY_JOB, { scaling: true }); // the autoscaler replaces it once it is free
    }
    return { ok: true };
  }

  /**
   * After a job finished on a worker (its waiters were woken by the transition): a managed worker
   * that works ends the start back-off.
   */
  private async finished(endpoint: EndpointRow, seen: SeenWorker): Promise<void> {
    if (seen.managed && endpoint.startFailures > 0) {
      await this.endpointRows.resetStartFailures(endpoint.id);
      await this.workers.forgetFailed(endpoint.id);
    }
  }

  /**
   * job-stream: stores the chunk (split when over 1 MB) for `/stream`, when the job is alive and
   * this worker's; otherwise acknowledged and dropped (unknown job: 404).
   */
  async stream(request: JobStreamRequest): Promise<Ack> {
    const endpoint = await this.endpointFor(request);
    await this.seen(endpoint, request.workerId);
    const body = request.body ?? {};
    const output = 'output' in body ? body.output : body;
    const parts = splitStreamOutput(output);
    const { workerId, jobId } = request;
    const stored = await this.dispatch.appendChunks(
      endpoint.id,
      workerId,
      jobId,
      parts,
      new Date(),
    );
    if (!stored) await this.requireJob(endpoint, jobId); // unknown: 404
    return { ok: true };
  }

  /**
   * Heartbeat: the worker is alive. Jobs it reports but no longer holds are put on its stop
   * channel. `status: "unhealthy"` (failed fitness check) means it is about to exit.
   *
   * Reconciliation: a ping that lists all the worker's jobs in progress and misses
   * one it was given more than two ping intervals ago means the answer that carried it never
   * arrived (the scheduler or queue-api died between the claim and the reply): the job goes back
   * to the queue instead of waiting for its execution timeout.
   */
  async ping(request: PingRequest): Promise<Ack> {
    const endpoint = await this.endpointFor(request);
    const now = new Date();
    if (request.status === 'unhealthy') {
      this.logger.warn(
        { endpointId: endpoint.id, workerId: request.workerId, reason: request.reason },
        'worker reports it is unhealthy',
      );
      this.touched.delete(key(endpoint.id, request.workerId));
      const lost = await this.workers.markUnhealthy(
        endpoint.id,
        request.workerId,
        `unhealthy: ${request.reason ?? 'the worker reported it'}`,
      );
      if (lost)
        await this.liveness.lost([lost], now, 'worker unhealthy: it failed its fitness check');
      return { ok: true };
    }
    await this.seen(endpoint, request.workerId, true);
    const twoPingsAgo = new Date(now.getTime() - 2 * this.settings.pingIntervalMs);
    if (request.jobIds.length) {
      await this.stops.stopIfNotHeld(
        endpoint.id,
        request.workerId,
        request.jobIds,
        now,
        twoPingsAgo,
      );
    }
    if (request.reportsJobs) {
      const { requeued, failed } = await this.jobTimers.requeueFromWorker(
        endpoint.id,
        request.workerId,
        now,
        'never reached the worker: missing from the jobs its pings list',
        { reported: request.jobIds, startedBefore: twoPingsAgo },
      );
      if (requeued.length || failed.length) {
        this.logger.warn(
          {
            endpointId: endpoint.id,
            workerId: request.workerId,
            requeued: requeued.map((j) => j.id),
            failed: failed.map((j) => j.id),
          },
          'jobs given to a worker never reached it; back to the queue',
        );
      }
    }
    return { ok: true };
  }

  /**
   * pod-rest saw a managed worker's process end without being asked (crash, exit): it is lost now
   * rather than after 3 missed pings, its jobs go back to the queue, and dying young counts as a
   * failed start (crash-loop back-off). A worker that asked to go (`stopPod`) exiting is no failure,
   * nor is one whose process ended with pod-rest (`hostRestarted`).
   */
  async exited(signal: WorkerExitedSignal): Promise<void> {
    const worker = await this.workers.find(signal.endpointId, signal.workerId);
    if (!worker?.managed) return;
    this.touched.delete(key(signal.endpointId, signal.workerId));
    const code = Number.isInteger(signal.exitCode) ? signal.exitCode : null;
    await this.workers.recordExit(
      signal.endpointId,
      signal.workerId,
      code,
      endedReason(code, signal.reason),
    );
    if (worker.stopRequested) {
      // It asked to go (stopPod): the autoscaler replaces it as any stop-requested worker; anything it still held is requeued.
      await this.jobTimers.requeueFromWorker(
        signal.endpointId,
        signal.workerId,
        new Date(),
        `${exitedWith(signal.exitCode)} after asking to stop`,
      );
      return;
    }
    const lost = await this.workers.markUnhealthy(signal.endpointId, signal.workerId, 'crashed');
    if (!lost) return; // already stopping, stopped or lost (every replica gets the signal; one acts)
    this.logger.warn(
      { endpointId: signal.endpointId, workerId: signal.workerId, exitCode: signal.exitCode },
      'worker process exited by itself',
    );
    await this.liveness.lost([lost], new Date(), exitedWith(signal.exitCode), {
      notItsFault: signal.hostRestarted === true,
    });
  }

  /** job-stop: long poll for jobs this worker must abandon; each is handed out once. */
  async stop(request: StopJobsRequest): Promise<StopJobsResponse> {
    const endpoint = await this.endpointFor(request);
    const deadline = Date.now() + request.waitMs;
    this.relay.pollArrived(request);
    for (;;) {
      if (!this.relay.isHeld(request)) return { jobsToStop: [] }; // its stops wait for the next poll
      const mark = this.changes.mark();
      await this.seen(endpoint, request.workerId);
      const jobsToStop = await this.stops.deliver(endpoint.id, request.workerId, new Date());
      const left = deadline - Date.now();
      if (jobsToStop.length || left <= 0 || this.changes.stopping) return { jobsToStop };
      await this.changes.waitForStops(
        endpoint.id,
        Math.min(left, this.settings.longPollRecheckMs),
        mark,
      );
    }
  }

  /**
   * Records the worker's call. Busy workers call often (take rounds, progress, chunks): those are
   * written at most every half ping interval (and every second); a ping always is.
   */
  private async seen(endpoint: EndpointRow, workerId: string, always = false): Promise<SeenWorker> {
    const k = key(endpoint.id, workerId);
    const cached = this.touched.get(k);
    const now = Date.now();
    if (!always && cached && now - cached.at < Math.min(1000, this.settings.pingIntervalMs / 2))
      return cached.seen;
    const seen = await this.workers.touch(
      {
        endpointId: endpoint.id,
        id: workerId,
        ownerId: endpoint.ownerId,
        pingIntervalMs: this.settings.pingIntervalMs,
        version: endpoint.version,
      },
      new Date(now),
    );
    if (seen.firstSeen && seen.managed) await this.workers.recordColdStart(endpoint.id, workerId);
    if (this.touched.size > 10_000) this.touched.clear(); // bounded: it is only an optimisation
    this.touched.set(k, { at: now, seen });
    return seen;
  }

  /**
   * The endpoint of a worker call. A managed worker's key acts as itself or as an external worker
   * of the endpoint, never as another managed worker (it could post that worker's results or mark
   * it unhealthy): checked before anything is written.
   */
  private async endpointFor(request: WorkerRequest): Promise<EndpointRow> {
    const endpoint = await this.endpoints.requireForWorker(request.endpointId, request.ownerId);
    if (request.keyWorkerId && request.keyWorkerId !== request.workerId) {
      const target = await this.workers.find(endpoint.id, request.workerId);
      if (target?.managed)
        throw new RunplaneError(
          403,
          `this key belongs to worker ${request.keyWorkerId}; it cannot act as worker ${request.workerId}, another managed worker`,
          [
            {
              path: 'workerId',
              message: `must not be another managed worker than ${request.keyWorkerId}`,
            },
          ],
          'WORKER_KEY_MISMATCH',
        );
    }
    return endpoint;
  }

  private async requireJob(endpoint: EndpointRow, jobId: string): Promise<JobState> {
    const job = await this.intake.find(jobId);
    if (!job || job.endpointId !== endpoint.id) throw jobNotFound(jobId);
    return job;
  }
}

const key = (endpointId: string, workerId: string) => `${endpointId}\u0000${workerId}`;
