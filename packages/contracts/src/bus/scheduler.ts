import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  EndpointCreateDto,
  EndpointUpdateDto,
  type Endpoint,
  type HealthRecord,
} from '../endpoints/endpoint.dto.js';
import { JOB_STATUSES, type JobStatus } from '../jobs/job-status.js';
import { JobRequestDto } from '../jobs/job-request.dto.js';
import type { JobAccepted, JobDetail, JobRecord } from '../jobs/job-record.js';
import { JOB_LIMITS } from '../jobs/limits.js';
import type { JobDoneBody, WorkerJob } from '../workers/worker-protocol.js';
import { KeptAsSent } from '../validation/kept-as-sent.js';
import { defineRpc, defineSignal } from './definitions.js';

// ---- requests from the public queue API (queue-api) ------------------------------------------

/** Every client-side scheduler call carries the caller's user: jobs and endpoints are scoped to it. */
export class OwnedRequest {
  @IsString() @IsNotEmpty() ownerId!: string;
}

export class EndpointScopedRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() endpointId!: string;
}

export class JobScopedRequest extends EndpointScopedRequest {
  @IsString() @IsNotEmpty() jobId!: string;
}

export class SubmitJobRequest extends EndpointScopedRequest {
  /** Chosen by queue-api so a retried submission cannot create a second job. */
  @IsString() @IsNotEmpty() jobId!: string;
  @IsIn(['run', 'runsync']) mode!: 'run' | 'runsync';
  @IsObject() @ValidateNested() @Type(() => JobRequestDto) job!: JobRequestDto;
}

/** `/runsync`: submits, then blocks like `AwaitJobRequest` (one round trip instead of two). */
export class RunJobSyncRequest extends SubmitJobRequest {
  @IsInt() @Min(0) @Max(JOB_LIMITS.runsyncWait.max) waitMs!: number;
}

export class GetJobRequest extends JobScopedRequest {
  /** `/status?ttl=`: sets the job's TTL (ms from submission). */
  @IsOptional() @IsInt() @Min(JOB_LIMITS.ttl.min) @Max(JOB_LIMITS.ttl.max) ttlMs?: number;
}

/** Blocks until the job is final or `waitMs` elapses (runsync, status-sync), then returns its record. */
export class AwaitJobRequest extends JobScopedRequest {
  @IsInt() @Min(0) @Max(JOB_LIMITS.runsyncWait.max) waitMs!: number;
}

/** Drains the job's unread stream chunks, waiting up to `waitMs` when there are none and it is not final. */
export class StreamJobRequest extends JobScopedRequest {
  @IsInt() @Min(0) @Max(JOB_LIMITS.streamWait.max) waitMs!: number;
}

export interface StreamResponse {
  id: string;
  status: JobStatus;
  stream: Array<{ output: unknown }>;
}

export class ListJobsRequest extends EndpointScopedRequest {
  @IsOptional() @IsIn(JOB_STATUSES) status?: JobStatus;
  @IsInt() @Min(1) @Max(100) limit!: number;
  @IsOptional() @IsString() cursor?: string;
}

export interface ListJobsResponse {
  requests: Array<{
    id: string;
    status: JobStatus;
    createdAt: string;
    delayTime?: number;
    executionTime?: number;
  }>;
  nextCursor: string | null;
}

export interface PurgeResponse {
  removed: number;
  status: string;
}

/** What happened to a job, in a job's history (`GET /v1/endpoints/{id}/jobs/{jobId}/events`). */
export type JobEventType =
  | 'SUBMITTED'
  | 'TAKEN'
  | 'PROGRESS'
  | 'REQUEUED'
  | 'RETRIED'
  | 'STOP_SENT'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TIMED_OUT'
  | 'EXPIRED';

/**
 * One transition of a job, recorded with it and deleted with it. Never carries the job's input,
 * output or secrets.
 */
export interface JobEvent {
  /** When it happened (ISO 8601). */
  at: string;
  type: JobEventType;
  /** The worker concerned (TAKEN, PROGRESS, REQUEUED, STOP_SENT, a worker's final state), else null. */
  workerId: string | null;
  /** A short explanation (why it was requeued, why a stop was sent, the error of a failure), or null. */
  detail: string | null;
}

// ---- requests from workers (through queue-api's worker routes) -------------------------------

export class WorkerRequest {
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsString() @IsNotEmpty() workerId!: string;
  /** The caller's user (queue-api always sets it): when set, the endpoint must be this user's (else 404). */
  @IsOptional() @IsString() ownerId?: string;
  /**
   * The worker the caller's key belongs to (a managed worker's key): it may act as itself or as
   * an external worker of the endpoint, never as another managed worker.
   */
  @IsOptional() @IsString() keyWorkerId?: string;
}

