import type { Endpoint, ScalerType } from '@runplane/contracts';
import type { EndpointRow } from '../store/endpoints.repository.js';

/** An endpoint row as REST v1 returns it (RunPod's "Endpoint"). */
export function toEndpoint(row: EndpointRow): Endpoint {
  return {
    id: row.id,
    name: row.name,
    templateId: row.templateId,
    userId: row.ownerId,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    computeType: row.computeType as Endpoint['computeType'],
    gpuTypeIds: row.gpuTypeIds,
    gpuCount: row.gpuCount,
    cpuFlavorIds: row.cpuFlavorIds,
    vcpuCount: row.vcpuCount,
    dataCenterIds: row.dataCenterIds,
    env: (row.env ?? {}) as Record<string, string>,
    executionTimeoutMs: row.executionTimeoutMs,
    idleTimeout: row.idleTimeout,
    scalerType: row.scalerType as ScalerType,
    scalerValue: row.scalerValue,
    workersMin: row.workersMin,
    workersMax: row.workersMax,
    networkVolumeId: row.networkVolumeId ?? null,
  };
}
