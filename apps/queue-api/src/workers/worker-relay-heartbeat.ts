import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { QueueApiSignals, RELAY_HEARTBEAT_MS } from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import type { Logger } from 'pino';
import { ReplicaRegistry } from '../limits/replica-registry.js';

/**
 * Tells the scheduler that this replica is relaying workers' calls, so that it counts a worker's
 * silence only while they could be heard (the scheduler cannot tell an outage of queue-api from
 * the workers' own otherwise). The first announcement comes one period after start-up, when the
 * HTTP server listens; it stops when shutdown begins.
 */
@Injectable()
export class WorkerRelayHeartbeat implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private failing = false;

  constructor(
    private readonly bus: Bus,
    private readonly replicas: ReplicaRegistry,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.announce(), RELAY_HEARTBEAT_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async announce(): Promise<void> {
    try {
      await this.bus.signal(QueueApiSignals.workerRelay, { replica: this.replicas.id });
      this.failing = false;
    } catch (err) {
      // Logged once per outage: the scheduler already treats the silence as not hearing workers.
      if (!this.failing) this.logger.warn({ err: String(err) }, 'worker relay heartbeat failed');
      this.failing = true;
    }
  }
}
