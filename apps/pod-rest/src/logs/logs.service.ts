import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  RunplaneError,
  SchedulerRpc,
  type JobEvent,
  type Principal,
  type WorkloadLogLine,
} from '@runplane/contracts';
import { LOGGER, toRunplaneError, type Logger } from '@runplane/platform';
import type { FastifyReply } from 'fastify';
import { PodsRepository, type PodRow } from '../pods/pods.repository.js';
import { LogCollector } from './log-collector.js';
import { LogLinesRepository, type StoredLogLine } from './log-lines.repository.js';
import { MAX_LOG_LINES } from './log-query.dto.js';

/** A follower with nothing new checks the workload's state this often, and sends a heartbeat. */
const FOLLOW_IDLE_MS = 15_000;
/** Events that end a worker's hold on a job (the next TAKEN starts another). */
const HOLD_ENDS = new Set<JobEvent['type']>([
  'REQUEUED',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMED_OUT',
  'EXPIRED',
]);

export interface LogRequest {
  tail?: number;
  /** ISO 8601 time, or seconds before now. */
  since?: string;
}

/**
 * The logs of Pods and serverless workers, read from pod-rest's database (LogCollector writes
 * them). Another user's Pod, worker or endpoint is "not found".
 */
@Injectable()
export class LogsService implements OnModuleDestroy {
  private readonly shutdown = new AbortController();

  constructor(
    private readonly lines: LogLinesRepository,
    private readonly collector: LogCollector,
    private readonly pods: PodsRepository,
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Followers end before HTTP closes. */
  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  /** The caller's Pod (a worker's too), or 404. */
  async pod(principal: Principal, podId: string): Promise<PodRow> {
    const pod = await this.pods.findVisible(principal.userId, podId, true);
    if (!pod) throw RunplaneError.notFound(`pod ${podId} not found`, 'POD_NOT_FOUND');
    return pod;
  }

  /** The caller's worker of the caller's endpoint, or 404. */
  async worker(principal: Principal, endpointId: string, workerId: string): Promise<PodRow> {
    const pod = await this.pods.findOwned(principal.userId, workerId);
    if (!pod || pod.endpointId !== endpointId)
      throw RunplaneError.notFound(
        `worker ${workerId} of endpoint ${endpointId} not found`,
        'WORKER_NOT_FOUND',
      );
    return pod;
  }

  async read(pod: PodRow, q: LogRequest): Promise<WorkloadLogLine[]> {
    const rows = await this.lines.read(pod.id, {
      since: sinceOf(q.since),
      tail: q.tail ?? MAX_LOG_LINES,
    });
    return rows.map(view);
  }

  /**
   * Server-sent events: the lines asked for, then each new one as it is written, one `data:` JSON
   * line each, until the workload has ended and all its lines were sent, the client leaves or the
   * server stops. A comment line now and then keeps proxies from closing a quiet stream.
   */
  async follow(pod: PodRow, q: LogRequest, reply: FastifyReply): Promise<void> {
    const since = sinceOf(q.since); // a 400 before the stream starts
    reply.hijack();
    const res = reply.raw;
    const left = new AbortController();
    const gone = () => left.abort();
    res.once('close', gone);
    this.shutdown.signal.addEventListener('abort', gone, { once: true });
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no', // proxies must not buffer the events
    });
    const send = (rows: StoredLogLine[]) => {
      for (const row of rows) res.write(`data: ${JSON.stringify(view(row))}\n\n`);
      return rows.at(-1)?.id;
    };
    try {
      let cursor = send(await this.lines.read(pod.id, { since, tail: q.tail ?? MAX_LOG_LINES }));
      while (!left.signal.aborted) {
        // Checked before reading: lines written before the end was seen are still read below.
        const ended = await this.ended(pod.id);
        let rows: StoredLogLine[];
        do {
          rows = await this.lines.read(pod.id, { afterId: cursor, since });
          cursor = send(rows) ?? cursor;
        } while (rows.length && !left.signal.aborted);
        if (ended) break;
        await this.collector.waitForLines(pod.id, FOLLOW_IDLE_MS, left.signal);
        if (!left.signal.aborted) res.write(': keep-alive\n\n');
      }
    } catch (err) {
      const { error, unexpected } = toRunplaneError(err);
      if (unexpected) this.logger.error({ err, podId: pod.id }, 'log stream failed');
      if (!res.destroyed) res.write(`event: error\ndata: ${JSON.stringify(error.toBody())}\n\n`);
    } finally {
      res.off('close', gone);
      this.shutdown.signal.removeEventListener('abort', gone);
      res.end();
    }
  }

  /**
   * What the endpoint's workers wrote while they held the job: from each TAKEN of the job's
   * history to the event that ended that hold (a requeue or the job's end; still held: now).
   */
  async forJob(
    principal: Principal,
    endpointId: string,
    jobId: string,
  ): Promise<WorkloadLogLine[]> {
    const events = await this.bus.request(SchedulerRpc.jobEvents, {
      ownerId: principal.userId,
      endpointId,
      jobId,
    });
    const holds: Array<{ workerId: string; from: Date; to?: Date }> = [];
    for (const event of events) {
      const open = holds.at(-1);
      if (event.type === 'TAKEN' && event.workerId) {
        if (open && !open.to) open.to = new Date(event.at);
        holds.push({ workerId: event.workerId, from: new Date(event.at) });
      } else if (HOLD_ENDS.has(event.type) && open && !open.to) open.to = new Date(event.at);
    }
    const found: StoredLogLine[] = [];
    for (const hold of holds) {
      const worker = await this.pods.findOwned(principal.userId, hold.workerId);
      if (worker?.endpointId !== endpointId) continue;
      found.push(...(await this.lines.read(worker.id, { since: hold.from, until: hold.to })));
    }
    return found
      .sort((a, b) => a.at.getTime() - b.at.getTime() || (a.id < b.id ? -1 : 1))
      .map(view);
  }

  /** The workload ended and every line it wrote is in the database. */
  private async ended(podId: string): Promise<boolean> {
    const pod = await this.pods.findById(podId);
    return !pod || (pod.exitedAt !== null && !this.collector.hasUnwritten(podId));
  }
}

function view(row: StoredLogLine): WorkloadLogLine {
  return { at: row.at.toISOString(), stream: row.stream, text: row.text };
}

function sinceOf(since: string | undefined): Date | undefined {
  if (since === undefined) return undefined;
  const at = /^\d+$/.test(since) ? new Date(Date.now() - Number(since) * 1000) : new Date(since);
  if (Number.isNaN(at.getTime()))
    throw RunplaneError.badRequest('since is not a valid time', [
      { path: 'since', message: 'must be an ISO 8601 time or a number of seconds' },
    ]);
  return at;
}
