import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { SchedulerRpc, type JobAccepted, type JobRecord, type JobRequestDto, type Principal } from '@runplane/contracts';
import { newJobId } from './job-ids.js';

/** Queue operations of the public API, carried out by the scheduler over the bus. */
@Injectable()
export class QueueService {
  constructor(private readonly bus: Bus) {}

  submit(principal: Principal, endpointId: string, job: JobRequestDto): Promise<JobAccepted> {
    return this.bus.request(SchedulerRpc.submitJob, { ownerId: principal.userId, endpointId, jobId: newJobId('run'), mode: 'run', job });
  }

  status(principal: Principal, endpointId: string, jobId: string): Promise<JobRecord> {
    return this.bus.request(SchedulerRpc.getJob, { ownerId: principal.userId, endpointId, jobId });
  }
}
