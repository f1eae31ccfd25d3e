import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  isFinalStatus,
  JOB_LIMITS,
  SchedulerRpc,
  type Principal,
  type StreamResponse,
} from '@runplane/contracts';
import { LOGGER, toRunplaneError } from '@runplane/platform';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { BUS_MARGIN_MS, LongPolls } from '../http/long-polls.js';

interface JobScope {
  ownerId: string;
  endpointId: string;
  jobId: string;
}

/** Accept header asks for server-sent events (a Runplane addition to /stream). */
export function wantsEventStream(accept: string | string[] | undefined): boolean {
  return [accept ?? []].flat().some((a) => /\btext\/event-stream\b/i.test(a));
}

/**
 * `/stream/{id}`: each poll drains the chunks not returned before, waiting up to `wait` ms when
 * there are none and the job is not final. The SSE variant repeats polls until the job is final.
 */
@Injectable()
export class StreamService {
  constructor(
    private readonly bus: Bus,
    private readonly polls: LongPolls,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async poll(
    principal: Principal,
    endpointId: string,
    jobId: string,
    wait: number = JOB_LIMITS.streamWait.default,
  ): Promise<StreamResponse> {
    const scope = { ownerId: principal.userId, endpointId, jobId };
    const held = await this.polls.hold(() => this.drain(scope, wait));
    if (!held.ended) return held.value;
    // Shutting down: answer now with no chunks (those the abandoned poll drains are lost).
    const record = await this.bus.request(SchedulerRpc.getJob, scope);
    return { id: record.id, status: record.status, stream: [] };
  }

  /**
   * Writes chunks as `data: {"output": ...}` events until the job is final, then an `event: status`
   * with `{id, status}`, and ends. Errors before the first byte (unknown job...) are normal JSON
   * errors; later ones end the stream with an `event: error`.
   */
  async events(
    principal: Principal,
    endpointId: string,
    jobId: string,
    reply: FastifyReply,
    wait: number = JOB_LIMITS.streamWait.default,
  ): Promise<void> {
    const scope = { ownerId: principal.userId, endpointId, jobId };
    let last = await this.drain(scope, 0);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no', // proxies must not buffer the events
    });
    const write = (text: string) => {
      if (!res.destroyed) res.write(text);
    };
    const writeChunks = (r: StreamResponse) => {
      for (const chunk of r.stream) write(`data: ${JSON.stringify(chunk)}\n\n`);
    };
    try {
      writeChunks(last);
      while (!isFinalStatus(last.status)) {
        const held = await this.polls.hold(() => this.drain(scope, wait), res);
        if (held.ended) {
          if (held.reason === 'client-gone') return;
          break; // draining: end the stream with the status as last known
        }
        last = held.value;
        if (last.stream.length) writeChunks(last);
        else write(': keep-alive\n\n'); // also shows a dead connection before the next poll
      }
      write(`event: status\ndata: ${JSON.stringify({ id: last.id, status: last.status })}\n\n`);
    } catch (err) {
      const { error, unexpected } = toRunplaneError(err);
      if (unexpected) this.logger.error({ err, jobId }, 'event stream failed');
      write(`event: error\ndata: ${JSON.stringify(error.toBody())}\n\n`);
    } finally {
      res.end();
    }
  }

  private async drain(scope: JobScope, waitMs: number): Promise<StreamResponse> {
    const r = await this.bus.request(
      SchedulerRpc.streamJob,
      { ...scope, waitMs },
      { timeoutMs: waitMs + BUS_MARGIN_MS },
    );
    // `stream` is always an array: RunPod's JS SDK iterates it unconditionally.
    return { id: r.id, status: r.status, stream: Array.isArray(r.stream) ? r.stream : [] };
  }
}