/**
 * A worker's long poll (job-take, job-stop), held by a queue-api replica for up to `waitMs`. The
 * scheduler counts each round of a held poll as hearing the worker, but only while someone holds
 * it: `relay` names the replica (it announces itself, `QueueApiSignals.workerRelay`) and `pollId`
 * the poll, which the replica reports when the worker's connection closes
 * (`QueueApiSignals.workerPollsEnded`). Both optional: a queue-api of an older version sends neither.
 */
export class WorkerPollRequest extends WorkerRequest {
  @IsInt() @Min(0) @Max(60_000) waitMs!: number;
  @IsOptional() @IsString() @IsNotEmpty() relay?: string;
  @IsOptional() @IsString() @IsNotEmpty() pollId?: string;
}

/** job-take / job-take-batch: long poll for up to `waitMs`, then `{jobs: []}`. */
export class TakeJobsRequest extends WorkerPollRequest {
  @IsInt() @Min(1) @Max(100) batchSize!: number;
}

export interface TakeJobsResponse {
  jobs: WorkerJob[];
}

/** Jobs handed out whose HTTP response could not be delivered: back to the queue, no retry counted. */
export class ReleaseJobsRequest extends WorkerRequest {
  @IsArray() @IsString({ each: true }) jobIds!: string[];
}

export class JobDoneRequest extends WorkerRequest {
  @IsString() @IsNotEmpty() jobId!: string;
  /** The raw job-done body; interpreted by the scheduler. */
  @IsObject() @KeptAsSent() body!: JobDoneBody;
  @IsBoolean() isStream!: boolean;
}

export class JobStreamRequest extends WorkerRequest {
  @IsString() @IsNotEmpty() jobId!: string;
  /** The raw job-stream body, normally `{output}`. */
  @IsObject() @KeptAsSent() body!: Record<string, unknown>;
}

export class PingRequest extends WorkerRequest {
  @IsArray() @IsString({ each: true }) jobIds!: string[];
  /**
   * The ping lists every job the worker has in progress (runpod-python and the worker SDK do, and
   * send `runpod_version` with it): jobs assigned to it long enough ago but missing never reached it.
   */
  @IsOptional() @IsBoolean() reportsJobs?: boolean;
  /** Set by the fitness-check failure ping: the worker is about to exit. */
  @IsOptional() @IsIn(['unhealthy']) status?: 'unhealthy';
  /** `<check>: <reason>` of that ping. */
  @IsOptional() @IsString() @MaxLength(600) reason?: string;
}

/** job-stop: long poll for jobs this worker must abandon (cancelled, timed out, expired). */
export class StopJobsRequest extends WorkerPollRequest {}

export interface StopJobsResponse {
  jobsToStop: string[];
}

export interface Ack {
  ok: true;
}

// ---- endpoints (through pod-rest's /v1/endpoints) --------------------------------------------

export class CreateEndpointRequest extends OwnedRequest {
  @IsObject() @ValidateNested() @Type(() => EndpointCreateDto) endpoint!: EndpointCreateDto;
}

export class UpdateEndpointRequest extends EndpointScopedRequest {
  @IsObject() @ValidateNested() @Type(() => EndpointUpdateDto) changes!: EndpointUpdateDto;
}

/** How many endpoints, of any user, run on a template (a template in use cannot be deleted: 409). */
export class TemplateUsageRequest {
  @IsString() @IsNotEmpty() templateId!: string;
}

export interface TemplateUsageResponse {
  endpoints: number;
}

/**
 * A template changed: the rolling release of its owner's endpoints on it, applied at once by
 * template-graphql before it answers the update (so the caller's next read sees the new version).
 * Keyed by the id of the `template.updated` event that also carries it, so it happens once.
 */
export class TemplateReleaseRequest {
  @IsString() @IsNotEmpty() templateId!: string;
  @IsString() @IsNotEmpty() eventId!: string;
  /** The template's owner: only their endpoints follow it; other users' stay on their revision. */
  @IsString() @IsNotEmpty() ownerId!: string;
  /** The template's revision after the change. */
  @IsOptional() @IsInt() @Min(2) revision?: number;
}

/**
 * Request/reply operations answered by the scheduler, which owns endpoints and jobs: their state
 * machine, durable timers, dispatch to workers, worker liveness.
 */
