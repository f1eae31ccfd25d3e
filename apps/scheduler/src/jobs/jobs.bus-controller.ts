import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { GetJobRequest, SchedulerRpc, SubmitJobRequest } from '@runplane/contracts';
import { JobsService } from './jobs.service.js';

/** The scheduler's job operations as other services call them over the bus. */
@Controller()
export class JobsBusController {
  constructor(private readonly jobs: JobsService) {}

  @OnRpc(SchedulerRpc.submitJob)
  submit(@Payload() request: SubmitJobRequest) {
    return this.jobs.submit(request);
  }

  @OnRpc(SchedulerRpc.getJob)
  get(@Payload() request: GetJobRequest) {
    return this.jobs.get(request);
  }
}
