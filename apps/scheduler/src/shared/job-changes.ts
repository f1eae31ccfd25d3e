import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { SchedulerSignals, type JobChange, type JobChangedSignal } from '@runplane/contracts';
import { LOGGER, ReadinessService, type Logger } from '@runplane/platform';
import {
  endpointKey,
  jobKey,
  stopsKey,
  workerKey,
  workKey,
  type ChangeEffects,
  type EndpointWaiters,
  type HandOff,
  type Waiter,
} from './job-change-types.js';

export type { ChangeEffects, HandOff } from './job-change-types.js';

/** `jobId` of a change that concerns the whole endpoint (purge, sweeps, configuration): wakes all its waiters. */
export const ANY_JOB = '*';
/** Changes per signal message. */
const SIGNAL_BATCH = 500;

/**
 * Wake-ups of long polls (await, stream, take, stop). Every change is announced here: it wakes
 * this replica's waiters at once and the other replicas' through `SchedulerSignals.jobChanged`.
 * A wake-up only means "look again": waiters re-read the database, which stays the truth, and
 * re-read it periodically anyway in case a signal was lost (signals are best effort).
 *
 * Waiters are woken by what concerns them only, because every wake-up costs a database read:
 * a job's result wakes the polls of that job; a new job wakes one waiting job-take, not all of
 * them (the rest would each run a claim that finds nothing); stops wake the job-stop polls.
 */
@Injectable()
export class JobChanges implements OnModuleDestroy {
  /** Tells this replica's own signals (which the bus delivers here too) from other replicas'. */
  private readonly origin = randomUUID();
  private readonly waiters = new Map<string, EndpointWaiters>();
  /** Polls that only wait out their time (see `pause`). */
  private readonly paused = new Set<Waiter>();
  private readonly listeners = new Set<(endpointId: string) => void>();
  private readonly wakeListeners = new Set<(endpointId: string, jobId: string) => void>();
  /**
   * When each key last changed, as a number of the `sequence`: a poll that read the database
   * before a change (its `mark`) does not wait for the next one. Keys forgotten to bound memory
   * count as changed at `forgottenAt`, so forgetting costs at most one extra read.
   */
  private readonly lastChange = new Map<string, number>();
  /** Per worker: the mark of its last claim that found nothing, and when (see `knownIdle`). */
  private readonly idleClaims = new Map<string, { mark: number; at: number }>();
  private sequence = 0;
  /** Changes not yet signalled to other replicas: sent together at the end of this event-loop turn. */
  private outgoing: JobChange[] = [];
  private forgottenAt = 0;
  /**
   * Whether other replicas may exist. The in-process bus serves one process, which runs the only
   * scheduler: its signals would come back here only to be ignored, after a JSON copy and a
   * validation of every change (1.2 % of the server CPU of a standalone e2e job).
   */
  private readonly replicated: boolean;
  private closing = false;
  private drainWatch?: NodeJS.Timeout;

  constructor(
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly readiness?: ReadinessService,
  ) {
    this.replicated = bus.kind !== 'in-process';
  }

  /** True once the process shuts down: long polls answer with what they have. */
  get stopping(): boolean {
    return this.closing || (this.readiness?.isDraining ?? false);
  }

  /**
   * Announces a change of a job (ANY_JOB: of the whole endpoint): this replica's waiters wake at
   * once, other replicas' with the signal sent at the end of this event-loop turn.
   */
  changed(endpointId: string, jobId: string = ANY_JOB, effects: ChangeEffects = {}): void {
    this.wake(endpointId, jobId, effects);
    if (effects.scaling) for (const listener of this.listeners) listener(endpointId);
    if (!this.replicated) return;
    const change: JobChange = { endpointId, jobId };
    if (effects.queued) change.queued = effects.queued;
    if (effects.stops) change.stops = true;
    if (this.outgoing.push(change) === 1) setImmediate(() => this.signalOutgoing());
  }

  /**
   * Announces changed jobs, one by one or per endpoint when there are many: jobs that `ended`
   * (cancelled, timed out, expired) concern their awaiters and, when one held them (`workerId`),
   * that worker's job-stop poll; jobs `requeued` away from a worker also wake as many job-takes, and
   * the autoscaler.
   */
  announce(
    jobs: Array<{ id: string; endpointId: string; workerId?: string | null }>,
    how: 'ended' | 'requeued',
  ): void {
    const byEndpoint = new Map<string, Array<{ id: string; stops: boolean }>>();
    const requeued = how === 'requeued';
    for (const j of jobs) {
      // A requeued job's stop went to the worker that lost it (its row no longer names one).
      const job = { id: j.id, stops: requeued || j.workerId !== null };
      const list = byEndpoint.get(j.endpointId);
      if (list) list.push(job);
      else byEndpoint.set(j.endpointId, [job]);
    }
    for (const [endpointId, list] of byEndpoint) {
      if (list.length > 20) this.changed(endpointId, ANY_JOB, { scaling: requeued });
      else
        for (const { id, stops } of list)
          this.changed(endpointId, id, { stops, queued: requeued ? 1 : 0, scaling: requeued });
    }
  }

