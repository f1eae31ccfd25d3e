import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  RunplaneError,
  SchedulerRpc,
  WORKER_LONG_POLL_MS,
  type Ack,
  type Principal,
  type WorkerJob,
} from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { BUS_MARGIN_MS } from '../http/long-polls.js';
import { queryFlag, queryList, type WorkerCall } from './worker-call.js';
import { WorkerPolls } from './worker-polls.js';

/** Jobs handed to a worker, and how to put them back if the HTTP response does not arrive. */
export interface Handout {
  jobs: WorkerJob[];
  giveBack(): Promise<void>;
}

const MAX_BATCH = 100;
const MAX_REASON = 256; // the SDK truncates its reason to 256 characters too

/** The worker protocol, carried out by the scheduler over the bus. */
@Injectable()
export class WorkerService {
  constructor(
    private readonly bus: Bus,
    private readonly polls: WorkerPolls,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Long-polls for up to `batchSize` jobs. If the client leaves or shutdown starts first, the poll
   * ends with no jobs and whatever the scheduler still hands out is given back.
   */
  async take(
    principal: Principal,
    endpointId: string,
    call: WorkerCall,
    batchSize: number,
    res: ServerResponse,
  ): Promise<Handout> {
    const worker = {
      ownerId: principal.userId,
      endpointId,
      workerId: call.workerId,
      keyWorkerId: principal.workerId ?? undefined,
    };
    const giveBack = (jobs: WorkerJob[]) => this.release(worker, jobs);
    const wanted = Math.min(MAX_BATCH, Math.max(1, batchSize));
    const held = await this.polls.hold(
      (poll) =>
        this.bus.request(
          SchedulerRpc.takeJobs,
          { ...worker, ...poll, batchSize: wanted, waitMs: WORKER_LONG_POLL_MS },
          { timeoutMs: WORKER_LONG_POLL_MS + BUS_MARGIN_MS },
        ),
      res,
      (late) => giveBack(late.jobs),
    );
    if (held.ended) return { jobs: [], giveBack: async () => {} };
    const jobs = held.value.jobs ?? [];
    // Never more than asked for: extra jobs would be lost by a worker that expects one object.
    const extra = jobs.splice(wanted);
    if (extra.length) await giveBack(extra);
    return { jobs, giveBack: () => giveBack(jobs) };
  }

  /** job-done: `{output}`, `{error}`, progress `{status: "IN_PROGRESS", output}`, `stopPod`. */
  done(principal: Principal, endpointId: string, call: WorkerCall, body: unknown): Promise<Ack> {
    return this.bus.request(SchedulerRpc.jobDone, {
      ownerId: principal.userId,
      endpointId,
      workerId: call.workerId,
      keyWorkerId: principal.workerId ?? undefined,
      jobId: call.jobId!,
      body: jsonObject(body, 'job-done'),
      isStream: queryFlag(call.query.isStream),
    });
  }

  /** job-stream: one chunk, normally `{output}`. */
  stream(principal: Principal, endpointId: string, call: WorkerCall, body: unknown): Promise<Ack> {
    return this.bus.request(SchedulerRpc.jobStream, {
      ownerId: principal.userId,
      endpointId,
      workerId: call.workerId,
      keyWorkerId: principal.workerId ?? undefined,
      jobId: call.jobId!,
      body: jsonObject(body, 'job-stream'),
    });
  }

  /** Heartbeat with the jobs in progress; `status=unhealthy` is the fitness-check failure ping. */
  ping(principal: Principal, endpointId: string, call: WorkerCall): Promise<Ack> {
    const unhealthy = call.query.status?.toLowerCase() === 'unhealthy';
    const reason = [call.query.check, call.query.reason]
      .filter(Boolean)
      .join(': ')
      .slice(0, MAX_REASON);
    return this.bus.request(SchedulerRpc.ping, {
      ownerId: principal.userId,
      endpointId,
      workerId: call.workerId,
      keyWorkerId: principal.workerId ?? undefined,
      jobIds: queryList(call.query.job_id),
      // runpod-python and the worker SDK list all their jobs in progress, and name their version.
      ...(call.query.runpod_version !== undefined ? { reportsJobs: true } : {}),
      ...(unhealthy ? { status: 'unhealthy' as const, ...(reason ? { reason } : {}) } : {}),
    });
  }

  /**
   * job-stop: long-polls for job ids the worker must abandon. Ids fetched after the client left or
   * shutdown started cannot be given back (the contract has no operation for it).
   */
  async stop(
    principal: Principal,
    endpointId: string,
    call: WorkerCall,
    res: ServerResponse,
  ): Promise<string[]> {
    const held = await this.polls.hold(
      (poll) =>
        this.bus.request(
          SchedulerRpc.stopJobs,
          {
            ownerId: principal.userId,
            endpointId,
            workerId: call.workerId,
            keyWorkerId: principal.workerId ?? undefined,
            ...poll,
            waitMs: WORKER_LONG_POLL_MS,
          },
          { timeoutMs: WORKER_LONG_POLL_MS + BUS_MARGIN_MS },
        ),
      res,
    );
    return held.ended ? [] : (held.value.jobsToStop ?? []);
  }

  private async release(
    worker: { ownerId: string; endpointId: string; workerId: string },
    jobs: WorkerJob[],
  ): Promise<void> {
    if (!jobs.length) return;
    const jobIds = jobs.map((j) => j.id);
    try {
      await this.bus.request(SchedulerRpc.releaseJobs, { ...worker, jobIds });
    } catch (err) {
      // The jobs stay assigned to this worker until the scheduler's own timers (ttl, timeout) catch them.
      this.logger.warn(
        { err: String(err), endpointId: worker.endpointId, workerId: worker.workerId, jobIds },
        'giving back undelivered jobs failed',
      );
    }
  }
}

/** Result bodies are raw JSON whatever the content-type (the platform parses them); it must be an object. */
function jsonObject(body: unknown, route: string): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw RunplaneError.badRequest(`${route} body must be a JSON object such as {"output": ...}`, [
      { path: 'body', message: 'must be a JSON object' },
    ]);
  }
  return body as Record<string, unknown>;
}
