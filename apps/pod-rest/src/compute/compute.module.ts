import { Module } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import { PodRestSettings } from '../settings.js';
import { ComputeProvider } from './compute-provider.js';
import { LocalComputeProvider } from './local-compute-provider.js';

/**
 * The compute provider of this process, chosen by RUNPLANE_COMPUTE_PROVIDER (docs/compute.md):
 * `local` (default) runs workloads as child processes of this server, `kubernetes` as Pods of a
 * cluster. Only the chosen one is built (the Kubernetes one reads its credentials when built).
 */
@Module({
  providers: [
    PodRestSettings,
    CatalogueService,
    {
      provide: ComputeProvider,
      inject: [PodRestSettings, LOGGER],
      useFactory: async (settings: PodRestSettings, logger: Logger): Promise<ComputeProvider> => {
        if (settings.computeProvider === 'kubernetes') {
          const { KubernetesComputeProvider } =
            await import('./kubernetes/kubernetes-compute-provider.js');
          return KubernetesComputeProvider.fromSettings(settings, logger);
        }
        return new LocalComputeProvider(logger);
      },
    },
  ],
  exports: [ComputeProvider, PodRestSettings, CatalogueService],
})
export class ComputeModule {}
