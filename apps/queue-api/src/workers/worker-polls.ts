import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { QueueApiSignals } from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { LongPolls, type Held } from '../http/long-polls.js';
import { ReplicaRegistry } from '../limits/replica-registry.js';

/** What names a held worker poll in its bus request (`WorkerPollRequest`). */
export interface WorkerPoll {
  relay: string;
  pollId: string;
}

/**
 * The workers' long polls (job-take, job-stop) this replica holds at the scheduler: each named in
 * its bus request, and those whose worker left before the answer reported. The scheduler counts a
 * held poll's rounds as hearing its worker, which a worker that died must not keep doing until
 * the poll's wait ends.
 */
@Injectable()
export class WorkerPolls {
  private opened = 0;
  private ended: string[] = [];

  constructor(
    private readonly bus: Bus,
    private readonly polls: LongPolls,
    private readonly replicas: ReplicaRegistry,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** `LongPolls.hold` for a worker's poll: `start` gets the names to put in its bus request. */
  async hold<T>(
    start: (poll: WorkerPoll) => Promise<T>,
    res: ServerResponse,
    onLate?: (value: T) => Promise<unknown>,
  ): Promise<Held<T>> {
    const poll = { relay: this.replicas.id, pollId: `${this.replicas.id}/${++this.opened}` };
    const held = await this.polls.hold(() => start(poll), res, onLate);
    if (held.ended && held.reason === 'client-gone') this.left(poll);
    return held;
  }

  /** The poll's worker left: reported together with the others of this event-loop turn. */
  private left(poll: WorkerPoll): void {
    if (!this.ended.length) setImmediate(() => void this.report());
    this.ended.push(poll.pollId);
  }

  private async report(): Promise<void> {
    const polls = this.ended;
    this.ended = [];
    try {
      await this.bus.signal(QueueApiSignals.workerPollsEnded, { replica: this.replicas.id, polls });
    } catch (err) {
      // Best effort: without it the poll counts until its wait ends, as it did before.
      this.logger.warn(
        { err: String(err), polls: polls.length },
        'reporting ended worker polls failed',
      );
    }
  }
}
