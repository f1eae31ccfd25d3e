/**
 * Requests in flight per key in this process. Concurrency is a property of open connections, so
 * each replica counts its own; QueueLimits gives each replica its share of the limit.
 */
export class ConcurrencyLimiter {
  private readonly inFlight = new Map<string, number>();

  /** Takes a slot if fewer than `limit` are taken; the returned function gives it back (once). */
  tryAcquire(key: string, limit: number): (() => void) | null {
    const current = this.inFlight.get(key) ?? 0;
    if (current >= limit) return null;
    this.inFlight.set(key, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  current(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }
}
