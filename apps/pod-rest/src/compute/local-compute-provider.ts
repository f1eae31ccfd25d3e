import {
  Inject,
  Injectable,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { constants as osConstants } from 'node:os';
import {
  ComputeProvider,
  DEFAULT_STOP_GRACE_MS,
  WorkloadStartError,
  type ExitListener,
  type LogLine,
  type LogsOptions,
  type MachineFacts,
  type StopOptions,
  type WorkloadHandle,
  type WorkloadPlacement,
  type WorkloadSpec,
  type WorkloadStatus,
} from './compute-provider.js';
import { HostMachine } from './host-machine.js';
import { LogRingBuffer, type LogRingBufferOptions } from './log-ring-buffer.js';

/**
 * Host variables a process needs to run at all. Nothing else of the server's environment leaks
 * into a worker (the server's own keys and database URLs live there). TMPDIR is kept so that the
 * worker and the server agree on the OS temp directory.
 */
const INHERITED_ENV = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TEMP',
  'TMP',
  'LANG',
  'TZ',
  'SYSTEMROOT',
  'SystemRoot',
];

export interface LocalComputeOptions {
  /** Grace between SIGTERM and SIGKILL when none is given (default 10 s). */
  defaultGraceMs?: number;
  /** Bounds of each workload's log buffer. */
  logs?: LogRingBufferOptions;
  /** Exited workloads remembered for status/logs (oldest forgotten first). */
  keepExited?: number;
  /** Working directory of the processes (default: the server's; ignored with `separateUsers`). */
  cwd?: string;
  /**
   * Run each workload as its own unprivileged user (uid = gid, from `firstUid`, one per running
   * workload) with its own home and working directory under `workDir`: it cannot read the server's
   * environment or files, nor another workload's. Needs a server running as root.
   */
  separateUsers?: { firstUid: number; uidCount: number; workDir: string };
}
export const LOCAL_COMPUTE_OPTIONS = Symbol('runplane:local-compute-options');

interface Workload {
  ref: string;
  child: ChildProcess;
  pid: number;
  startedAt: Date;
  exitedAt?: Date;
  exitCode: number | null;
  signal: string | null;
  stopRequested: boolean;
  logs: LogRingBuffer;
  exited: Promise<WorkloadStatus>;
  labels: Record<string, string>;
  placement: WorkloadPlacement;
  /** Its own user and directory, when workloads run as separate users. */
  user?: WorkloadUser;
}

interface WorkloadUser {
  uid: number;
  home: string;
}

/**
 * Standalone compute: a workload is a child process running the template's
 * `dockerEntrypoint` followed by `dockerStartCmd`; the image is recorded, never pulled. Each runs in
 * its own process group, so stopping it also reaches what it spawned (`sh -c ...`). The processes
 * belong to this server: they are stopped when it shuts down, and killed if it exits abruptly.
 */
