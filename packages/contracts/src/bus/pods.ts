import { IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Max, Min } from 'class-validator';
import { IsStringMap } from '../templates/template.dto.js';
import { defineRpc, defineSignal } from './definitions.js';
import { OwnedRequest, TemplateUsageRequest, type Ack } from './scheduler.js';

/**
 * The scheduler asks pod-rest for a serverless worker: a Pod of the endpoint's template carrying
 * the worker protocol environment. pod-rest's compute provider runs it (a child
 * process in standalone mode, a Kubernetes Pod in cluster mode) and owns its record.
 */
export class StartWorkerRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() workerId!: string;
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsString() @IsNotEmpty() templateId!: string;
  /** The template revision the endpoint is pinned to (another user's public template); absent: the current one. */
  @IsOptional() @IsInt() @Min(1) templateRevision?: number;
  @IsInt() @Min(1) slsVersion!: number;
  /** RUNPOD_* variables of the worker protocol; merged over the template's env. */
  @IsObject() @IsStringMap() env!: Record<string, string>;
  /** The endpoint's own variables: over the template's env, under the protocol's; secret references resolved alike. */
  @IsOptional() @IsObject() @IsStringMap() endpointEnv?: Record<string, string>;
  @IsOptional() @IsString() gpuTypeId?: string;
  /** The endpoint's hardware, so the worker Pod is sized and priced like one (catalogue) and gets its GPUs on Kubernetes. */
  @IsOptional() @IsIn(['GPU', 'CPU']) computeType?: 'GPU' | 'CPU';
  @IsOptional() @IsInt() @Min(1) @Max(16) gpuCount?: number;
  @IsOptional() @IsInt() @Min(1) @Max(512) vcpuCount?: number;
  @IsOptional() @IsString() cpuFlavorId?: string;
}

export class StopWorkerRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() workerId!: string;
}

/**
 * GPUs a workload needs that the machine cannot give now: it has `total`, `free` of them are not
 * given to another workload, and the workload needs `needed` (whole GPUs, each to one workload).
 */
export interface GpuShortage {
  needed: number;
  free: number;
  total: number;
}

/**
 * The worker's Pod; or, on a machine whose GPUs pod-rest hands out, the GPUs it lacks: nothing was
 * started or recorded (the scheduler tries again when `needed <= total`, and refuses otherwise).
 */
export type StartWorkerResponse = { podId: string } | { gpuShortage: GpuShortage };

/** How Pods use a template (for template-graphql's delete rules, spec deleteTemplate 2 and 3). */
export interface TemplatePodUsage {
  /** Pods of any user running it now (serverless workers) or able to run it again (stopped Pods). */
  pods: number;
  /** ISO time a Pod last stopped running it, or null when none ever did. */
  lastUsedAt: string | null;
}

export const PodRpc = {
  startWorker: defineRpc<StartWorkerRequest, StartWorkerResponse>(
    'pod-rest',
    'workers.start',
    StartWorkerRequest,
  ),
  stopWorker: defineRpc<StopWorkerRequest, Ack>('pod-rest', 'workers.stop', StopWorkerRequest),
  templateUsage: defineRpc<TemplateUsageRequest, TemplatePodUsage>(
    'pod-rest',
    'pods.template-usage',
    TemplateUsageRequest,
  ),
} as const;

/**
 * A serverless worker's workload ended without the scheduler asking (crash, `exit`, OOM kill), so
 * the scheduler can count it at once instead of waiting for missed pings (crash-loop back-off).
 * Best effort: a lost signal only delays detection until the pings are missed.
 */
export interface WorkerExitedSignal {
  endpointId: string;
  workerId: string;
  exitCode: number | null;
  /** Why it ended, when the compute provider knows (`OOMKilled`, an image that could not be pulled). */
  reason?: string;
  /**
   * Its process ended with pod-rest (a restart of pod-rest, or of the standalone server), not by
   * itself: no fault of its template, so it never counts as a failed start.
   */
  hostRestarted?: boolean;
}

export const PodSignals = {
  workerExited: defineSignal<WorkerExitedSignal>('pod-rest.workers.exited'),
} as const;
