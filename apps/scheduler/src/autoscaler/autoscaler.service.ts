import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { PodRpc, RunplaneError } from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { EndpointsRepository, type EndpointRow } from '../store/endpoints.repository.js';
import { JobQueriesRepository } from '../store/job-queries.repository.js';
import { SchedulerSettings } from '../settings.js';
import { shortId } from '../shared/ids.js';
import { ANY_JOB, JobChanges } from '../shared/job-changes.js';
import { Leadership, leaseTtl } from '../timers/leadership.js';
import { WorkerKeys } from '../workers/worker-keys.js';
import { JobTimersRepository } from '../store/job-timers.repository.js';
import { WorkersRepository, type WorkerRow } from '../store/workers.repository.js';
import { GpuWaits } from './gpu-waits.js';
import { PublicUrl } from './public-url.js';
import {
  decideScaling,
  queueReads,
  toScaleWorker,
  type WorkerStopReason,
} from './scaling-policy.js';
import { gpuLabel, workerEnv } from './worker-env.js';

/** Delay before retrying a worker stop that pod-rest did not confirm. */
const STOP_RETRY_MS = 5000;
/** Warnings about an unreachable pod-rest / vault are repeated at most this often per endpoint. */
const WARN_EVERY_MS = 30_000;

/**
 * Local-first autoscaler (issue 3 §4): every tick, on the leading replica, compares each endpoint's
 * managed workers with `decideScaling` and starts or stops workers through pod-rest
 * (`PodRpc.startWorker/stopWorker`) with a worker key minted by the vault. Calls to those services
 * run off the tick, one endpoint at a time; when they do not answer the endpoint is simply retried
 * on a later tick. Failed starts back off exponentially per endpoint (crash loops).
 */