export const SchedulerRpc = {
  submitJob: defineRpc<SubmitJobRequest, JobAccepted>('scheduler', 'jobs.submit', SubmitJobRequest),
  runJobSync: defineRpc<RunJobSyncRequest, JobRecord>(
    'scheduler',
    'jobs.run-sync',
    RunJobSyncRequest,
  ),
  getJob: defineRpc<GetJobRequest, JobRecord>('scheduler', 'jobs.get', GetJobRequest),
  awaitJob: defineRpc<AwaitJobRequest, JobRecord>('scheduler', 'jobs.await', AwaitJobRequest),
  streamJob: defineRpc<StreamJobRequest, StreamResponse>(
    'scheduler',
    'jobs.stream',
    StreamJobRequest,
  ),
  cancelJob: defineRpc<JobScopedRequest, JobAccepted>('scheduler', 'jobs.cancel', JobScopedRequest),
  retryJob: defineRpc<JobScopedRequest, JobAccepted>('scheduler', 'jobs.retry', JobScopedRequest),
  purgeQueue: defineRpc<EndpointScopedRequest, PurgeResponse>(
    'scheduler',
    'jobs.purge',
    EndpointScopedRequest,
  ),
  listJobs: defineRpc<ListJobsRequest, ListJobsResponse>('scheduler', 'jobs.list', ListJobsRequest),
  /** A job's history, oldest first. */
  jobEvents: defineRpc<JobScopedRequest, JobEvent[]>('scheduler', 'jobs.events', JobScopedRequest),
  jobDetail: defineRpc<JobScopedRequest, JobDetail>('scheduler', 'jobs.detail', JobScopedRequest),
  health: defineRpc<EndpointScopedRequest, HealthRecord>(
    'scheduler',
    'endpoints.health',
    EndpointScopedRequest,
  ),

  takeJobs: defineRpc<TakeJobsRequest, TakeJobsResponse>(
    'scheduler',
    'workers.take',
    TakeJobsRequest,
  ),
  releaseJobs: defineRpc<ReleaseJobsRequest, Ack>(
    'scheduler',
    'workers.release',
    ReleaseJobsRequest,
  ),
  jobDone: defineRpc<JobDoneRequest, Ack>('scheduler', 'workers.done', JobDoneRequest),
  jobStream: defineRpc<JobStreamRequest, Ack>('scheduler', 'workers.stream', JobStreamRequest),
  ping: defineRpc<PingRequest, Ack>('scheduler', 'workers.ping', PingRequest),
  stopJobs: defineRpc<StopJobsRequest, StopJobsResponse>(
    'scheduler',
    'workers.stop',
    StopJobsRequest,
  ),

  createEndpoint: defineRpc<CreateEndpointRequest, Endpoint>(
    'scheduler',
    'endpoints.create',
    CreateEndpointRequest,
  ),
  listEndpoints: defineRpc<OwnedRequest, Endpoint[]>('scheduler', 'endpoints.list', OwnedRequest),
  getEndpoint: defineRpc<EndpointScopedRequest, Endpoint>(
    'scheduler',
    'endpoints.get',
    EndpointScopedRequest,
  ),
  updateEndpoint: defineRpc<UpdateEndpointRequest, Endpoint>(
    'scheduler',
    'endpoints.update',
    UpdateEndpointRequest,
  ),
  deleteEndpoint: defineRpc<EndpointScopedRequest, Ack>(
    'scheduler',
    'endpoints.delete',
    EndpointScopedRequest,
  ),
  templateUsage: defineRpc<TemplateUsageRequest, TemplateUsageResponse>(
    'scheduler',
    'endpoints.template-usage',
    TemplateUsageRequest,
  ),
  releaseTemplate: defineRpc<TemplateReleaseRequest, Ack>(
    'scheduler',
    'endpoints.release-template',
    TemplateReleaseRequest,
  ),
} as const;

/** One change of `scheduler.jobs.changed`: what changed, so that each replica wakes only the long polls it concerns. */
export interface JobChange {
  endpointId: string;
  /** The job that changed; `"*"` stands for any job of the endpoint (purges, timer sweeps, configuration). */
  jobId: string;
  /** Jobs that became claimable: wakes this many waiting job-takes. */
  queued?: number;
  /** Job-stop rows were written: wakes the endpoint's job-stop polls. */
  stops?: boolean;
}

/** The changes a replica made in one turn of its event loop, sent together. */
export interface JobChangedSignal {
  /** The sending replica (a replica ignores its own signals: it woke its polls already). */
  origin?: string;
  changes: JobChange[];
}

export const SchedulerSignals = {
  /** Jobs changed state or got output: wakes long polls (await, stream, take, stop) on every replica. */
  jobChanged: defineSignal<JobChangedSignal>('scheduler.jobs.changed'),
} as const;
