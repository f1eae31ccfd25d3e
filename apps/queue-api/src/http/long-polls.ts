import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { LOGGER, ReadinessService } from '@runplane/platform';
import { setMaxListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** Margin on top of a long poll's wait for the bus reply (the scheduler answers at the end of the wait). */
export const BUS_MARGIN_MS = 5_000;

export type Held<T> =
  { ended: false; value: T } | { ended: true; reason: 'client-gone' | 'draining' };

/** True once the HTTP client of `res` went away without having received the whole response. */
export function clientGone(res: ServerResponse): boolean {
  return res.destroyed && !res.writableFinished;
}

/**
 * Resolves true when the response was handed over completely, false when the connection closed
 * before (the client left, so whatever the response carried did not arrive).
 */
export function delivered(res: ServerResponse): Promise<boolean> {
  if (res.writableFinished) return Promise.resolve(true);
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    res.once('finish', () => resolve(true));
    res.once('close', () => resolve(res.writableFinished));
  });
}

/**
 * Long polls (runsync, status-sync, stream, job-take, job-stop) wait on a bus request that may
 * take up to minutes. They end early when the server starts shutting down, so that HTTP can close
 * within the shutdown timeout, and (for callers that pass the response) when the client leaves.
 */
@Injectable()
export class LongPolls implements OnModuleDestroy {
  private readonly shutdown = new AbortController();

  constructor(
    private readonly readiness: ReadinessService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    // Every poll in flight listens to it (each worker holds a job-take and a job-stop): past
    // Node's default of 10 it warned of a leak that is not one.
    setMaxListeners(0, this.shutdown.signal);
  }

  get draining(): boolean {
    return this.shutdown.signal.aborted || this.readiness.isDraining;
  }

  /** Nest runs destroy hooks before it closes the HTTP server: release the polls now. */
  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  /**
   * Starts `start()` and waits for it, unless shutdown starts (or the client of `res` leaves)
   * first; when either already happened, nothing is started. Once a poll ended early, `onLate`
   * receives what it still produces, so work handed out meanwhile can be given back.
   */
  async hold<T>(
    start: () => Promise<T>,
    res?: ServerResponse,
    onLate?: (value: T) => Promise<unknown>,
  ): Promise<Held<T>> {
    if (this.draining) return { ended: true, reason: 'draining' };
    if (res && clientGone(res)) return { ended: true, reason: 'client-gone' };
    const work = start();
    let cleanup = () => {};
    const early = new Promise<'client-gone' | 'draining'>((resolve) => {
      const onAbort = () => resolve('draining');
      const onClose = () => {
        if (!res!.writableFinished) resolve('client-gone');
      };
      this.shutdown.signal.addEventListener('abort', onAbort, { once: true });
      res?.once('close', onClose);
      cleanup = () => {
        this.shutdown.signal.removeEventListener('abort', onAbort);
        res?.off('close', onClose);
      };
    });
    try {
      const outcome = await Promise.race([work.then((value) => ({ value })), early]);
      if (typeof outcome === 'object') return { ended: false, value: outcome.value };
      this.abandon(work, outcome, onLate);
      return { ended: true, reason: outcome };
    } finally {
      cleanup();
    }
  }

  private abandon<T>(
    work: Promise<T>,
    reason: 'client-gone' | 'draining',
    onLate?: (value: T) => Promise<unknown>,
  ): void {
    work
      .then((value) => onLate?.(value))
      .catch((err) => this.logger.warn({ err: String(err), reason }, 'abandoned long poll failed'));
  }
}
