import { Module } from '@nestjs/common';
import { ComputeProvider } from './compute-provider.js';
import { LocalComputeProvider } from './local-compute-provider.js';

/**
 * The compute provider of this process. Standalone runs workers as local processes; the
 * Kubernetes provider (cluster mode) will be chosen here by configuration.
 */
@Module({
  providers: [LocalComputeProvider, { provide: ComputeProvider, useExisting: LocalComputeProvider }],
  exports: [ComputeProvider],
})
export class ComputeModule {}
