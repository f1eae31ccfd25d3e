import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { MachineFacts } from './compute-provider.js';

/**
 * This host as the local compute provider's only machine: CPU model and count, threads per core
 * (from /proc/cpuinfo where there is one), memory, and the GPUs `nvidia-smi` lists when it is
 * installed. Read once and cached: none of it changes while the server runs.
 */
export class HostMachine {
  private facts?: Promise<MachineFacts>;

  /** The machine id Pods on this host carry (`machineId`): the host name. */
  readonly id = os.hostname() || 'localhost';

  describe(): Promise<MachineFacts> {
    this.facts ??= detect(this.id);
    return this.facts;
  }

  /** The address Pods on this host are reached at: its first non-internal IPv4, else loopback. */
  publicIp(): string {
    for (const addresses of Object.values(os.networkInterfaces())) {
      const v4 = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
      if (v4) return v4.address;
    }
    return '127.0.0.1';
  }
}

async function detect(id: string): Promise<MachineFacts> {
  const cpus = os.cpus();
  const [threadsPerCore, gpus] = await Promise.all([threadsPerCoreOf(), nvidiaGpus()]);
  return {
    id,
    cpuModel: cpus[0]?.model.trim() || os.arch(),
    cpuCount: cpus.length || 1,
    threadsPerCore,
    memoryInGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    gpus,
  };
}

/** `siblings / cpu cores` of the first processor in /proc/cpuinfo (Linux); 1 elsewhere. */
async function threadsPerCoreOf(): Promise<number> {
  try {
    return parseThreadsPerCore(await readFile('/proc/cpuinfo', 'utf8'));
  } catch {
    return 1;
  }
}

export function parseThreadsPerCore(cpuinfo: string): number {
  const siblings = Number(/^siblings\s*:\s*(\d+)/m.exec(cpuinfo)?.[1]);
  const cores = Number(/^cpu cores\s*:\s*(\d+)/m.exec(cpuinfo)?.[1]);
  return siblings > 0 && cores > 0 ? Math.max(1, Math.round(siblings / cores)) : 1;
}

/** GPUs from `nvidia-smi` (none when it is missing, fails or takes over 5 s). */
export function nvidiaGpus(): Promise<MachineFacts['gpus']> {
  return new Promise((resolve) => {
    execFile(
      'nvidia-smi',
      ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'],
      { timeout: 5000, env: process.env },
      (err, stdout) => {
        resolve(err ? [] : parseNvidiaSmi(stdout));
      },
    );
  });
}

/** `NVIDIA GeForce RTX 4090, 24564` lines (memory in MiB) → GPUs. */
export function parseNvidiaSmi(csv: string): MachineFacts['gpus'] {
  return csv
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const cut = line.lastIndexOf(',');
      const name = (cut >= 0 ? line.slice(0, cut) : line).trim();
      const mib = cut >= 0 ? Number(line.slice(cut + 1).trim()) : NaN;
      return { name, memoryInGb: Number.isFinite(mib) ? Math.round((mib / 1024) * 10) / 10 : null };
    });
}
