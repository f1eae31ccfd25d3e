import type { Headers } from '../bus.js';

/** An event as the in-process bus stores it. */
export interface JournalEvent {
  id: string;
  subject: string;
  payload: unknown;
  headers: Headers;
  publishedAt: string;
}

/**
 * How long an event id keeps de-duplicating publishes after its event was fully handled (JetStream's
 * duplicate window on NatsBus is the same). Pending and dead-lettered events de-duplicate as long as
 * they are held.
 */
export const DEDUP_WINDOW_MS = 2 * 60 * 1000;

export interface PendingDelivery {
  event: JournalEvent;
  /** Deliveries already attempted (0 for a new event). */
  attempts: number;
}

/**
 * Where the in-process bus keeps events until every consumer group has settled them. With a
 * persistent journal (the standalone server uses its embedded Postgres), events published before a
 * crash are delivered after the restart, as JetStream would.
 */
export interface EventJournal {
  /**
   * Stores the event with one pending delivery per group; false when the id is already held or was
   * handled less than DEDUP_WINDOW_MS ago (an outbox relay re-publishing after a crash).
   */
  append(event: JournalEvent, groups: readonly string[]): Promise<boolean>;
  /** Unsettled deliveries of `subject` for `group`, oldest first. */
  pending(subject: string, group: string): Promise<PendingDelivery[]>;
  /** Records a failed attempt (so a restart resumes with the right delivery count). */
  recordAttempt(eventId: string, group: string, error: string): Promise<void>;
  /**
   * The group is done with the event: handled, or dead-lettered after too many attempts. Events
   * every group handled are dropped once the de-duplication window is over; dead letters are kept.
   */
  settle(eventId: string, group: string, outcome: 'acked' | 'dead', error?: string): Promise<void>;
  close(): Promise<void>;
}

interface MemoryDelivery {
  attempts: number;
  state: 'pending' | 'acked' | 'dead';
  error?: string;
}

/** Journal for unit tests: survives a bus restart only if the same instance is passed again. */
export class MemoryJournal implements EventJournal {
  private readonly events = new Map<string, JournalEvent>();
  private readonly deliveries = new Map<string, Map<string, MemoryDelivery>>();
  /** Ids of events every group acknowledged, with their publish time, kept for de-duplication. */
  private readonly handled = new Map<string, number>();

  async append(event: JournalEvent, groups: readonly string[]): Promise<boolean> {
    const horizon = Date.now() - DEDUP_WINDOW_MS;
    for (const [id, at] of this.handled) {
      if (at >= horizon) break; // insertion order is roughly publish order
      this.handled.delete(id);
    }
    if (this.events.has(event.id) || this.handled.has(event.id)) return false;
    this.events.set(event.id, event);
    this.deliveries.set(
      event.id,
      new Map(groups.map((g) => [g, { attempts: 0, state: 'pending' as const }])),
    );
    return true;
  }

  async pending(subject: string, group: string): Promise<PendingDelivery[]> {
    const out: PendingDelivery[] = [];
    for (const event of this.events.values()) {
      const d = this.deliveries.get(event.id)?.get(group);
      if (event.subject === subject && d?.state === 'pending')
        out.push({ event, attempts: d.attempts });
    }
    return out;
  }

  async recordAttempt(eventId: string, group: string, error: string): Promise<void> {
    const d = this.deliveries.get(eventId)?.get(group);
    if (d) {
      d.attempts += 1;
      d.error = error;
    }
  }

  async settle(
    eventId: string,
    group: string,
    outcome: 'acked' | 'dead',
    error?: string,
  ): Promise<void> {
    const byGroup = this.deliveries.get(eventId);
    const d = byGroup?.get(group);
    if (!d) return;
    d.state = outcome;
    d.error = error;
    if ([...byGroup!.values()].every((x) => x.state === 'acked')) {
      this.handled.set(eventId, Date.parse(this.events.get(eventId)!.publishedAt));
      this.events.delete(eventId);
      this.deliveries.delete(eventId);
    }
  }

  /** Dead-lettered deliveries still held (for tests and diagnostics). */
  deadLetters(): Array<{ eventId: string; group: string; error?: string }> {
    const out: Array<{ eventId: string; group: string; error?: string }> = [];
    for (const [eventId, byGroup] of this.deliveries)
      for (const [group, d] of byGroup)
        if (d.state === 'dead') out.push({ eventId, group, error: d.error });
    return out;
  }

  async close(): Promise<void> {}
}
