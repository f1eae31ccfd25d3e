import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc, OnSignal } from '@runplane/bus';
import {
  JobDoneRequest,
  JobStreamRequest,
  PingRequest,
  PodSignals,
  QueueApiSignals,
  ReleaseJobsRequest,
  SchedulerRpc,
  SchedulerSignals,
  StopJobsRequest,
  TakeJobsRequest,
  type JobChange,
  type JobChangedSignal,
  type WorkerExitedSignal,
  type WorkerPollsEndedSignal,
  type WorkerRelaySignal,
} from '@runplane/contracts';
import { JobChanges } from '../shared/job-changes.js';
import { WorkerProtocolService } from './worker-protocol.service.js';
import { WorkerRelay } from './worker-relay.js';

/** The worker protocol as queue-api's worker routes relay it, and wake-ups from other replicas. */
@Controller()
export class WorkersBusController {
  constructor(
    private readonly protocol: WorkerProtocolService,
    private readonly changes: JobChanges,
    private readonly relay: WorkerRelay,
  ) {}

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
    if (signal && typeof signal.endpointId === 'string' && typeof signal.workerId === 'string')
      await this.protocol.exited(signal);
  }

  /** A queue-api replica is up and relaying workers' calls (their silence counts from now on). */
  @OnSignal(QueueApiSignals.workerRelay)
  relaying(@Payload() signal: WorkerRelaySignal) {
    this.relay.heard(typeof signal?.replica === 'string' ? signal.replica : undefined);
  }

  /** Workers left long polls queue-api held for them: those polls no longer say they are alive. */
  @OnSignal(QueueApiSignals.workerPollsEnded)
  pollsEnded(@Payload() signal: WorkerPollsEndedSignal) {
    if (Array.isArray(signal?.polls))
      this.relay.pollsEnded(signal.polls.filter((id): id is string => typeof id === 'string'));
  }

  /** Another replica changed jobs: long polls here look again. */
  @OnSignal(SchedulerSignals.jobChanged)
  jobChanged(@Payload() signal: JobChangedSignal) {
    // A replica not yet upgraded sends one change, without `changes`.
    const raw: unknown[] = Array.isArray(signal?.changes) ? signal.changes : [signal];
    const changes = raw.flatMap((c) => {
      const change = c as Partial<JobChange> | null;
      if (!change || typeof change.endpointId !== 'string') return [];
      return [
        {
          endpointId: change.endpointId,
          jobId: typeof change.jobId === 'string' ? change.jobId : '*',
          queued: Number.isSafeInteger(change.queued) ? change.queued : undefined,
          stops: change.stops === true,
        },
      ];
    });
    if (changes.length)
      this.changes.received({
        origin: typeof signal.origin === 'string' ? signal.origin : undefined,
        changes,
      });
  }
}
