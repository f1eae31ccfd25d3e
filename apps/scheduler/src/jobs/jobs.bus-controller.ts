import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  AwaitJobRequest,
  EndpointScopedRequest,
  GetJobRequest,
  JobScopedRequest,
  ListJobsRequest,
  RunJobSyncRequest,
  SchedulerRpc,
  StreamJobRequest,
  SubmitJobRequest,
} from '@runplane/contracts';
import { JobsService } from './jobs.service.js';

/** The scheduler's job operations as queue-api calls them for clients. */
@Controller()
export class JobsBusController {
  constructor(private readonly jobs: JobsService) {}

  @OnRpc(SchedulerRpc.submitJob)
  submit(@Payload() request: SubmitJobRequest) {
    return this.jobs.submit(request);
  }

  @OnRpc(SchedulerRpc.runJobSync)
  runSync(@Payload() request: RunJobSyncRequest) {
    return this.jobs.runSync(request);
  }

  @OnRpc(SchedulerRpc.getJob)
  get(@Payload() request: GetJobRequest) {
    return this.jobs.get(request);
  }

  @OnRpc(SchedulerRpc.awaitJob)
  await(@Payload() request: AwaitJobRequest) {
    return this.jobs.await(request);
  }

  @OnRpc(SchedulerRpc.streamJob)
  stream(@Payload() request: StreamJobRequest) {
    return this.jobs.stream(request);
  }

  @OnRpc(SchedulerRpc.cancelJob)
  cancel(@Payload() request: JobScopedRequest) {
    return this.jobs.cancel(request);
  }

  @OnRpc(SchedulerRpc.retryJob)
  retry(@Payload() request: JobScopedRequest) {
    return this.jobs.retry(request);
  }

  @OnRpc(SchedulerRpc.jobDetail)
  detail(@Payload() request: JobScopedRequest) {
    return this.jobs.detail(request);
  }

  @OnRpc(SchedulerRpc.jobEvents)
  events(@Payload() request: JobScopedRequest) {
    return this.jobs.events(request);
  }

  @OnRpc(SchedulerRpc.purgeQueue)
  purge(@Payload() request: EndpointScopedRequest) {
    return this.jobs.purge(request);
  }

  @OnRpc(SchedulerRpc.listJobs)
  list(@Payload() request: ListJobsRequest) {
    return this.jobs.list(request);
  }

  @OnRpc(SchedulerRpc.health)
  health(@Payload() request: EndpointScopedRequest) {
    return this.jobs.health(request);
  }
}
