import { readWorkerConfig, type WorkerConfig } from './config.js';
import { createLogger, forJob, type Logger } from './logger.js';
import { runJob } from './run-job.js';
import { WorkerTransport } from './transport.js';
import type { Handler, Job, JobContext, WorkerOptions } from './types.js';

export interface Worker {
  /** `RUNPOD_POD_ID`, or a random id when unset. */
  readonly id: string;
  readonly config: WorkerConfig;
  /** Ids of the jobs in progress (what the pings report). */
  readonly jobsInProgress: string[];
  /** Polls for jobs until stopped; resolves once the jobs in hand are finished and posted. */
  run(): Promise<void>;
  /** Graceful stop: take no more jobs, finish (and post) the ones in progress. */
  stop(): void;
}

/** How long a freed slot waits for others under load (WorkerOptions.takeGatherMs). */
const DEFAULT_TAKE_GATHER_MS = 2;

interface ActiveJob {
  job: Job;
  controller: AbortController;
}

/**
 * The worker loop of runpod-python's JobScaler without its process model:
 * job-take (batched when concurrency > 1), handlers running concurrently, results to job-done /
 * job-stream, a heartbeat listing the jobs in progress, and the job-stop channel.
 * `start()` wires it to the process (signals, exit code); use this to embed or test a worker.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler inputs are the worker's own JSON; `any` keeps `job.input.x` free of casts
export function createWorker<TInput = Record<string, any>>(options: WorkerOptions<TInput>): Worker {
  return new WorkerLoop(options as WorkerOptions);
}

class WorkerLoop implements Worker {
  readonly config: WorkerConfig;
  private readonly logger: Logger;
  private readonly transport: WorkerTransport;
  private readonly handler: Handler;
  private readonly active = new Map<string, ActiveJob>();
  /** Handlers whose result is still to be posted (stopped jobs are not waited for). */
  private readonly finishing = new Set<Promise<void>>();
  /** Aborted by stop(): interrupts job-take and the back-off sleeps. */
  private readonly stopping = new AbortController();
  /** Aborted once the last job is posted: ends the ping and job-stop loops. */
  private readonly finished = new AbortController();
  private wakeTaker: (() => void) | undefined;
  private concurrency = 1;
  private readonly takeGatherMs: number;
  private running = false;

  constructor(private readonly options: WorkerOptions) {
    const env = options.env ?? process.env;
    this.config = readWorkerConfig(env);
    this.logger = options.logger ?? createLogger(env);
    this.transport = new WorkerTransport(this.config, this.logger);
    this.handler = options.handler;
    const gather = options.takeGatherMs ?? DEFAULT_TAKE_GATHER_MS;
    if (typeof gather !== 'number' || !Number.isFinite(gather) || gather < 0)
      throw new TypeError(
        `takeGatherMs must be a number of milliseconds ≥ 0, not ${String(gather)}`,
      );
    this.takeGatherMs = gather;
  }

  get id(): string {
    return this.config.workerId;
  }

  get jobsInProgress(): string[] {
    return [...this.active.keys()];
  }

  async run(): Promise<void> {
    if (this.running) throw new Error('this worker is already running');
    if (!this.config.jobTakeUrl)
      throw new Error(
        'RUNPOD_WEBHOOK_GET_JOB is not set: nothing to poll (use start() for local test mode)',
      );
    this.running = true;
    this.logger.info(`worker ${this.id} started`);
    if (!this.config.jobDoneUrl)
      this.logger.warn('RUNPOD_WEBHOOK_POST_OUTPUT is not set: results cannot be posted');
    const side = [
      this.config.pingUrl
        ? this.pingLoop()
        : (this.logger.info(
            'pings off (they need RUNPOD_AI_API_KEY, RUNPOD_POD_ID and RUNPOD_WEBHOOK_PING)',
          ),
          undefined),
      this.config.jobStopUrl
        ? this.stopLoop(this.config.jobStopUrl)
        : (this.logger.warn('the job-take URL has no /job-take/: job-stop channel disabled'),
          undefined),
    ];
    try {
      await this.takeLoop();
      while (this.finishing.size) await Promise.all([...this.finishing]);
    } finally {
      this.finished.abort();
      await Promise.all(side);
      this.logger.info(`worker ${this.id} stopped`);
    }
  }

  stop(): void {
    if (this.stopping.signal.aborted) return;
    this.logger.info(
      this.active.size ? `stopping: finishing ${this.active.size} job(s) in progress` : 'stopping',
    );
    this.stopping.abort();
    this.wakeTaker?.();
  }

  private async takeLoop(): Promise<void> {
    const stopped = this.stopping.signal;
    let gatherUntil: number | undefined;
    while (!stopped.aborted) {
      const wanted = this.wantedJobs();
      if (wanted <= 0) {
        await this.slotFreed();
        continue;
      }
      // Under load (fewer than half the slots free) a freed slot waits briefly for others, so
      // that one take fetches several jobs: fewer requests and claims per job on the server.
      if (this.takeGatherMs > 0 && this.active.size > 0 && wanted < this.concurrency / 2) {
        gatherUntil ??= Date.now() + this.takeGatherMs;
        const left = gatherUntil - Date.now();
        if (left > 0) {
          await this.slotFreed(left);
          continue;
        }
      }
      gatherUntil = undefined;
      const { value: jobs, backoffMs } = await this.transport.takeJobs(
        wanted,
        this.active.size > 0,
        stopped,
      );
      // Jobs already handed to this worker run even if a stop came meanwhile: the server counts them as ours.
      for (const job of jobs) this.launch(job);
      if (backoffMs) await sleep(backoffMs, stopped);
    }
  }

  /** Resolves when a slot frees, the worker stops, or (given) `ms` have passed. */
  private async slotFreed(ms?: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wakeTaker = resolve;
      if (ms !== undefined) timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.wakeTaker = undefined;
  }

  /** concurrency − jobs in progress; a concurrency function is asked every time (concurrency_modifier). */
  private wantedJobs(): number {
    const c = this.options.concurrency;
    const next = typeof c === 'function' ? c(this.concurrency) : (c ?? 1);
    this.concurrency = Number.isFinite(next) ? Math.max(1, Math.floor(next)) : 1;
    return this.concurrency - this.active.size;
  }

  private launch(job: Job): void {
    if (this.active.has(job.id)) {
      this.logger.warn('job received again while in progress: ignored', job.id);
      return;
    }
    const entry: ActiveJob = { job, controller: new AbortController() };
    this.active.set(job.id, entry);
    const run = this.execute(entry)
      .catch((err) => this.logger.error(`job failed unexpectedly: ${String(err)}`, job.id))
      .finally(() => {
        this.finishing.delete(run);
        this.release(entry);
      });
    this.finishing.add(run);
  }

  /** Frees the job's slot (at most once: a stopped job frees it as soon as it is stopped). */
  private release(entry: ActiveJob): void {
    if (this.active.get(entry.job.id) !== entry) return;
    this.active.delete(entry.job.id);
    this.wakeTaker?.();
  }

  private async execute(entry: ActiveJob): Promise<void> {
    const { job, controller } = entry;
    const signal = controller.signal;
    const log = forJob(this.logger, job.id);
    const progressPosts = new Set<Promise<void>>();
    let done = false;
    const context: JobContext = {
      workerId: this.id,
      signal,
      log,
      progress: (value) => {
        if (done || signal.aborted) return Promise.resolve();
        const post = this.transport.postResult(
          job.id,
          { status: 'IN_PROGRESS', output: value },
          false,
        );
        progressPosts.add(post);
        return post.finally(() => progressPosts.delete(post));
      },
    };
    log.debug('job started');
    const outcome = await runJob(this.handler, job, context, {
      returnAggregateStream: this.options.returnAggregateStream ?? false,
      emit: (chunk) => this.transport.postStream(job.id, chunk),
      host: { hostname: (this.options.env ?? process.env).RUNPOD_POD_HOSTNAME, workerId: this.id },
    });
    done = true;
    if (!outcome || signal.aborted) {
      log.info('job stopped by the server: nothing posted');
      return;
    }
    await Promise.all([...progressPosts]); // a progress post must not land after the result
    if (this.options.refreshWorker) outcome.body.stopPod = true;
    await this.transport.postResult(job.id, outcome.body, outcome.isStream);
    log.info(outcome.body.error ? 'job failed' : 'job done');
    if (this.options.refreshWorker) {
      log.info('refreshWorker: this worker stops after its job');
      this.stop();
    }
  }

  private async pingLoop(): Promise<void> {
    const finished = this.finished.signal;
    while (!finished.aborted) {
      await this.transport.ping(this.jobsInProgress, finished);
      await sleep(this.config.pingIntervalMs, finished);
    }
  }

  /** job-stop: abandon the listed jobs at once (signal aborted, slot freed, nothing posted). */
  private async stopLoop(url: string): Promise<void> {
    const finished = this.finished.signal;
    while (!finished.aborted) {
      const { value: ids, backoffMs } = await this.transport.pollStops(url, finished);
      for (const id of ids) {
        const entry = this.active.get(id);
        if (!entry) continue;
        this.logger.info('job stopped by the server', id);
        entry.controller.abort();
        this.release(entry);
      }
      if (backoffMs) await sleep(backoffMs, finished);
    }
  }
}

function sleep(ms: number, abort: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (abort.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      abort.removeEventListener('abort', done);
      resolve();
    }
    abort.addEventListener('abort', done, { once: true });
  });
}
