import { Module } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { VaultRpc } from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import { HostGpus } from '../gpus/host-gpus.js';
import { PodRestSettings } from '../settings.js';
import { ComputeProvider } from './compute-provider.js';
import { LocalComputeProvider } from './local-compute-provider.js';
import { LocalRunPolicy } from './local-run-policy.js';

/**
 * The compute provider of this process, chosen by RUNPLANE_COMPUTE_PROVIDER (docs/compute.md):
 * `local` (default) runs workloads as child processes of this server, `kubernetes` as Pods of a
 * cluster, `docker` as containers of a Docker engine (or podman's API). Only the chosen one is built
 * (the Kubernetes one reads its credentials when built).
 */
@Module({
  providers: [
    LocalRunPolicy,
    PodRestSettings,
    CatalogueService,
    {
      // Before the catalogue and the allocator: both read it.
      provide: HostGpus,
      inject: [PodRestSettings, LOGGER],
      useFactory: (settings: PodRestSettings, logger: Logger) =>
        HostGpus.detect({ provider: settings.computeProvider, override: settings.gpus }, logger),
    },
    {
      provide: ComputeProvider,
      inject: [PodRestSettings, LOGGER, Bus],
      useFactory: async (
        settings: PodRestSettings,
        logger: Logger,
        bus: Bus,
      ): Promise<ComputeProvider> => {
        if (settings.computeProvider === 'docker') {
          const { DockerComputeProvider } = await import('./docker/docker-compute-provider.js');
          return new DockerComputeProvider(
            {
              ...settings.docker,
              defaultGraceMs: settings.docker.stopGraceSeconds * 1000,
              // Asked of the vault only when a private image is pulled; never stored or logged.
              registryAuth: (ownerId, registryAuthId) =>
                bus.request(VaultRpc.resolveRegistryAuth, { ownerId, registryAuthId }),
            },
            logger,
          );
        }
        if (settings.computeProvider === 'kubernetes') {
          const { KubernetesComputeProvider } =
            await import('./kubernetes/kubernetes-compute-provider.js');
          return KubernetesComputeProvider.fromSettings(settings, logger);
        }
        if (settings.localIsolation.separateUsers)
          logger.info(
            { uids: `${settings.localIsolation.firstUid}+${settings.localIsolation.uidCount}` },
            'local workloads run as their own users',
          );
        else
          logger.warn(
            "local workloads run as the server's own user (not root, or RUNPLANE_LOCAL_ISOLATION=none): they can read what the server can; only trusted users may run commands (docs/security.md)",
          );
        return new LocalComputeProvider(logger, {
          separateUsers: settings.localIsolation.separateUsers
            ? settings.localIsolation
            : undefined,
        });
      },
    },
  ],
  exports: [ComputeProvider, PodRestSettings, CatalogueService, LocalRunPolicy, HostGpus],
})
export class ComputeModule {}
