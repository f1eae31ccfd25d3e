import { Injectable } from '@nestjs/common';
import type { EndpointWaiting, WaitingReason } from '@runplane/contracts';
import type { Worker as WorkerRow } from '../generated/prisma/client.js';
import { EndpointOperationsRepository } from '../store/endpoint-operations.repository.js';
import { gpuShortageOf, type EndpointRow } from '../store/endpoints.repository.js';

const REFUSED = 'start refused:';
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * Why an endpoint's queued jobs wait (`waiting` of `GET /v1/endpoints[/{id}]`), from its
 * configuration, its start back-off and its workers. docs/operating.md explains each code.
 */
@Injectable()
export class WaitingReasons {
  constructor(private readonly repo: EndpointOperationsRepository) {}

  /** `waiting` of each endpoint with queued jobs. */
  async of(endpoints: EndpointRow[], now = new Date()): Promise<Map<string, EndpointWaiting>> {
    const queued = await this.repo.queued(
      endpoints.map((e) => e.id),
      now,
    );
    const waitingOnes = endpoints.filter((e) => queued.has(e.id));
    const out = new Map<string, EndpointWaiting>();
    if (!waitingOnes.length) return out;
    const ids = waitingOnes.map((e) => e.id);
    const [workers, busy] = await Promise.all([this.repo.workersOf(ids), this.repo.busy(ids)]);
    for (const e of waitingOnes) {
      const mine = workers.filter((w) => w.endpointId === e.id);
      const isBusy = (w: WorkerRow) => busy.has(`${e.id}\u0000${w.id}`);
      out.set(e.id, { jobs: queued.get(e.id)!, reasons: reasons(e, mine, isBusy, now) });
    }
    return out;
  }
}

/** The reasons, most fundamental first; none when nothing holds the jobs back (a worker is about to take them). */
export function reasons(
  e: EndpointRow,
  workers: WorkerRow[],
  isBusy: (w: WorkerRow) => boolean,
  now: Date,
): WaitingReason[] {
  if (e.workersMax === 0)
    return [
      {
        code: 'NO_WORKERS_ALLOWED',
        message: 'workersMax is 0: no worker may start; raise workersMax to run the queued jobs',
      },
    ];
  const out: WaitingReason[] = [];
  // pod-rest's last answer about the machine's GPUs, while it is about this hardware.
  const gpus = gpuShortageOf(e);
  const shortage =
    gpus && e.computeType !== 'CPU' && gpus.needed === e.gpuCount
      ? { gpusNeeded: gpus.needed, gpusFree: gpus.free, gpusTotal: gpus.total }
      : undefined;
  if (shortage && shortage.gpusNeeded > shortage.gpusTotal)
    out.push({
      code: 'NOT_ENOUGH_GPUS',
      message: `a worker needs ${plural(shortage.gpusNeeded, 'GPU')} (gpuCount) and this machine has ${shortage.gpusTotal}: no worker can start; lower the endpoint's gpuCount`,
      ...shortage,
    });
  const live = workers.filter(
    (w) => (w.state === 'initializing' || w.state === 'ready') && !w.stopRequested,
  );
  const starting = live.filter((w) => w.state === 'initializing');
  if (starting.length)
    out.push({
      code: 'WORKERS_STARTING',
      message: `${plural(starting.length, 'worker')} starting, not called in yet`,
    });
  if (shortage && shortage.gpusNeeded <= shortage.gpusTotal)
    out.push({
      code: 'GPUS_BUSY',
      message: `a worker needs ${plural(shortage.gpusNeeded, 'GPU')} and ${shortage.gpusFree} of the machine's ${shortage.gpusTotal} are free (the others run other workloads): it starts when enough are freed`,
      ...shortage,
    });
  if (e.startBackoffUntil && e.startBackoffUntil > now) {
    // The last worker that failed: ended, or found dead and about to be stopped.
    const endOf = (w: WorkerRow) => w.endedAt?.getTime() ?? now.getTime();
    const last = workers
      .filter((w) => w.managed && (w.endedAt || w.state === 'unhealthy'))
      .sort((a, b) => endOf(b) - endOf(a))[0] as WorkerRow | undefined;
    const refused = !!last?.reason?.startsWith(REFUSED);
    const next = e.startBackoffUntil.toISOString();
    const failures = plural(e.startFailures, refused ? 'refused start' : 'failed start');
    out.push({
      code: refused ? 'START_REFUSED' : 'START_BACKOFF',
      message: `${failures} in a row${last?.reason ? ` (last: ${last.reason})` : ''}; the next start is tried at ${next}`,
      failures: e.startFailures,
      nextAttemptAt: next,
      ...(last ? { workerId: last.id, exitCode: last.exitCode, reason: last.reason } : {}),
    });
  }
  const managed = live.filter((w) => w.managed);
  if (managed.length >= e.workersMax && live.every((w) => w.state === 'ready' && isBusy(w)))
    out.push({
      code: 'THROTTLED',
      message: `all ${plural(managed.length, 'worker')} workersMax allows are busy; raise workersMax to run more jobs at once`,
    });
  return out;
}
