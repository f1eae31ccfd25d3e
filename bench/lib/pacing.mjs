// An open-loop load at a fixed rate, paced by the clock.
import { now, sleep } from './measure.mjs';

/**
 * Calls `offer(n)` `rate` times per second while `isOn()` holds, without waiting for the calls.
 * Each tick offers every call due by the clock so far: a loop that sleeps 1/rate between calls
 * falls behind by each timer's lateness (at 100/s on a busy 2-core machine its 10 ms sleeps took
 * 13.5 ms, and the chaos suite offered 74 jobs/s where it meant 100). With `maxInFlight`, calls
 * over it wait for one to settle and are offered late, not dropped. Resolves once the load is off
 * and every offered call has settled, with the number offered and the load's length in seconds.
 */
export async function offerAtRate({ rate, isOn, offer, maxInFlight = Infinity, tickMs = 5 }) {
  if (!(rate > 0)) throw new Error(`rate must be a number above 0, not ${rate}`);
  const inFlight = new Set();
  const started = now();
  let offered = 0;
  while (isOn()) {
    const due = Math.floor(((now() - started) * rate) / 1000);
    for (; offered < due && inFlight.size < maxInFlight; offered++) {
      const call = Promise.resolve(offered)
        .then(offer)
        .catch(() => {}) // the caller records its own failures
        .finally(() => inFlight.delete(call));
      inFlight.add(call);
    }
    await sleep(tickMs);
  }
  const seconds = (now() - started) / 1000;
  await Promise.all(inFlight);
  return { offered, seconds };
}
