import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { QueueApiSignals } from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import type { Logger } from 'pino';
import { ReplicaRegistry } from '../limits/replica-registry.js';

/** What names a held worker poll in its bus request (`WorkerPollRequest`). */
export interface WorkerPoll {
  relay: string;
  pollId: string;
}

/**
 * Names the workers' long polls (job-take, job-stop) this replica holds at the scheduler, and
 * reports those whose worker left before the answer: the scheduler counts a held poll's rounds as
 * hearing its worker, which a worker that died must not keep doing until the poll's wait ends.
 */
@Injectable()
export class WorkerPolls {
  private opened = 0;
  private ended: string[] = [];

  constructor(
    private readonly bus: Bus,
    private readonly replicas: ReplicaRegistry,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  open(): WorkerPoll {
    return { relay: this.replicas.id, pollId: `${this.replicas.id}/${++this.opened}` };
  }

  /** The poll's worker left: reported together with the others of this event-loop turn. */
  left(poll: WorkerPoll): void {
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