@Injectable()
export class LocalComputeProvider
  extends ComputeProvider
  implements BeforeApplicationShutdown, OnApplicationShutdown
{
  readonly kind = 'local' as const;
  /** The only machine: this host. */
  readonly host = new HostMachine();
  private readonly workloads = new Map<string, Workload>();
  private readonly exitedOrder: string[] = [];
  private readonly listeners = new Set<ExitListener>();
  private readonly options: Required<Omit<LocalComputeOptions, 'cwd' | 'logs' | 'separateUsers'>> &
    Pick<LocalComputeOptions, 'cwd' | 'logs' | 'separateUsers'>;
  /** uids of running workloads (with `separateUsers`). */
  private readonly uidsInUse = new Set<number>();
  // A crash or process.exit() skips the shutdown hooks; 'exit' still runs synchronous code.
  private readonly killOnExit = () => this.killAll('SIGKILL');

  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() @Inject(LOCAL_COMPUTE_OPTIONS) options: LocalComputeOptions = {},
  ) {
    super();
    this.options = { defaultGraceMs: DEFAULT_STOP_GRACE_MS, keepExited: 200, ...options };
    process.on('exit', this.killOnExit);
  }

  async start(spec: WorkloadSpec): Promise<WorkloadHandle> {
    const argv = [...spec.entrypoint, ...spec.command];
    if (argv.length === 0) {
      throw new WorkloadStartError(
        `nothing to run for image "${spec.image}": the local compute provider runs the template's dockerEntrypoint + dockerStartCmd ` +
          'and does not pull images; set dockerStartCmd (e.g. ["node", "/abs/path/worker.mjs"])',
      );
    }
    const existing = this.workloads.get(spec.id);
    if (existing && !existing.exitedAt)
      throw new WorkloadStartError(`workload ${spec.id} is already running`);

    const user = this.allocateUser(spec.id);
    let child: ChildProcess;
    try {
      child = spawn(argv[0], argv.slice(1), {
        env: {
          ...inheritedEnv(),
          ...(user ? { HOME: user.home } : {}),
          ...spec.env,
          ...spec.secretEnv,
          ...gpuEnv(spec.resources?.gpuDeviceIds),
        },
        cwd: user?.home ?? this.options.cwd,
        ...(user ? { uid: user.uid, gid: user.uid } : {}),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // own process group: kill(-pid) reaches its children too
      });
    } catch (err) {
      // Node's message quotes the offending argument or env value, which may be a resolved secret:
      // only its code is kept (it is logged and shown on the Pod).
      if (user) this.releaseUser(user);
      const code = (err as NodeJS.ErrnoException).code ?? 'ERR_SPAWN';
      throw new WorkloadStartError(
        `cannot start ${spec.id}: an argument or environment value is not valid for a process (${code}; e.g. it holds a NUL character)`,
      );
    }
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err: NodeJS.ErrnoException) => {
        // No shell runs the command: a whole command line in one element is a likely mistake.
        const hint = /\s/.test(argv[0])
          ? ' (the command is an argv array: one element per word, no shell)'
          : '';
        const reason =
          err.code === 'ENOENT'
            ? `command not found: ${argv[0]}${hint}`
            : err.code === 'EACCES'
              ? `permission denied: ${argv[0]}`
              : `spawn failed (${err.code ?? 'unknown error'})`; // never err.message: it may quote values
        reject(new WorkloadStartError(`cannot start ${spec.id}: ${reason}`));
      });
    });
    await spawned.catch((err: unknown) => {
      if (user) this.releaseUser(user);
      throw err;
    });

    child.on('error', (err) =>
      this.logger.warn({ podId: spec.id, err: err.message }, 'worker process error'),
    );
    const logs = new LogRingBuffer(this.options.logs, (line) =>
      this.emitLogs(spec.id, [line], (err) =>
        this.logger.error({ err: String(err) }, 'log listener failed'),
      ),
    );
    child.stdout!.on('data', (chunk: Buffer) => logs.write('stdout', chunk));
    child.stderr!.on('data', (chunk: Buffer) => logs.write('stderr', chunk));
    // The process binds its ports on this host directly: each maps to itself.
    const portMappings = Object.fromEntries(
      (spec.ports ?? [])
        .map((p) => Number.parseInt(p, 10))
        .filter((p) => p > 0)
        .map((p) => [String(p), p]),
    );
    const workload: Workload = {
      ref: spec.id,
      child,
      pid: child.pid!,
      startedAt: new Date(),
      exitCode: null,
      signal: null,
      stopRequested: false,
      logs,
      labels: spec.labels ?? {},
      exited: undefined as unknown as Promise<WorkloadStatus>,
      placement: { machineId: this.host.id, publicIp: this.host.publicIp(), portMappings },
      user,
    };
    workload.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        workload.exitedAt = new Date();
        if (workload.user) this.releaseUser(workload.user);
        workload.signal = signal;
        workload.exitCode = code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : null);
        // Report once the output is drained ('close'), so the logs hold the last lines; but not
        // later than a second: a daemonised grandchild may keep the pipes open indefinitely.
        let reported = false;
        const report = () => {
          if (reported) return;
          reported = true;
          clearTimeout(timer);
          logs.flush();
          resolve(this.finish(workload));
        };
        const timer = setTimeout(report, 1000);
        child.once('close', report);
      });
    });
    this.workloads.set(spec.id, workload);
    // argv[0] only: arguments and env may carry keys.
    this.logger.info(
      {
        ...workload.labels,
        podId: spec.id,
        pid: workload.pid,
        command: argv[0],
        image: spec.image,
        ...(user ? { uid: user.uid } : {}),
      },
      'worker process started',
    );
    return {
      ref: spec.id,
      pid: workload.pid,
      startedAt: workload.startedAt,
      ...workload.placement,
    };
  }

  /**
   * A uid no running workload has — of this server or of another Runplane server on this host,
   * which share the range: each uid in use is claimed with a lock file in the work dir — and a
   * fresh home only it may enter.
   */
  private allocateUser(ref: string): WorkloadUser | undefined {
    const users = this.options.separateUsers;
    if (!users) return undefined;
    fs.mkdirSync(users.workDir, { recursive: true, mode: 0o711 });
    for (let i = 0; i < users.uidCount; i++) {
      const uid = users.firstUid + i;
      if (this.uidsInUse.has(uid) || !claimUid(users.workDir, uid)) continue;
      this.uidsInUse.add(uid);
      // Left over by an earlier holder that died: nothing of it may meet the new workload.
      killProcessesOf(uid);
      const home = path.join(users.workDir, `${ref}-${uid}`);
      fs.rmSync(home, { recursive: true, force: true });
      fs.mkdirSync(home, { mode: 0o700 });
      fs.chownSync(home, uid, uid);
      return { uid, home };
    }
    throw new WorkloadStartError(
      `cannot start ${ref}: all ${users.uidCount} workload users are in use (RUNPLANE_LOCAL_UIDS)`,
    );
  }

  private releaseUser(user: WorkloadUser): void {
    // Whatever it left running (even outside its process group) goes with it, so the next
    // workload given this uid shares nothing with it.
    killProcessesOf(user.uid);
    this.uidsInUse.delete(user.uid);
    fs.rmSync(uidLock(this.options.separateUsers!.workDir, user.uid), { force: true });
    fs.rm(user.home, { recursive: true, force: true }, () => {});
  }

  /** Bookkeeping of an ended workload: remembered for a while, listeners told. */
  private finish(workload: Workload): WorkloadStatus {
    const status = this.describe(workload);
    this.remember(workload.ref);
    this.logger.info(
      {
        ...workload.labels,
        podId: workload.ref,
        pid: workload.pid,
        exitCode: workload.exitCode,
        signal: workload.signal,
        stopRequested: workload.stopRequested,
      },
      'worker process exited',
    );
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (err) {
        this.logger.error({ err: String(err) }, 'exit listener failed');
      }
    }
    return status;
  }

  async stop(ref: string, options: StopOptions = {}): Promise<WorkloadStatus | null> {
    const workload = this.workloads.get(ref);
    if (!workload) return null;
    if (workload.exitedAt) return this.describe(workload);
    workload.stopRequested = true;
    const graceMs = options.graceMs ?? this.options.defaultGraceMs;
    this.sendSignal(workload, 'SIGTERM');
    const timer = setTimeout(() => {
      this.logger.warn(
        { podId: ref, pid: workload.pid, graceMs },
        'worker did not exit after SIGTERM: sending SIGKILL',
      );
      this.sendSignal(workload, 'SIGKILL');
    }, graceMs);
    try {
      return await workload.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  async status(ref: string): Promise<WorkloadStatus | null> {
    const workload = this.workloads.get(ref);
    return workload ? this.describe(workload) : null;
  }

  async logs(ref: string, options: LogsOptions = {}): Promise<LogLine[]> {
    return this.workloads.get(ref)?.logs.read(options.tail) ?? [];
  }

  /** Local processes have no volumes of their own (volumeInGb is recorded only). */
  async deleteVolume(): Promise<void> {}

  defaultMachineId(): string {
    return this.host.id;
  }

  async describeMachine(machineId: string): Promise<MachineFacts | null> {
    return machineId === this.host.id ? this.host.describe() : null;
  }

  onExit(listener: ExitListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Child processes must not outlive the server: all are stopped (SIGTERM, SIGKILL after the grace). */
  releaseAll(options: StopOptions = {}): Promise<void> {
    return this.stopAll(options);
  }

  /** Stops every running workload (SIGTERM, SIGKILL after the grace) and waits for them to end. */
  async stopAll(options: StopOptions = {}): Promise<void> {
    const running = [...this.workloads.values()].filter((w) => !w.exitedAt);
    if (running.length) this.logger.info({ count: running.length }, 'stopping worker processes');
    await Promise.all(running.map((w) => this.stop(w.ref, options)));
  }

  /**
   * Normally WorkersService has already released everything by now (so that it can record the
   * exits); this covers a provider used on its own. Before HTTP and the bus close, so workers can
   * still post the jobs they finish during their grace period.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stopAll();
  }

  /** Nothing may outlive the server, even if the graceful stop above failed. */
  async onApplicationShutdown(): Promise<void> {
    this.killAll('SIGKILL');
    process.off('exit', this.killOnExit);
  }

  private killAll(signal: NodeJS.Signals): void {
    for (const workload of this.workloads.values()) {
      if (!workload.exitedAt) this.sendSignal(workload, signal);
    }
  }

  private sendSignal(workload: Workload, signal: NodeJS.Signals): void {
    try {
      process.kill(-workload.pid, signal);
    } catch {
      try {
        workload.child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }

  private describe(w: Workload): WorkloadStatus {
    return {
      ref: w.ref,
      pid: w.pid,
      startedAt: w.startedAt,
      exitedAt: w.exitedAt,
      exitCode: w.exitCode,
      signal: w.signal,
      stopRequested: w.stopRequested,
      state: w.exitedAt ? 'exited' : w.stopRequested ? 'stopping' : 'running',
      ...(w.exitedAt ? {} : w.placement),
    };
  }

  /** Keeps exited workloads readable for a while, but not forever. */
  private remember(ref: string): void {
    this.exitedOrder.push(ref);
    while (this.exitedOrder.length > this.options.keepExited) {
      const old = this.exitedOrder.shift()!;
      if (this.workloads.get(old)?.exitedAt) this.workloads.delete(old);
    }
  }
}

/**
 * The GPUs a process may use, winning over its own env: exactly those assigned (CUDA and NVIDIA's
 * container convention, by UUID, so CUDA's device order does not matter); none (`""`) for a
 * workload without GPUs on a host that has some; nothing set where pod-rest assigns no GPUs. CUDA
 * honours it; a process could still open the devices itself (docs/compute.md, "GPUs").
 */
export function gpuEnv(gpuDeviceIds: string[] | undefined): Record<string, string> {
  if (!gpuDeviceIds) return {};
  if (!gpuDeviceIds.length) return { CUDA_VISIBLE_DEVICES: '' };
  const ids = gpuDeviceIds.join(',');
  return { CUDA_VISIBLE_DEVICES: ids, NVIDIA_VISIBLE_DEVICES: ids };
}

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** SIGKILL to every process whose real uid is `uid` (Linux /proc; elsewhere nothing to find). */
function killProcessesOf(uid: number): void {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      if (real !== undefined && Number(real) === uid) process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

const uidLock = (workDir: string, uid: number) => path.join(workDir, `uid-${uid}.lock`);

/**
 * Claims `uid` for this process with a lock file holding its pid (`wx`: one winner). A lock of a
 * process that no longer runs is stale and taken over.
 */
function claimUid(workDir: string, uid: number): boolean {
  const lock = uidLock(workDir, uid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number.parseInt(fs.readFileSync(lock, 'utf8'), 10);
    if (holder > 0 && holder !== process.pid && isRunning(holder)) return false;
    if (holder === process.pid) return false; // ours, in use by another of our workloads
    fs.rmSync(lock, { force: true });
  }
  return false;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
