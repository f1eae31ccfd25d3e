import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { EventEmitter } from 'node:events';
import { ComputeProvider, type LogLine, type WorkloadSpec } from '../compute/compute-provider.js';
import { PodsRepository } from '../pods/pods.repository.js';
import { SecretEnv } from '../secrets/secret-env.js';
import { redact, secretValues } from '../secrets/secret-values.js';
import { PodRestSettings } from '../settings.js';
import { LogLinesRepository, type StoredLogLine } from './log-lines.repository.js';

/** A batch is written at once from this many lines on, else after FLUSH_MS. */
const BATCH_LINES = 500;
const FLUSH_MS = 200;
/** Lines waiting for the database beyond this are dropped (oldest first): memory stays bounded. */
const MAX_BUFFERED = 50_000;

interface Destination {
  podId: string;
  /** Resolved secrets of the workload, longest first: replaced by `[secret]` before anything is kept. */
  secrets: string[];
}

/**
 * Keeps every workload's output in the database: lines from the compute provider are cleaned of
 * the workload's resolved secrets, buffered, and written in batches (bounded per Pod by
 * RUNPLANE_LOG_MAX_LINES / RUNPLANE_LOG_MAX_BYTES). Followers are told when a Pod's lines land.
 */
@Injectable()
export class LogCollector
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly destinations = new Map<string, Promise<Destination | null>>();
  private buffer: Array<Omit<StoredLogLine, 'id'>> = [];
  /** Lines per Pod not yet in the database (buffered or being written). */
  private readonly unwritten = new Map<string, number>();
  private flushing: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private readonly written = new EventEmitter();
  private readonly unsubscribe: Array<() => void>;

  constructor(
    private readonly lines: LogLinesRepository,
    private readonly compute: ComputeProvider,
    private readonly pods: PodsRepository,
    private readonly secretEnv: SecretEnv,
    private readonly settings: PodRestSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.written.setMaxListeners(0);
    this.unsubscribe = [
      compute.onLog((ref, lines) => this.take(ref, lines)),
      // Every line of a workload comes before its exit: nothing more will arrive for it.
      compute.onExit((status) => void this.destinations.delete(status.ref)),
    ];
  }

  /**
   * Called before the workload `spec` of Pod `podId` starts: its lines go to that Pod, cleaned of
   * its secret variables (`written`: the Pod's env as written, with its secret references).
   */
  expect(podId: string, spec: WorkloadSpec, written: Record<string, string>): void {
    this.destinations.set(
      spec.id,
      Promise.resolve({ podId, secrets: secretValues(written, spec.secretEnv ?? {}) }),
    );
  }

  /** True while lines of the Pod are on their way to the database. */
  hasUnwritten(podId: string): boolean {
    return (this.unwritten.get(podId) ?? 0) > 0;
  }

  /** Resolves once lines of the Pod were written, or after `ms`, or when `signal` aborts. */
  waitForLines(podId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.written.off(podId, done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.written.once(podId, done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.lines.deleteOrphans();
  }

  /** Local workloads end with the server: their last lines are written before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.compute.releaseAll();
    await this.flush();
  }

  onApplicationShutdown(): void {
    this.unsubscribe.forEach((u) => u());
    clearTimeout(this.timer);
  }

  private take(ref: string, lines: LogLine[]): void {
    const destination = this.destinations.get(ref) ?? this.lookUp(ref);
    void destination.then((d) => {
      if (!d) return;
      for (const line of lines) {
        this.buffer.push({
          podId: d.podId,
          at: line.at,
          stream: line.stream,
          text: redact(line.text, d.secrets),
        });
        this.unwritten.set(d.podId, (this.unwritten.get(d.podId) ?? 0) + 1);
      }
      if (this.buffer.length > MAX_BUFFERED) this.drop(this.buffer.length - MAX_BUFFERED);
      if (this.buffer.length >= BATCH_LINES) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    });
  }

  /**
   * A workload this process did not start (Kubernetes, after a restart of pod-rest): its Pod is
   * found by the workload's reference and its secrets resolved again. Without them, its lines are
   * not kept.
   */
  private lookUp(ref: string): Promise<Destination | null> {
    const found = (async () => {
      const pod = (await this.pods.findByComputeRef(ref)) ?? (await this.pods.findById(ref));
      if (!pod) return null;
      const written = (pod.env ?? {}) as Record<string, string>;
      const resolved = await this.secretEnv.resolve(pod.ownerId, written);
      const secret = Object.fromEntries(
        Object.entries(resolved).filter(([k, v]) => written[k] !== v),
      );
      return { podId: pod.id, secrets: secretValues(written, secret) };
    })().catch((err: unknown) => {
      this.logger.warn({ ref, err: String(err) }, 'workload logs dropped: its secrets are unknown');
      return null;
    });
    this.destinations.set(ref, found);
    return found;
  }

  private drop(count: number): void {
    for (const line of this.buffer.splice(0, count)) this.count(line.podId, -1);
    this.logger.warn({ count }, 'workload log lines dropped: the database is behind');
  }

  /** Writes what is buffered (one batch at a time), then tells the followers of each Pod. */
  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.buffer;
      this.buffer = [];
      if (!batch.length) return;
      try {
        await this.lines.append(batch, this.settings.logs);
      } catch (err) {
        this.logger.error({ err: String(err), count: batch.length }, 'workload logs not written');
      }
      for (const line of batch) this.count(line.podId, -1);
      for (const podId of new Set(batch.map((l) => l.podId))) this.written.emit(podId);
    });
    return this.flushing;
  }

  private count(podId: string, delta: number): void {
    const n = (this.unwritten.get(podId) ?? 0) + delta;
    if (n > 0) this.unwritten.set(podId, n);
    else this.unwritten.delete(podId);
  }
}
