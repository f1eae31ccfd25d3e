import { Injectable } from '@nestjs/common';
import type { GpuShortage } from '@runplane/contracts';
import { PodsRepository } from '../pods/pods.repository.js';
import { HostGpus } from './host-gpus.js';
import type { HostGpu } from './gpu-inventory.js';

/**
 * The GPUs `count` more workloads' GPUs would be: the free ones of lowest index, or the shortage.
 * Whole GPUs, each to one workload at a time.
 */
export function pickGpus(
  inventory: readonly HostGpu[],
  inUse: ReadonlySet<string>,
  count: number,
): { ids: string[] } | { shortage: GpuShortage } {
  const free = inventory.filter((g) => !inUse.has(g.uuid));
  if (free.length < count)
    return { shortage: { needed: count, free: free.length, total: inventory.length } };
  return { ids: free.slice(0, count).map((g) => g.uuid) };
}

/**
 * Hands out this host's GPUs (HostGpus) to workloads, whole and exclusively. The allocation is the
 * `gpuIds` of Pod rows whose run has not ended (cleared with every recorded exit), so a restart
 * of pod-rest — whose docker workloads keep running — can never hand a GPU out twice. Claims are
 * serialised in this process: with host GPUs, one pod-rest runs the host's workloads.
 */
@Injectable()
export class GpuAllocator {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly host: HostGpus,
    private readonly pods: PodsRepository,
  ) {}

  /** Whether workloads get this host's GPUs: some were found, and the provider runs workloads here. */
  get enabled(): boolean {
    return this.host.gpus.length > 0;
  }

  get total(): number {
    return this.host.gpus.length;
  }

  /**
   * Claims `count` free GPUs and records them with `record(ids)` (the Pod row's `gpuIds`) before
   * anyone else may claim; or answers the shortage, recording nothing. Count 0 gets `[]`.
   */
  claim(
    count: number,
    record: (ids: string[]) => Promise<void>,
  ): Promise<{ ids: string[] } | { shortage: GpuShortage }> {
    const run = this.tail.then(async () => {
      const picked =
        count > 0
          ? pickGpus(this.host.gpus, new Set(await this.pods.gpuIdsInUse()), count)
          : { ids: [] };
      if ('ids' in picked) await record(picked.ids);
      return picked;
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** The shortage `count` GPUs would meet now, or null (a claim decides; this only looks). */
  async shortage(count: number): Promise<GpuShortage | null> {
    if (!this.enabled || count <= 0) return null;
    const picked = pickGpus(this.host.gpus, new Set(await this.pods.gpuIdsInUse()), count);
    return 'shortage' in picked ? picked.shortage : null;
  }
}
