import { IsString } from 'class-validator';
import type { EndpointMetrics, EndpointWorker } from '../endpoints/endpoint-operations.js';
import { IsMetricsWindow } from '../endpoints/endpoint-operations.js';
import { EndpointScopedRequest } from './scheduler.js';
import { defineRpc } from './definitions.js';

export class EndpointMetricsRequest extends EndpointScopedRequest {
  /** `15m`, `1h`, `24h`... */
  @IsString() @IsMetricsWindow() window!: string;
}

/** Operating an endpoint (behind pod-rest's `/v1/endpoints/{id}/workers` and `/metrics`): answered by the scheduler. */
export const EndpointOperationsRpc = {
  workers: defineRpc<EndpointScopedRequest, EndpointWorker[]>(
    'scheduler',
    'endpoints.workers',
    EndpointScopedRequest,
  ),
  metrics: defineRpc<EndpointMetricsRequest, EndpointMetrics>(
    'scheduler',
    'endpoints.metrics',
    EndpointMetricsRequest,
  ),
} as const;
