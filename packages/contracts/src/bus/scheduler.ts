import { Type } from 'class-transformer';
import { IsIn, IsNotEmpty, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { JobRequestDto } from '../jobs/job-request.dto.js';
import type { JobAccepted, JobRecord } from '../jobs/job-record.js';
import { defineRpc } from './definitions.js';

/** Every scheduler call carries the caller's user: jobs are scoped to their owner. */
export class OwnedRequest {
  @IsString() @IsNotEmpty() ownerId!: string;
}

export class SubmitJobRequest extends OwnedRequest {
  /** Chosen by queue-api so a retried submission cannot create a second job. */
  @IsString() @IsNotEmpty() jobId!: string;
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsIn(['run', 'runsync']) mode!: 'run' | 'runsync';
  @IsObject() @ValidateNested() @Type(() => JobRequestDto) job!: JobRequestDto;
  @IsOptional() @IsString() idempotencyKey?: string;
}

export class GetJobRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsString() @IsNotEmpty() jobId!: string;
}

/** Request/reply operations answered by the scheduler, which owns jobs and endpoints. */
export const SchedulerRpc = {
  submitJob: defineRpc<SubmitJobRequest, JobAccepted>('scheduler', 'jobs.submit', SubmitJobRequest),
  getJob: defineRpc<GetJobRequest, JobRecord>('scheduler', 'jobs.get', GetJobRequest),
} as const;
