import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RunplaneMetrics } from '@runplane/platform';
import { PrismaClient } from '../generated/prisma/client.js';

/**
 * The scheduler's part of `/metrics`. Queue depth, the oldest queued job and worker counts live in
 * the database: they are read when Prometheus scrapes (two grouped queries), never on the job path.
 * Every replica reports the same database-wide values (dashboards take `max by (endpoint)`).
 * Job latencies and outcomes are observed in memory where jobs are taken and finish, by the
 * replica that made the change (dashboards `sum` them).
 */
@Injectable()
export class SchedulerMetrics implements OnModuleInit {
  constructor(
    private readonly db: PrismaClient,
    private readonly metrics: RunplaneMetrics,
  ) {}

  onModuleInit(): void {
    this.metrics.beforeScrape('scheduler queue and workers', () => this.collect());
  }

  /** A new job was accepted (not a repeated submission of the same id). */
  submitted(): void {
    this.metrics.jobsSubmitted.inc();
  }

  /** Jobs a worker just took: their queue delay (RunPod `delayTime`). */
  taken(jobs: Array<{ createdAt: Date | string }>, now: Date): void {
    for (const job of jobs)
      this.metrics.jobQueueDelay.observe(
        Math.max(0, now.getTime() - new Date(job.createdAt).getTime()) / 1000,
      );
  }

  /** Jobs that reached a final state now; `startedAt` is null for jobs cancelled while queued. */
  finished(
    status: 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT',
    jobs: Array<{ startedAt: Date | string | null }>,
    now: Date,
  ): void {
    for (const job of jobs) {
      this.metrics.jobsFinished.inc({ status });
      if (job.startedAt)
        this.metrics.jobExecution.observe(
          { status },
          Math.max(0, now.getTime() - new Date(job.startedAt).getTime()) / 1000,
        );
    }
  }

  private async collect(): Promise<void> {
    const now = Date.now();
    const [endpoints, queued, workers] = await Promise.all([
      this.db.endpoint.findMany({ select: { id: true } }),
      this.db.job.groupBy({
        by: ['endpointId'],
        where: { status: 'IN_QUEUE', deletedAt: null },
        _count: { _all: true },
        _min: { createdAt: true },
      }),
      this.db.worker.groupBy({ by: ['endpointId', 'state'], _count: { _all: true } }),
    ]);
    const { queueDepth, queueOldestAge, workers: workerGauge } = this.metrics;
    // Reset first: an endpoint deleted since the last scrape must disappear, not stay frozen.
    queueDepth.reset();
    queueOldestAge.reset();
    workerGauge.reset();
    for (const { id } of endpoints) {
      queueDepth.set({ endpoint: id }, 0);
      queueOldestAge.set({ endpoint: id }, 0);
    }
    for (const q of queued) {
      queueDepth.set({ endpoint: q.endpointId }, q._count._all);
      if (q._min.createdAt)
        queueOldestAge.set(
          { endpoint: q.endpointId },
          Math.max(0, now - q._min.createdAt.getTime()) / 1000,
        );
    }
    for (const w of workers)
      workerGauge.set({ endpoint: w.endpointId, state: w.state }, w._count._all);
  }
}
