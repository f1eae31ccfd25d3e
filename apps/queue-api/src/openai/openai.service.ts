import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  isFinalStatus,
  JOB_LIMITS,
  RunplaneError,
  SchedulerRpc,
  type JobRecord,
  type JobRequestDto,
  type Principal,
  type StreamResponse,
} from '@runplane/contracts';
import { LOGGER, toRunplaneError } from '@runplane/platform';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { BUS_MARGIN_MS, LongPolls } from '../http/long-polls.js';
import { newJobId } from '../jobs/job-ids.js';

interface JobScope {
  ownerId: string;
  endpointId: string;
  jobId: string;
}

/** How a job that did not complete is reported to an OpenAI client. */
const UNFINISHED: Record<string, { status: number; code: string }> = {
  FAILED: { status: 500, code: 'JOB_FAILED' },
  TIMED_OUT: { status: 504, code: 'JOB_TIMED_OUT' },
  CANCELLED: { status: 409, code: 'JOB_CANCELLED' },
};

/**
 * `/v2/{endpointId}/openai/v1/*`: the request becomes a job with input
 * `{openai_route, openai_input}`; a `"stream": true` request relays the worker's streamed strings
 * as `text/event-stream`, any other answers the first element of the output list (or the output).
 * A client that leaves cancels its job: nobody can read the answer any more.
 */
@Injectable()
export class OpenAiService {
  constructor(
    private readonly bus: Bus,
    private readonly polls: LongPolls,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async relay(
    principal: Principal,
    endpointId: string,
    route: string,
    body: unknown,
    reply: FastifyReply,
  ): Promise<void> {
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw RunplaneError.badRequest('the request body must be a JSON object', [
        { path: 'body', message: 'must be a JSON object' },
      ]);
    }
    const input =
      body === undefined ? { openai_route: route } : { openai_route: route, openai_input: body };
    const jobId = newJobId('runsync');
    const scope = { ownerId: principal.userId, endpointId, jobId };
    await this.bus.request(SchedulerRpc.submitJob, {
      ...scope,
      mode: 'runsync',
      job: { input } as JobRequestDto,
    });
    if ((body as { stream?: unknown } | undefined)?.stream === true)
      return this.relayStream(scope, reply);

    const record = await this.awaitFinal(scope, reply);
    if (!record) return; // the client left (job cancelled) or the server is shutting down
    if (record.status !== 'COMPLETED') throw unfinished(record);
    reply
      .status(200)
      .send(Array.isArray(record.output) ? (record.output[0] ?? null) : (record.output ?? null));
  }

  /** Polls awaitJob until the job is final; null when the client left or shutdown started first. */
  private async awaitFinal(scope: JobScope, reply: FastifyReply): Promise<JobRecord | null> {
    for (;;) {
      const waitMs = JOB_LIMITS.runsyncWait.max;
      const held = await this.polls.hold(
        () =>
          this.bus.request(
            SchedulerRpc.awaitJob,
            { ...scope, waitMs },
            { timeoutMs: waitMs + BUS_MARGIN_MS },
          ),
        reply.raw,
      );
      if (held.ended) {
        if (held.reason === 'client-gone') await this.cancel(scope);
        else throw RunplaneError.unavailable('the server is shutting down; the job keeps running');
        return null;
      }
      if (isFinalStatus(held.value.status)) return held.value;
    }
  }

  private async relayStream(scope: JobScope, reply: FastifyReply): Promise<void> {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    const write = (text: string) => {
      if (!res.destroyed) res.write(text);
    };
    try {
      let last: StreamResponse;
      do {
        const waitMs = JOB_LIMITS.streamWait.default;
        const held = await this.polls.hold(
          () =>
            this.bus.request(
              SchedulerRpc.streamJob,
              { ...scope, waitMs },
              { timeoutMs: waitMs + BUS_MARGIN_MS },
            ),
          res,
        );
        if (held.ended) {
          if (held.reason === 'client-gone') await this.cancel(scope);
          return;
        }
        last = held.value;
        // worker-vllm streams ready-made SSE text ("data: {...}\n\n"); anything else becomes one event
        for (const chunk of last.stream ?? [])
          write(
            typeof chunk.output === 'string'
              ? chunk.output
              : `data: ${JSON.stringify(chunk.output)}\n\n`,
          );
      } while (!isFinalStatus(last.status));
      if (last.status !== 'COMPLETED') {
        const record = await this.bus.request(SchedulerRpc.getJob, scope);
        write(
          `data: ${JSON.stringify({ error: { message: unfinished(record).message, type: 'worker_error', code: null } })}\n\n`,
        );
      }
    } catch (err) {
      const { error, unexpected } = toRunplaneError(err);
      if (unexpected) this.logger.error({ err, jobId: scope.jobId }, 'openai stream failed');
      write(
        `data: ${JSON.stringify({ error: { message: error.message, type: 'server_error', code: error.code } })}\n\n`,
      );
    } finally {
      res.end();
    }
  }

  private async cancel(scope: JobScope): Promise<void> {
    await this.bus
      .request(SchedulerRpc.cancelJob, scope)
      .catch((err) =>
        this.logger.warn(
          { err: String(err), jobId: scope.jobId },
          'cancelling the job of a departed OpenAI client failed',
        ),
      );
  }
}

function unfinished(record: JobRecord): RunplaneError {
  const { status, code } = UNFINISHED[record.status] ?? { status: 500, code: 'JOB_FAILED' };
  const why = record.error ? `: ${record.error}` : '';
  return new RunplaneError(
    status,
    `job ${record.id} ended ${record.status}${why}`,
    undefined,
    code,
  );
}
