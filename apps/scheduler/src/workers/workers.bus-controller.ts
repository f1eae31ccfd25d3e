import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc, OnSignal } from '@runplane/bus';
import {
  JobDoneRequest, JobStreamRequest, PingRequest, PodSignals, ReleaseJobsRequest, SchedulerRpc, SchedulerSignals, StopJobsRequest, TakeJobsRequest,
  type WorkerExitedSignal,
} from '@runplane/contracts';
import { JobChanges } from '../shared/job-changes.js';
import { WorkerProtocolService } from './worker-protocol.service.js';

/** The worker protocol as queue-api's worker routes relay it, and wake-ups from other replicas. */
@Controller()
export class WorkersBusController {
  constructor(private readonly protocol: WorkerProtocolService, private readonly changes: JobChanges) {}

  @OnRpc(SchedulerRpc.takeJobs)
  take(@Payload() request: TakeJobsRequest) {
    return this.protocol.take(request);
  }

  @OnRpc(SchedulerRpc.releaseJobs)
  release(@Payload() request: ReleaseJobsRequest) {
    return this.protocol.release(request);
  }

  @OnRpc(SchedulerRpc.jobDone)
  done(@Payload() request: JobDoneRequest) {
    return this.protocol.done(request);
  }

  @OnRpc(SchedulerRpc.jobStream)
  stream(@Payload() request: JobStreamRequest) {
    return this.protocol.stream(request);
  }

  @OnRpc(SchedulerRpc.ping)
  ping(@Payload() request: PingRequest) {
    return this.protocol.ping(request);
  }

  @OnRpc(SchedulerRpc.stopJobs)
  stop(@Payload() request: StopJobsRequest) {
    return this.protocol.stop(request);
  }

  /** pod-rest: a managed worker's process ended by itself (best effort: missed pings catch it too). */
  @OnSignal(PodSignals.workerExited)
  async workerExited(@Payload() signal: WorkerExitedSignal) {
    if (signal && typeof signal.endpointId === 'string' && typeof signal.workerId === 'string') await this.protocol.exited(signal);
  }

  /** A replica (this one included) changed a job: long polls here look again. */
  @OnSignal(SchedulerSignals.jobChanged)
  jobChanged(@Payload() signal: { endpointId: string; jobId: string }) {
    if (signal && typeof signal.endpointId === 'string') this.changes.wake(signal.endpointId, String(signal.jobId ?? '*'));
  }
}
