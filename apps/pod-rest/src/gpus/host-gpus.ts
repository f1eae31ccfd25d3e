import type { Logger } from '@runplane/platform';
import { detectGpus, type HostGpu, type RunCommand } from './gpu-inventory.js';

/**
 * The GPUs of the machine this pod-rest runs workloads on, read once at start (RUNPLANE_GPUS, else
 * nvidia-smi). Empty with the Kubernetes provider: the cluster schedules its GPUs itself.
 */
export class HostGpus {
  constructor(readonly gpus: readonly HostGpu[]) {}

  static async detect(
    o: { provider: string; override?: string },
    logger: Logger,
    run?: RunCommand,
  ): Promise<HostGpus> {
    if (o.provider === 'kubernetes') return new HostGpus([]);
    const inventory = await detectGpus(o.override, run);
    if (inventory.gpus.length)
      logger.info(
        {
          source: inventory.source,
          gpus: inventory.gpus.map((g) => `${g.index}: ${g.name} (${g.uuid})`),
        },
        'GPUs of this host are handed out to workloads, whole and exclusively',
      );
    else
      logger.info(
        { source: inventory.source, note: inventory.note },
        'no GPUs on this host: GPU counts of workloads are recorded only',
      );
    return new HostGpus(inventory.gpus);
  }
}
