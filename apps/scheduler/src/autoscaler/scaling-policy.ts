import type { ScalerType } from '@runplane/contracts';
import type { WorkerRow } from '../store/workers.repository.js';

/**
 * The autoscaler's decisions as a pure function of one endpoint's configuration, queue and
 * workers (issue 3 §4, RunPod's scaler semantics), so every rule is unit-tested without timing.
 */
export interface ScaleConfig {
  workersMin: number;
  workersMax: number;
  /** Seconds an idle worker above workersMin is kept. */
  idleTimeout: number;
  scalerType: ScalerType;
  /** QUEUE_DELAY: seconds a job may wait before a worker is added; REQUEST_COUNT: jobs per worker. */
  scalerValue: number;
  version: number;
}

export interface ScaleQueue {
  /**
   * Normal-priority queued jobs (lowPriority ones never trigger scaling), counted up to
   * `queuedJobsThatMatter`: beyond it no decision changes.
   */
  queued: number;
  /** All running jobs. */
  running: number;
  /** How long the oldest normal-priority queued job has waited. */
  oldestWaitMs: number | null;
}

export interface ScaleWorker {
  id: string;
  managed: boolean;
  state: 'initializing' | 'ready' | 'unhealthy' | 'stopping' | 'stopped' | 'failed';
  /** Jobs it holds. */
  jobs: number;
  /** Time since it last got or finished a job (or came up). */
  idleMs: number;
  version: number;
  stopRequested: boolean;
}

export type WorkerStopReason = 'unhealthy' | 'stop-requested' | 'outdated' | 'idle' | 'over-max';

export interface ScaleDecision {
  /** Managed workers to start now. */
  start: number;
  /** Managed workers to stop (never one holding a job, except an unhealthy one). */
  stop: Array<{ id: string; reason: WorkerStopReason }>;
  /** Workers the endpoint should run given its load, within workersMin..workersMax. */
  desired: number;
}

/**
 * The most queued jobs a decision can depend on, for an endpoint with `workers` workers of any
 * state. REQUEST_COUNT wants ceil((queued + running) / scalerValue) workers, which reaches
 * workersMax at workersMax × scalerValue queued jobs; QUEUE_DELAY compares the queue with free
 * and starting workers and adds workers up to workersMax. The autoscaler counts no further, so a
 * tick costs the same with 100 or 100,000 jobs waiting.
 */
export function queuedJobsThatMatter(
  config: Pick<ScaleConfig, 'workersMax' | 'scalerValue'>,
  workers: number,
): number {
  return config.workersMax * Math.max(1, config.scalerValue) + workers + 1;
}

/** What a tick reads of each endpoint's queue: its queued jobs up to `queuedJobsThatMatter`. */
export function queueReads(
  endpoints: Array<Pick<ScaleConfig, 'workersMax' | 'scalerValue'> & { id: string }>,
  workers: Array<{ endpointId: string }>,
): Array<{ endpointId: string; countUpTo: number }> {
  const count = new Map<string, number>();
  for (const w of workers) count.set(w.endpointId, (count.get(w.endpointId) ?? 0) + 1);
  return endpoints.map((e) => ({
    endpointId: e.id,
    countUpTo: queuedJobsThatMatter(e, count.get(e.id) ?? 0),
  }));
}

export function decideScaling(
  config: ScaleConfig,
  queue: ScaleQueue,
  workers: ScaleWorker[],
  options: { backoff: boolean },
): ScaleDecision {
  const stop: ScaleDecision['stop'] = [];
  const managed = workers.filter(
    (w) => w.managed && w.state !== 'stopping' && w.state !== 'stopped' && w.state !== 'failed',
  );

  // Workers that must go whatever the load: dead ones, and (once free) replaced ones.
  for (const w of managed) {
    if (w.state === 'unhealthy') stop.push({ id: w.id, reason: 'unhealthy' });
    else if (w.jobs === 0 && w.stopRequested) stop.push({ id: w.id, reason: 'stop-requested' });
    else if (w.jobs === 0 && w.version < config.version)
      stop.push({ id: w.id, reason: 'outdated' }); // rolling release
  }
  const leaving = new Set(stop.map((s) => s.id));
  // Capacity: up and starting workers. A busy outdated worker still counts until it is free, so a
  // rolling release never goes above workersMax.
  const active = managed.filter(
    (w) => !leaving.has(w.id) && (w.state === 'initializing' || w.state === 'ready'),
  );
  const starting = active.filter((w) => w.state === 'initializing').length;
  const busy = active.filter((w) => w.jobs > 0).length;
  const freeAnywhere = workers.filter(
    (w) => w.state === 'ready' && w.jobs === 0 && !leaving.has(w.id) && !w.stopRequested,
  ).length;

  let target: number;
  if (config.scalerType === 'REQUEST_COUNT') {
    target = Math.ceil((queue.queued + queue.running) / Math.max(1, config.scalerValue));
  } else {
    // QUEUE_DELAY: keep the busy and starting workers; add one per job nobody will take soon,
    // once the oldest job waited longer than scalerValue seconds.
    // Idle workers about to take the queued jobs are needed too.
    const freeManaged = active.filter((w) => w.state === 'ready' && w.jobs === 0).length;
    target = busy + starting + Math.min(queue.queued, freeManaged);
    const uncovered = queue.queued - freeAnywhere - starting;
    if (queue.queued > 0 && uncovered > 0 && (queue.oldestWaitMs ?? 0) > config.scalerValue * 1000)
      target = active.length + uncovered;
  }
  // Scale from zero at once: a queued job on an endpoint without any worker never waits for the delay.
  if (queue.queued > 0 && active.length === 0 && freeAnywhere === 0) target = Math.max(target, 1);
  const desired = clamp(target, config.workersMin, config.workersMax);

  // Up: to workersMin always; above it only for normal-priority queued jobs.
  const ceiling = queue.queued > 0 ? desired : Math.min(desired, config.workersMin);
  const start = options.backoff ? 0 : Math.max(0, ceiling - active.length);

  // Down: idle workers beyond what is desired, after idleTimeout (at once above workersMax).
  const surplus = active.length - desired;
  if (surplus > 0) {
    const overMax = active.length > config.workersMax;
    const idle = active
      .filter(
        (w) =>
          w.state === 'ready' && w.jobs === 0 && (overMax || w.idleMs >= config.idleTimeout * 1000),
      )
      .sort((a, b) => b.idleMs - a.idleMs);
    for (const w of idle.slice(0, surplus))
      stop.push({ id: w.id, reason: overMax ? 'over-max' : 'idle' });
  }
  return { start, stop, desired };
}

function clamp(n: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, n));
}

/** A worker row as the policy sees it: idle since its last job, first call-in or creation. */
export function toScaleWorker(w: WorkerRow, jobs: number, now: Date): ScaleWorker {
  const since = Math.max(
    w.lastBusyAt?.getTime() ?? 0,
    w.firstSeenAt?.getTime() ?? 0,
    w.createdAt.getTime(),
  );
  return {
    id: w.id,
    managed: w.managed,
    state: w.state as ScaleWorker['state'],
    jobs,
    idleMs: now.getTime() - since,
    version: w.version,
    stopRequested: w.stopRequested,
  };
}
