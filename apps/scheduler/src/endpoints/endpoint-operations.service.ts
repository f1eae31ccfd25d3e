import { Injectable } from '@nestjs/common';
import {
  metricsWindowMs,
  type EndpointMetrics,
  type EndpointMetricsRequest,
  type EndpointScopedRequest,
  type EndpointWorker,
  type EndpointWorkerState,
} from '@runplane/contracts';
import type { Worker as WorkerRow } from '../generated/prisma/client.js';
import { EndpointOperationsRepository } from '../store/endpoint-operations.repository.js';
import { EndpointsService } from './endpoints.service.js';

/** An endpoint's workers and metrics, for its owner (another user's endpoint: 404). */
@Injectable()
export class EndpointOperationsService {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly repo: EndpointOperationsRepository,
  ) {}

  /** Its workers, newest first: live ones, and ended ones kept as history. */
  async workers({ ownerId, endpointId }: EndpointScopedRequest): Promise<EndpointWorker[]> {
    const endpoint = await this.endpoints.requireOwned(ownerId, endpointId, true);
    const [workers, held] = await Promise.all([
      this.repo.workersOf([endpoint.id]),
      this.repo.heldJobs(endpoint.id),
    ]);
    return workers.map((w) => toEndpointWorker(w, held.get(w.id) ?? [], endpoint.version));
  }

  async metrics({ ownerId, endpointId, window }: EndpointMetricsRequest): Promise<EndpointMetrics> {
    const endpoint = await this.endpoints.requireOwned(ownerId, endpointId);
    const to = new Date();
    const from = new Date(to.getTime() - metricsWindowMs(window)!); // validated by the request
    return {
      window,
      from: from.toISOString(),
      to: to.toISOString(),
      ...(await this.repo.metrics(endpoint.id, from, to)),
    };
  }
}

function toEndpointWorker(w: WorkerRow, jobs: string[], version: number): EndpointWorker {
  return {
    id: w.id,
    podId: w.podId,
    state: stateOf(w, jobs.length),
    version: w.version,
    isStale: w.version < version,
    jobs,
    startedAt: w.createdAt.toISOString(),
    lastSeenAt: w.lastSeenAt?.toISOString() ?? null,
    endedAt: w.endedAt?.toISOString() ?? null,
    exitCode: w.endedAt ? w.exitCode : null,
    reason: w.endedAt ? w.reason : null,
  };
}

/** Stored state → what users see; a worker on its way out is shown as what it still does. */
function stateOf(w: WorkerRow, jobs: number): EndpointWorkerState {
  switch (w.state) {
    case 'initializing':
      return 'INITIALIZING';
    case 'unhealthy':
      return 'UNHEALTHY';
    case 'stopped':
    case 'failed':
      return 'EXITED';
    default: // ready, stopping
      return jobs > 0 ? 'RUNNING' : 'IDLE';
  }
}
