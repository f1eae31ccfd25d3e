import { execFile } from 'node:child_process';

/** A GPU of this host, as `nvidia-smi --query-gpu=index,uuid,name,memory.total` lists it. */
export interface HostGpu {
  index: number;
  /** `GPU-<uuid>`: what a workload is given (CUDA_VISIBLE_DEVICES, Docker DeviceIDs). */
  uuid: string;
  name: string;
  /** Total memory in GB (one decimal), null when the driver does not say (`[N/A]`). */
  memoryInGb: number | null;
}

/** Where the inventory came from (logged at start, shown in docs/compute.md). */
export interface GpuInventory {
  gpus: HostGpu[];
  source: 'RUNPLANE_GPUS' | 'nvidia-smi';
  /** Why nvidia-smi found none (missing, no devices, driver error), when it did not. */
  note?: string;
}

export const NVIDIA_SMI_ARGS = [
  '--query-gpu=index,uuid,name,memory.total',
  '--format=csv,noheader',
] as const;

export class GpuListError extends Error {
  override readonly name = 'GpuListError';
}

/**
 * Lines of `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader` (with or
 * without `nounits`), one GPU each: `0, GPU-8f6c…, NVIDIA H100 80GB HBM3, 81559 MiB`. The name is
 * everything between the uuid and the memory (names have no commas today; this keeps working if
 * one does). Blank lines are skipped; a line that is not a GPU throws, naming it.
 */
export function parseGpuList(text: string): HostGpu[] {
  const gpus: HostGpu[] = [];
  for (const raw of text.split(/[\n;]/)) {
    const line = raw.trim();
    if (!line) continue;
    const fields = line.split(',').map((f) => f.trim());
    const index = Number(fields[0]);
    if (fields.length < 4 || !/^\d+$/.test(fields[0]) || !fields[1] || !fields.at(-1)) {
      throw new GpuListError(
        `not a GPU: ${JSON.stringify(line)} (expected "<index>, <uuid>, <name>, <memory> MiB", as nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader prints it)`,
      );
    }
    const name = fields.slice(2, -1).join(', ');
    if (!name) throw new GpuListError(`not a GPU: ${JSON.stringify(line)} (no name)`);
    gpus.push({ index, uuid: fields[1], name, memoryInGb: memoryInGb(fields.at(-1)!) });
  }
  const seen = new Set<string>();
  for (const g of gpus) {
    for (const key of [`index ${g.index}`, `uuid ${g.uuid}`]) {
      if (seen.has(key)) throw new GpuListError(`GPU ${key} is listed twice`);
      seen.add(key);
    }
  }
  return gpus.sort((a, b) => a.index - b.index);
}

/** `81559 MiB` or `81559` (MiB) → GB with one decimal; `[N/A]`, `[Not Supported]` → null. */
function memoryInGb(field: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(MiB)?$/i.exec(field);
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
}

export type RunCommand = (
  file: string,
  args: readonly string[],
) => Promise<{ ok: true; stdout: string } | { ok: false; code?: string | number; output: string }>;

const runCommand: RunCommand = (file, args) =>
  new Promise((resolve) => {
    execFile(file, [...args], { timeout: 10_000 }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, stdout });
      const code = (err as NodeJS.ErrnoException).code;
      resolve({ ok: false, code: code ?? undefined, output: `${stdout}${stderr}`.trim() });
    });
  });

/**
 * The GPUs workloads of this host may be given. `RUNPLANE_GPUS` wins: `none` (no GPUs, whatever
 * the host has) or GPUs in nvidia-smi's form separated by `;` or newlines (e.g. a subset of the
 * host's, or made-up ones for tests). Otherwise nvidia-smi is asked; missing, failing (no driver)
 * or listing no devices means no GPUs. An invalid RUNPLANE_GPUS throws: it is a typo to fix, not
 * a host without GPUs.
 */
export async function detectGpus(
  override: string | undefined,
  run: RunCommand = runCommand,
): Promise<GpuInventory> {
  const declared = override?.trim();
  if (declared) {
    if (declared.toLowerCase() === 'none') return { gpus: [], source: 'RUNPLANE_GPUS' };
    try {
      return { gpus: parseGpuList(declared), source: 'RUNPLANE_GPUS' };
    } catch (err) {
      throw new GpuListError(
        `invalid configuration: RUNPLANE_GPUS: ${(err as Error).message}; or "none". See docs/compute.md.`,
      );
    }
  }
  const result = await run('nvidia-smi', NVIDIA_SMI_ARGS);
  if (!result.ok) {
    const note =
      result.code === 'ENOENT'
        ? 'nvidia-smi is not installed'
        : `nvidia-smi failed: ${result.output.split('\n')[0] || `exit code ${result.code}`}`;
    return { gpus: [], source: 'nvidia-smi', note };
  }
  try {
    const gpus = parseGpuList(result.stdout);
    return gpus.length
      ? { gpus, source: 'nvidia-smi' }
      : { gpus, source: 'nvidia-smi', note: 'nvidia-smi lists no GPUs' };
  } catch (err) {
    // "No devices were found" on some driver versions comes with exit code 0.
    return { gpus: [], source: 'nvidia-smi', note: `nvidia-smi: ${(err as Error).message}` };
  }
}
