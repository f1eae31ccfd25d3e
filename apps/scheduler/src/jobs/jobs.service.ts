import { Injectable } from '@nestjs/common';
import { JOB_LIMITS, RunplaneError, type GetJobRequest, type JobAccepted, type JobRecord, type SubmitJobRequest } from '@runplane/contracts';
import { toJobRecord } from './job-view.js';
import { JobsRepository } from './jobs.repository.js';

/** The job lifecycle. The scheduler is the only writer of job state. */
@Injectable()
export class JobsService {
  constructor(private readonly jobs: JobsRepository) {}

  async submit(request: SubmitJobRequest): Promise<JobAccepted> {
    const { job } = request;
    const row = await this.jobs.insert({
      id: request.jobId,
      endpointId: request.endpointId,
      ownerId: request.ownerId,
      mode: request.mode,
      input: job.input as object,
      webhook: job.webhook,
      s3Config: job.s3Config as object | undefined,
      lowPriority: job.policy?.lowPriority ?? false,
      executionTimeoutMs: job.policy?.executionTimeout ?? JOB_LIMITS.executionTimeout.default,
      ttlMs: job.policy?.ttl ?? JOB_LIMITS.ttl.default,
    }, new Date());
    return { id: row.id, status: row.status };
  }

  async get(request: GetJobRequest): Promise<JobRecord> {
    const row = await this.jobs.findOwned(request.ownerId, request.endpointId, request.jobId);
    if (!row || row.expiresAt.getTime() <= Date.now()) throw RunplaneError.notFound(`job ${request.jobId} not found`, 'JOB_NOT_FOUND');
    return toJobRecord(row);
  }
}