  /** Another replica's changes (this replica's own signals are ignored: `changed` woke its waiters). */
  received(signal: JobChangedSignal): void {
    if (signal.origin === this.origin) return;
    for (const c of signal.changes)
      this.wake(c.endpointId, c.jobId, { queued: c.queued, stops: c.stops });
  }

  private signalOutgoing(): void {
    const changes = this.outgoing;
    this.outgoing = [];
    // Bounded messages (a bulk sweep may change thousands of jobs).
    for (let i = 0; i < changes.length; i += SIGNAL_BATCH) {
      this.bus
        .signal(SchedulerSignals.jobChanged, {
          origin: this.origin,
          changes: changes.slice(i, i + SIGNAL_BATCH),
        })
        .catch((err: unknown) => {
          // Best effort by design: other replicas re-check on their own within longPollRecheckMs.
          if (!this.stopping)
            this.logger.warn({ err: String(err) }, 'could not signal job changes');
        });
    }
  }

  /** Wakes this replica's waiters for a change. */
  private wake(endpointId: string, jobId: string, effects: ChangeEffects): void {
    for (const listener of this.wakeListeners) listener(endpointId, jobId);
    const endpointWide = jobId === ANY_JOB;
    this.touch(endpointWide ? endpointKey(endpointId) : jobKey(jobId));
    if (effects.queued) this.touch(workKey(endpointId));
    if (effects.stops) this.touch(stopsKey(endpointId));

    const held = this.waiters.get(endpointId);
    if (!held) return;
    if (endpointWide) {
      for (const set of [held.takes, held.stops, ...held.jobs.values()])
        for (const w of [...set]) w.wake();
      return;
    }
    for (const w of [...(held.jobs.get(jobId) ?? [])]) w.wake(effects.final);
    if (effects.stops) for (const w of [...held.stops]) w.wake();
    let queued = effects.queued ?? 0;
    for (const w of held.takes) {
      if (queued-- <= 0) break;
      w.wake(); // removes itself from the set; iteration goes on with the next oldest
    }
  }

  private touch(key: string): void {
    if (this.lastChange.size >= 100_000) {
      this.lastChange.clear();
      this.forgottenAt = this.sequence;
    }
    this.lastChange.set(key, ++this.sequence);
  }

  private changedSince(since: number, ...keys: string[]): boolean {
    return keys.some((key) => (this.lastChange.get(key) ?? this.forgottenAt) > since);
  }

