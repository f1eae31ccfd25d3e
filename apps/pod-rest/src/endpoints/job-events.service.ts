import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { SchedulerRpc, type JobEvent, type Principal } from '@runplane/contracts';

/** Job histories live with the jobs, in the scheduler: asked for over the bus, scoped to the caller. */
@Injectable()
export class JobEventsService {
  constructor(private readonly bus: Bus) {}

  list(principal: Principal, endpointId: string, jobId: string): Promise<JobEvent[]> {
    return this.bus.request(SchedulerRpc.jobEvents, {
      ownerId: principal.userId,
      endpointId,
      jobId,
    });
  }
}
