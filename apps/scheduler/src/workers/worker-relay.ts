import { Injectable } from '@nestjs/common';
import { RELAY_SILENT_AFTER_MS, type WorkerPollRequest } from '@runplane/contracts';

/** How long an ended poll is remembered: longer than any poll is held (its wait and margins). */
const ENDED_POLL_MEMORY_MS = 120_000;
/** Replicas unheard this long are forgotten (each restart of queue-api is a new replica id). */
const REPLICA_MEMORY_MS = 600_000;

/**
 * Whether queue-api is relaying workers' calls to this replica, and still holding each worker's
 * long poll. Its replicas announce themselves on the bus (`QueueApiSignals.workerRelay`): while
 * none has lately, workers cannot be heard, so their silence proves nothing (the sweeper counts
 * that time as deaf). A held poll counts as hearing its worker only while its replica announces
 * itself and has not reported the worker gone (`QueueApiSignals.workerPollsEnded`).
 */
@Injectable()
export class WorkerRelay {
  private heardAt = Number.NEGATIVE_INFINITY;
  /** Replica → when it last announced itself or relayed a poll. */
  private readonly replicas = new Map<string, number>();
  /** Ended poll ids → when they ended (insertion order is time order). */
  private readonly endedPolls = new Map<string, number>();

  /** A queue-api replica announced itself (older replicas name none). */
  heard(replica?: string): void {
    this.heardAt = Date.now();
    if (replica !== undefined) this.relays(replica);
  }

  /** True when some queue-api replica announced itself within the last RELAY_SILENT_AFTER_MS. */
  isRelaying(): boolean {
    return Date.now() - this.heardAt <= RELAY_SILENT_AFTER_MS;
  }

  /** A poll arrived: its replica relays now, before its next announcement. */
  pollArrived(poll: WorkerPollRequest): void {
    if (poll.relay !== undefined) this.relays(poll.relay);
  }

  /** Polls whose worker left queue-api before the answer. */
  pollsEnded(pollIds: string[]): void {
    const now = Date.now();
    for (const id of pollIds) this.endedPolls.set(id, now);
    forgetOlderThan(this.endedPolls, ENDED_POLL_MEMORY_MS, now);
  }

  /**
   * Whether someone still waits for this poll's answer: its worker has not left and its replica
   * still announces itself. A poll from an older queue-api (no relay named) always is.
   */
  isHeld(poll: WorkerPollRequest): boolean {
    if (poll.pollId !== undefined && this.endedPolls.has(poll.pollId)) return false;
    if (poll.relay === undefined) return true;
    const at = this.replicas.get(poll.relay);
    return at !== undefined && Date.now() - at <= RELAY_SILENT_AFTER_MS;
  }

  private relays(replica: string): void {
    const now = Date.now();
    this.replicas.delete(replica); // re-inserted last: the map stays in order of last hearing
    this.replicas.set(replica, now);
    forgetOlderThan(this.replicas, REPLICA_MEMORY_MS, now);
  }
}

/** Drops the entries older than `maxAgeMs` from a map kept in order of its times, oldest first. */
function forgetOlderThan(times: Map<string, number>, maxAgeMs: number, now: number): void {
  for (const [key, at] of times) {
    if (now - at <= maxAgeMs) return;
    times.delete(key);
  }
}
