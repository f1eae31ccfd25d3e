import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { SchedulerRpc, type JobDetail, type JobEvent, type Principal } from '@runplane/contracts';

/** Jobs live in the scheduler: asked for over the bus, scoped to the caller. */
@Injectable()
export class EndpointJobsService {
  constructor(private readonly bus: Bus) {}

  detail(principal: Principal, endpointId: string, jobId: string): Promise<JobDetail> {
    return this.bus.request(SchedulerRpc.jobDetail, {
      ownerId: principal.userId,
      endpointId,
      jobId,
    });
  }

  events(principal: Principal, endpointId: string, jobId: string): Promise<JobEvent[]> {
    return this.bus.request(SchedulerRpc.jobEvents, {
      ownerId: principal.userId,
      endpointId,
      jobId,
    });
  }
}