@Injectable()
export class Autoscaler implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private pokeTimer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  /** Endpoints with start/stop calls under way: skipped by ticks until they finish. */
  private readonly busy = new Set<string>();
  private readonly actions = new Set<Promise<void>>();
  private readonly stopRetryAt = new Map<string, number>();
  /**
   * Endpoints the last tick found with nothing to start and either a live worker or no way to start
   * one (workersMax 0, backing off): a new job there needs no tick at once (the periodic one
   * follows within a second). Without this, every submission under load ran a full tick, whose
   * aggregate reads grow with the queue.
   */
  private readonly settled = new Map<string, number>();
  private readonly warnedAt = new Map<string, number>();

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly jobs: JobQueriesRepository,
    private readonly workers: WorkersRepository,
    private readonly leadership: Leadership,
    private readonly changes: JobChanges,
    private readonly publicUrl: PublicUrl,
    private readonly settings: SchedulerSettings,
    private readonly bus: Bus,
    private readonly keys: WorkerKeys,
    private readonly jobTimers: JobTimersRepository,
    private readonly gpuWaits: GpuWaits,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    // A change (new job, new endpoint, stopPod...) runs a tick soon: scale-from-zero is immediate.
    const unChange = this.changes.onChange((endpointId) => this.poke(endpointId));
    // Endpoint-wide changes (configuration, releases, deletion, purges) always get a prompt look.
    const unWake = this.changes.onWake((endpointId, jobId) => {
      if (jobId === ANY_JOB) this.settled.delete(endpointId);
    });
    this.unsubscribe = () => {
      unChange();
      unWake();
    };
    this.schedule(this.settings.autoscaleIntervalMs);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    clearTimeout(this.pokeTimer);
    await this.running;
    // Calls to pod-rest may hang while the process (pod-rest included) shuts down: wait a little only.
    await Promise.race([
      Promise.allSettled([...this.actions]),
      new Promise((r) => setTimeout(r, 5000).unref()),
    ]);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.running) return this.schedule(50);
      this.running = this.tick().finally(() => {
        this.running = undefined;
        this.schedule(this.settings.autoscaleIntervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private poke(endpointId: string): void {
    const settledAt = this.settled.get(endpointId);
    if (settledAt !== undefined && Date.now() - settledAt < this.settings.autoscaleSettledMs)
      return;
    if (this.stopped || this.pokeTimer) return;
    this.pokeTimer = setTimeout(() => {
      this.pokeTimer = undefined;
      this.schedule(0);
    }, 50);
    this.pokeTimer.unref();
  }

  /** One round over every endpoint (public for tests). */
  async tick(): Promise<void> {
    try {
      const renewMs = Math.min(1000, this.settings.autoscaleIntervalMs);
      if (!(await this.leadership.isLeader(leaseTtl(this.settings), renewMs))) return;
      const now = new Date();
      const [endpoints, workers, held] = await Promise.all([
        this.endpoints.listAll(),
        this.workers.listAll(),
        this.jobs.heldCounts(),
      ]);
      const reads = queueReads(endpoints, workers);
      const stats = new Map((await this.jobs.queueStats(reads)).map((q) => [q.endpointId, q]));
      const byId = new Map(endpoints.map((e) => [e.id, e]));
      const jobsOf = new Map(held.map((h) => [`${h.endpointId}\u0000${h.workerId}`, h.jobs]));

      // Workers already on their way out, and workers of deleted endpoints.
      const leaving = new Map<string, WorkerRow[]>();
      for (const w of workers) {
        if (w.state === 'stopped' || w.state === 'failed') continue; // already stopped: a tombstone
        if (w.state === 'stopping' || !byId.has(w.endpointId))
          leaving.set(w.endpointId, [...(leaving.get(w.endpointId) ?? []), w]);
      }
      for (const [endpointId, list] of leaving) {
        this.act(endpointId, async () => {
          for (const w of list) await this.stopWorker(w, 'endpoint-gone-or-stopping', false);
        });
      }
      for (const endpoint of endpoints) {
        if (this.busy.has(endpoint.id)) continue;
        const mine = workers.filter((w) => w.endpointId === endpoint.id);
        const q = stats.get(endpoint.id);
        const backoff =
          (!!endpoint.startBackoffUntil && endpoint.startBackoffUntil > now) ||
          this.gpuWaits.holding(endpoint.id, now);
        const decision = decideScaling(
          endpoint as EndpointRow & { scalerType: 'QUEUE_DELAY' | 'REQUEST_COUNT' },
          {
            queued: q?.queued ?? 0,
            running: q?.running ?? 0,
            oldestWaitMs: q?.oldestQueuedAt ? now.getTime() - q.oldestQueuedAt.getTime() : null,
          },
          mine.map((w) => toScaleWorker(w, jobsOf.get(`${w.endpointId}\u0000${w.id}`) ?? 0, now)),
          { backoff },
        );
        const live = mine.some(
          (w) => (w.state === 'ready' || w.state === 'initializing') && !w.stopRequested,
        );
        // New jobs cannot change this: a live worker takes them, or no worker may start (none
        // allowed, or backing off); the periodic tick covers what time changes.
        if (!decision.start && (live || endpoint.workersMax === 0 || backoff))
          this.settled.set(endpoint.id, now.getTime());
        else this.settled.delete(endpoint.id);
        if (!decision.start && !decision.stop.length) continue;
        this.logger.debug({ endpointId: endpoint.id, ...decision }, 'autoscaler decision');
        this.act(endpoint.id, async () => {
          for (const s of decision.stop) {
            const w = mine.find((x) => x.id === s.id)!;
            await this.stopWorker(w, s.reason, s.reason !== 'unhealthy');
          }
          for (let i = 0; i < decision.start; i++) {
            if (!(await this.startWorker(endpoint))) break;
          }
        });
      }
    } catch (err) {
      if (!this.stopped)
        this.logger.warn({ err: String(err) }, 'autoscaler tick failed; retrying next tick');
    }
  }

  /** Runs calls for one endpoint off the tick; the endpoint is skipped until they end. */
  private act(endpointId: string, work: () => Promise<void>): void {
    if (this.busy.has(endpointId) || this.stopped) return;
    this.busy.add(endpointId);
    const run = work()
      .catch((err: unknown) =>
        this.logger.warn({ endpointId, err: String(err) }, 'autoscaler action failed'),
      )
      .finally(() => {
        this.busy.delete(endpointId);
        this.actions.delete(run);
      });
    this.actions.add(run);
  }

  /**
   * Starts one managed worker: its row first (so no tick starts it twice), then a worker key from
   * the vault, then the pod through pod-rest. Returns false when it could not.
   */
  private async startWorker(endpoint: EndpointRow): Promise<boolean> {
    const baseUrl = this.publicUrl.resolve();
    if (!baseUrl) return false; // not listening yet: next tick
    const now = new Date();
    const workerId = shortId(14);
    await this.workers.createManaged(
      {
        endpointId: endpoint.id,
        id: workerId,
        ownerId: endpoint.ownerId,
        pingIntervalMs: this.settings.pingIntervalMs,
        version: endpoint.version,
      },
      now,
    );
    let stage = 'mint a worker key (secrets-vault)';
    try {
      const key = await this.keys.mint({
        ownerId: endpoint.ownerId,
        endpointId: endpoint.id,
        workerId,
      });
      stage = 'start the worker (pod-rest)';
      const answer = await this.bus.request(
        PodRpc.startWorker,
        {
          ownerId: endpoint.ownerId,
          workerId,
          endpointId: endpoint.id,
          templateId: endpoint.templateId,
          templateRevision: endpoint.templateRevision ?? undefined,
          slsVersion: endpoint.version,
          gpuTypeId: endpoint.gpuTypeIds[0],
          // The endpoint's hardware: the worker Pod is sized and priced like it (and gets its GPUs on Kubernetes).
          computeType: endpoint.computeType === 'CPU' ? 'CPU' : 'GPU',
          gpuCount: endpoint.gpuCount,
          vcpuCount: endpoint.computeType === 'CPU' ? endpoint.vcpuCount : undefined,
          cpuFlavorId: endpoint.cpuFlavorIds[0],
          endpointEnv: endpoint.env as Record<string, string>,
          env: workerEnv({
            baseUrl,
            endpointId: endpoint.id,
            workerId,
            apiKey: key,
            pingIntervalMs: this.settings.pingIntervalMs,
            gpu: gpuLabel(endpoint.computeType, endpoint.gpuTypeIds),
          }),
        },
        { timeoutMs: 60_000 },
      );
      if ('gpuShortage' in answer)
        return await this.gpuWaits.lacked(endpoint, workerId, answer.gpuShortage);
      const { podId } = answer;
      await this.gpuWaits.cleared(endpoint);
      await this.workers.setPod(endpoint.id, workerId, podId);
      this.logger.info(
        { endpointId: endpoint.id, workerId, podId, version: endpoint.version },
        'worker started',
      );
      return true;
    } catch (err) {
      const now = new Date();
      const status = err instanceof RunplaneError ? err.status : 500;
      const unavailable = status === 503 || status === 504;
      // A refused start stays listed (as ended, saying why); one a service did not answer is retried.
      if (unavailable) await this.workers.delete(endpoint.id, workerId);
      else await this.workers.markStartRefused(endpoint.id, workerId, refusal(err), now);
      await this.keys.retire([workerId]);
      if (status === 504) {
        // It may have started after all: make sure it does not run unmanaged.
        await this.bus
          .request(
            PodRpc.stopWorker,
            { ownerId: endpoint.ownerId, workerId },
            { timeoutMs: 30_000 },
          )
          .catch(() => {});
      }
      // A service that is not answering is retried on the next tick; a refused start backs off.
      if (!unavailable) {
        await this.endpoints.recordStartFailure(endpoint.id, this.settings.startBackoff, now);
        await this.gpuWaits.cleared(endpoint); // refused for another reason
      }
      this.warn(
        endpoint.id,
        { endpointId: endpoint.id, status, err: err instanceof Error ? err.message : String(err) },
        `autoscaler could not ${stage}; ${unavailable ? 'retrying on the next tick' : 'backing off'}`,
      );
      return false;
    }
  }

  /**
   * Stops a worker: marks it "stopping" (only if still idle when `onlyIfIdle`), asks pod-rest to
   * stop a managed one, then requeues anything it still held and forgets it. A stop pod-rest does
   * not confirm is retried later.
   */
  private async stopWorker(
    w: WorkerRow,
    reason: WorkerStopReason | 'endpoint-gone-or-stopping',
    onlyIfIdle: boolean,
  ): Promise<void> {
    if (w.state === 'stopped' || w.state === 'failed') return;
    const k = `${w.endpointId}\u0000${w.id}`;
    if ((this.stopRetryAt.get(k) ?? 0) > Date.now()) return;
    if (
      w.state !== 'stopping' &&
      !(await this.workers.markStopping(w.endpointId, w.id, onlyIfIdle))
    )
      return; // got a job meanwhile
    if (w.managed) {
      try {
        await this.bus.request(
          PodRpc.stopWorker,
          { ownerId: w.ownerId, workerId: w.id },
          { timeoutMs: 30_000 },
        );
      } catch (err) {
        if (!(err instanceof RunplaneError && err.status === 404)) {
          this.stopRetryAt.set(k, Date.now() + STOP_RETRY_MS);
          this.warn(
            w.endpointId,
            {
              endpointId: w.endpointId,
              workerId: w.id,
              err: err instanceof Error ? err.message : String(err),
            },
            'autoscaler could not stop a worker (pod-rest); retrying',
          );
          return;
        }
      }
    }
    this.stopRetryAt.delete(k);
    await this.jobTimers.requeueFromWorker(
      w.endpointId,
      w.id,
      new Date(),
      `worker stopped (${reason})`,
    );
    // A managed worker's process may still poll while it shuts down (runpod-python finishes its open
    // job-take first): its row stays as a tombstone so those calls get no job and do not bring it
    // back as an external worker. External workers may legitimately return under the same id.
    if (w.managed) {
      await this.workers.markStopped(
        w.endpointId,
        w.id,
        STOP_REASONS[reason],
        new Date(),
        reason === 'unhealthy',
      );
      await this.keys.retire([w.id]);
      this.logger.info({ endpointId: w.endpointId, workerId: w.id, reason }, 'worker stopped');
    } else await this.workers.delete(w.endpointId, w.id);
  }

  private warn(endpointId: string, fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    if (now - (this.warnedAt.get(endpointId) ?? 0) < WARN_EVERY_MS) return;
    this.warnedAt.set(endpointId, now);
    this.logger.warn(fields, message);
  }
}

/** What a worker's `reason` says when the autoscaler stops it (a reason recorded before is kept). */
const STOP_REASONS: Record<WorkerStopReason | 'endpoint-gone-or-stopping', string> = {
  idle: 'idle',
  outdated: 'rolling release',
  'over-max': 'above workersMax',
  'stop-requested': 'replaced: the worker asked to stop (stopPod)',
  unhealthy: 'unhealthy',
  'endpoint-gone-or-stopping': 'endpoint deleted',
};

/** `start refused: <message> (<code>)` for a start pod-rest or the vault refused. */
function refusal(err: unknown): string {
  if (!(err instanceof Error)) return `start refused: ${String(err)}`;
  const code = err instanceof RunplaneError && err.code ? ` (${err.code})` : '';
  return `start refused: ${err.message}${code}`;
}
