import type { Headers } from '../bus.js';

/** An event as the in-process bus stores it. */
export interface JournalEvent {
  id: string;
  subject: string;
  payload: unknown;
  headers: Headers;
  publishedAt: string;
}

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
  /** Stores the event with one pending delivery per group; false when the id was already stored. */
  append(event: JournalEvent, groups: readonly string[]): Promise<boolean>;
  /** Unsettled deliveries of `subject` for `group`, oldest first. */
  pending(subject: string, group: string): Promise<PendingDelivery[]>;
  /** Records a failed attempt (so a restart resumes with the right delivery count). */
  recordAttempt(eventId: string, group: string, error: string): Promise<void>;
  /** The group is done with the event: handled, or dead-lettered after too many attempts. */
  settle(eventId: string, group: string, outcome: 'acked' | 'dead', error?: string): Promise<void>;
  close(): Promise<void>;
}

interface MemoryDelivery { attempts: number; state: 'pending' | 'acked' | 'dead'; error?: string }

/** Journal for unit tests: survives a bus restart only if the same instance is passed again. */
export class MemoryJournal implements EventJournal {
  private readonly events = new Map<string, JournalEvent>();
  private readonly deliveries = new Map<string, Map<string, MemoryDelivery>>();

  async append(event: JournalEvent, groups: readonly string[]): Promise<boolean> {
    if (this.events.has(event.id)) return false;
    this.events.set(event.id, event);
    this.deliveries.set(event.id, new Map(groups.map((g) => [g, { attempts: 0, state: 'pending' as const }])));
    return true;
  }

  async pending(subject: string, group: string): Promise<PendingDelivery[]> {
    const out: PendingDelivery[] = [];
    for (const event of this.events.values()) {
      const d = this.deliveries.get(event.id)?.get(group);
      if (event.subject === subject && d?.state === 'pending') out.push({ event, attempts: d.attempts });
    }
    return out;
  }

  async recordAttempt(eventId: string, group: string, error: string): Promise<void> {
    const d = this.deliveries.get(eventId)?.get(group);
    if (d) { d.attempts += 1; d.error = error; }
  }

  async settle(eventId: string, group: string, outcome: 'acked' | 'dead', error?: string): Promise<void> {
    const byGroup = this.deliveries.get(eventId);
    const d = byGroup?.get(group);
    if (!d) return;
    d.state = outcome;
    d.error = error;
    if ([...byGroup!.values()].every((x) => x.state !== 'pending')) {
      this.events.delete(eventId);
      this.deliveries.delete(eventId);
    }
  }

  /** Dead-lettered deliveries still held (for tests and diagnostics). */
  deadLetters(): Array<{ eventId: string; group: string; error?: string }> {
    const out: Array<{ eventId: string; group: string; error?: string }> = [];
    for (const [eventId, byGroup] of this.deliveries) for (const [group, d] of byGroup) if (d.state === 'dead') out.push({ eventId, group, error: d.error });
    return out;
  }

  async close(): Promise<void> {}
}