  /** Runs `listener` for every local change that affects scaling (the autoscaler reacts at once). */
  onChange(listener: (endpointId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs `listener` for every change seen here, local or from another replica (caches drop entries). */
  onWake(listener: (endpointId: string, jobId: string) => void): () => void {
    this.wakeListeners.add(listener);
    return () => this.wakeListeners.delete(listener);
  }

  /** Take before reading the database; pass to a wait so that a change in between is not missed. */
  mark(): number {
    return this.sequence;
  }

  /**
   * await / stream: until the job (or its whole endpoint) changes, `ms` pass, or the process
   * drains; resolves with the job's final state when the change that woke it carried it.
   */
  waitForJob<T>(
    endpointId: string,
    jobId: string,
    ms: number,
    since?: number,
  ): Promise<T | undefined> {
    if (since !== undefined && this.changedSince(since, jobKey(jobId), endpointKey(endpointId)))
      return Promise.resolve(undefined);
    const held = this.heldOn(endpointId);
    let set = held.jobs.get(jobId);
    if (!set) held.jobs.set(jobId, (set = new Set()));
    const waiting = set;
    return this.hold<T>(waiting, ms, () => {
      if (waiting.size === 0 && held.jobs.get(jobId) === waiting) held.jobs.delete(jobId);
      this.forgetIfEmpty(endpointId, held);
    });
  }

  /**
   * A claim for `workerId` found nothing (`mark` taken before it). Until work is queued on the
   * endpoint, its next claims would find nothing either: a worker polls again right after each
   * job, and that claim is skipped (`knownIdle`).
   */
  claimedNothing(endpointId: string, workerId: string, mark: number): void {
    if (this.idleClaims.size >= 10_000) this.idleClaims.clear(); // bounded: it only saves claims
    this.idleClaims.set(workerKey(endpointId, workerId), { mark, at: Date.now() });
  }

  /**
   * True when the worker's last claim found nothing, no work was queued on the endpoint since (as
   * far as this replica heard), and that was less than `maxAgeMs` ago: another replica's signal
   * may be lost, so the claim is made again after that long anyway.
   */
  knownIdle(endpointId: string, workerId: string, maxAgeMs: number): boolean {
    const key = workerKey(endpointId, workerId);
    const idle = this.idleClaims.get(key);
    if (!idle) return false;
    if (
      Date.now() - idle.at < maxAgeMs &&
      !this.changedSince(idle.mark, workKey(endpointId), endpointKey(endpointId))
    )
      return true;
    this.idleClaims.delete(key);
    return false;
  }

  /**
   * job-take of `workerId`: until a job is queued on the endpoint (one taker per new job), `ms`
   * pass, or the process drains; resolves with the jobs a submission handed it (`handOff`), if any.
   */
  waitForWork<T>(
    endpointId: string,
    workerId: string,
    ms: number,
    since?: number,
  ): Promise<T[] | undefined> {
    if (
      since !== undefined &&
      this.changedSince(since, workKey(endpointId), endpointKey(endpointId))
    )
      return Promise.resolve(undefined);
    const held = this.heldOn(endpointId);
    return this.hold<T[]>(held.takes, ms, () => this.forgetIfEmpty(endpointId, held), workerId);
  }

  /**
   * Takes the endpoint's oldest waiting job-take out of the waiters, so that a new job can be
   * stored already assigned to its worker and handed over in memory: one statement instead of an
   * insert and a claim, and no wake-up round. Undefined when no job-take waits here.
   */
  handOff<T>(endpointId: string): HandOff<T> | undefined {
    if (this.stopping) return undefined;
    const held = this.waiters.get(endpointId);
    const waiter = held?.takes.values().next().value;
    if (!waiter?.workerId) return undefined;
    waiter.detach();
    return {
      workerId: waiter.workerId,
      give: (jobs) => waiter.resolve(jobs),
      decline: () => waiter.resolve(),
    };
  }

  /** How many job-takes wait on this replica for the endpoint's work (tests wait for a poll to be in place). */
  waitingTakes(endpointId: string): number {
    return this.waiters.get(endpointId)?.takes.size ?? 0;
  }

  /** job-stop: until stops are written for the endpoint's workers, `ms` pass, or the process drains. */
  waitForStops(endpointId: string, ms: number, since?: number): Promise<void> {
    if (
      since !== undefined &&
      this.changedSince(since, stopsKey(endpointId), endpointKey(endpointId))
    )
      return Promise.resolve();
    const held = this.heldOn(endpointId);
    return this.hold<void>(held.stops, ms, () => this.forgetIfEmpty(endpointId, held));
  }

  /** Waits `ms` unless the process drains first: a poll that no change may cut short. */
  pause(ms: number): Promise<void> {
    return this.hold<void>(this.paused, ms, () => {});
  }

  private heldOn(endpointId: string): EndpointWaiters {
    let held = this.waiters.get(endpointId);
    if (!held)
      this.waiters.set(
        endpointId,
        (held = { takes: new Set(), stops: new Set(), jobs: new Map() }),
      );
    return held;
  }

  private forgetIfEmpty(endpointId: string, held: EndpointWaiters): void {
    if (
      held.takes.size === 0 &&
      held.stops.size === 0 &&
      held.jobs.size === 0 &&
      this.waiters.get(endpointId) === held
    ) {
      this.waiters.delete(endpointId);
    }
  }

  /**
   * Joins `set` until woken (resolving with what the wake-up carried), `ms` pass, or the process
   * drains; `left` tidies up once it left the set.
   */
  private hold<T>(
    set: Set<Waiter>,
    ms: number,
    left: () => void,
    workerId?: string,
  ): Promise<T | undefined> {
    if (this.stopping || ms <= 0) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve) => {
      const waiter: Waiter = {
        workerId,
        detach: () => {
          clearTimeout(timer);
          set.delete(waiter);
          left();
        },
        resolve: (value) => resolve(value as T | undefined),
        wake: (value) => {
          waiter.detach();
          waiter.resolve(value);
        },
      };
      const timer = setTimeout(waiter.wake, ms);
      set.add(waiter);
      this.watchDraining();
    });
  }

  private allWaiters(): Waiter[] {
    const all = [...this.paused];
    for (const held of this.waiters.values()) {
      all.push(...held.takes, ...held.stops);
      for (const set of held.jobs.values()) all.push(...set);
    }
    return all;
  }

  /**
   * Readiness turns "draining" before the HTTP server closes; held polls must answer then instead
   * of keeping the shutdown waiting for up to a minute.
   */
  private watchDraining(): void {
    if (this.drainWatch || !this.readiness) return;
    this.drainWatch = setInterval(() => {
      if (this.stopping) this.wakeAll();
      if (this.waiters.size === 0 && this.paused.size === 0) {
        clearInterval(this.drainWatch);
        this.drainWatch = undefined;
      }
    }, 200);
    this.drainWatch.unref();
  }

  private wakeAll(): void {
    for (const w of this.allWaiters()) w.wake();
  }

  onModuleDestroy(): void {
    if (this.outgoing.length) this.signalOutgoing();
    this.closing = true;
    this.wakeAll();
    if (this.drainWatch) clearInterval(this.drainWatch);
  }
}
