import { IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Min } from 'class-validator';
import { defineRpc } from './definitions.js';
import { OwnedRequest, type Ack } from './scheduler.js';

/**
 * The scheduler asks pod-rest for a serverless worker: a Pod of the endpoint's template carrying
 * the worker protocol environment (contract §4). pod-rest's compute provider runs it (a child
 * process in standalone mode, a Kubernetes Pod in cluster mode) and owns its record.
 */
export class StartWorkerRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() workerId!: string;
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsString() @IsNotEmpty() templateId!: string;
  @IsInt() @Min(1) slsVersion!: number;
  /** RUNPOD_* variables of the worker protocol; merged over the template's env. */
  @IsObject() env!: Record<string, string>;
  @IsOptional() @IsString() gpuTypeId?: string;
}

export class StopWorkerRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() workerId!: string;
}

export interface StartWorkerResponse {
  podId: string;
}

export const PodRpc = {
  startWorker: defineRpc<StartWorkerRequest, StartWorkerResponse>('pod-rest', 'workers.start', StartWorkerRequest),
  stopWorker: defineRpc<StopWorkerRequest, Ack>('pod-rest', 'workers.stop', StopWorkerRequest),
} as const;
