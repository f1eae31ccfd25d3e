import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  EndpointOperationsRpc,
  type Endpoint,
  type EndpointMetrics,
  type EndpointWorker,
  type Principal,
} from '@runplane/contracts';
import { LogLinesRepository } from '../logs/log-lines.repository.js';
import { PodsRepository } from '../pods/pods.repository.js';

/** Lines of a failed worker's output shown with a START_BACKOFF reason. */
const BACKOFF_LOG_LINES = 20;

/**
 * Operating an endpoint: its workers and metrics (the scheduler owns them, over the bus), and the
 * last output of a worker that failed to start (this service runs the workloads).
 */
@Injectable()
export class EndpointOperationsService {
  constructor(
    private readonly bus: Bus,
    private readonly pods: PodsRepository,
    private readonly logLines: LogLinesRepository,
  ) {}

  workers(principal: Principal, endpointId: string): Promise<EndpointWorker[]> {
    return this.bus.request(EndpointOperationsRpc.workers, {
      ownerId: principal.userId,
      endpointId,
    });
  }

  metrics(principal: Principal, endpointId: string, window: string): Promise<EndpointMetrics> {
    return this.bus.request(EndpointOperationsRpc.metrics, {
      ownerId: principal.userId,
      endpointId,
      window,
    });
  }

  /**
   * A START_BACKOFF reason names the worker that failed last: its last output lines are added from
   * the stored logs, where resolved secrets are already replaced (best effort: none when none).
   */
  async withFailedWorkerLogs<E extends Endpoint>(
    principal: Principal,
    endpoints: E[],
  ): Promise<E[]> {
    const reasons = endpoints.flatMap((e) =>
      (e.waiting?.reasons ?? []).filter((r) => r.code === 'START_BACKOFF' && r.workerId),
    );
    await Promise.all(
      reasons.map(async (reason) => {
        const pod = await this.pods.findOwned(principal.userId, reason.workerId!);
        if (!pod) return;
        const lines = await this.logLines.read(pod.id, { tail: BACKOFF_LOG_LINES }).catch(() => []);
        if (lines.length) reason.logs = lines.map((l) => l.text);
      }),
    );
    return endpoints;
  }
}
