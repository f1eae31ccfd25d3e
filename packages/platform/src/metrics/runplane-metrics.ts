import client, { type Histogram, type Counter, type Gauge, type Registry } from 'prom-client';

/** Seconds buckets for HTTP and bus calls: from sub-millisecond answers to 30-s long polls. */
const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
/** Seconds buckets for jobs: queue delay and execution run from milliseconds to hours. */
const JOB_BUCKETS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200,
];

type ScrapeHook = () => Promise<void>;
interface HookLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Every Prometheus metric Runplane exposes, in one registry per process: in standalone mode the
 * six services share it (one `/metrics`), in cluster mode each service reports its own part.
 * The names here are the catalogue docs/observability.md lists and the Grafana dashboard uses.
 *
 * Hot paths only touch in-memory instruments (no I/O); values that live in a database (queue
 * depth, workers) are read by scrape hooks when Prometheus asks.
 */
export class RunplaneMetrics {
  readonly registry: Registry = new client.Registry();
  private readonly hooks: Array<{ name: string; run: ScrapeHook }> = [];

  /** HTTP requests by route template (never the raw URL: ids would explode the series). */
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status_code'> =
    new client.Histogram({
      name: 'runplane_http_request_duration_seconds',
      help: 'HTTP requests served, by method, route template and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });

  readonly busRequestDuration: Histogram<'subject' | 'outcome'> = new client.Histogram({
    name: 'runplane_bus_request_duration_seconds',
    help: 'Bus RPCs made by this process (caller side), by subject and outcome (ok, error)',
    labelNames: ['subject', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly busHandlerDuration: Histogram<'subject' | 'kind' | 'outcome'> = new client.Histogram({
    name: 'runplane_bus_handler_duration_seconds',
    help: 'Bus messages handled by this process: RPCs served and events consumed (kind rpc|event), by outcome',
    labelNames: ['subject', 'kind', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly busPublished: Counter<'subject'> = new client.Counter({
    name: 'runplane_bus_events_published_total',
    help: 'Durable events published by this process',
    labelNames: ['subject'],
    registers: [this.registry],
  });

  readonly busConsumerPending: Gauge<'subject' | 'group'> = new client.Gauge({
    name: 'runplane_bus_consumer_pending',
    help: 'Events not yet acknowledged by a consumer group (consumer lag)',
    labelNames: ['subject', 'group'],
    registers: [this.registry],
  });

  readonly jobsSubmitted: Counter<never> = new client.Counter({
    name: 'runplane_jobs_submitted_total',
    help: 'Jobs accepted by the scheduler (run and runsync)',
    registers: [this.registry],
  });

  readonly jobQueueDelay: Histogram<never> = new client.Histogram({
    name: 'runplane_job_queue_delay_seconds',
    help: 'Time a job waited in the queue before a worker took it (RunPod delayTime)',
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });

  readonly jobExecution: Histogram<'status'> = new client.Histogram({
    name: 'runplane_job_execution_seconds',
    help: 'Time from a worker taking a job to its final state (RunPod executionTime), by final status',
    labelNames: ['status'],
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });

  readonly jobsFinished: Counter<'status'> = new client.Counter({
    name: 'runplane_jobs_finished_total',
    help: 'Jobs that reached a final state: COMPLETED, FAILED, CANCELLED, TIMED_OUT',
    labelNames: ['status'],
    registers: [this.registry],
  });

  readonly queueDepth: Gauge<'endpoint'> = new client.Gauge({
    name: 'runplane_queue_depth',
    help: 'Jobs waiting in the queue, per endpoint (read from the scheduler database at scrape time)',
    labelNames: ['endpoint'],
    registers: [this.registry],
  });

  readonly queueOldestAge: Gauge<'endpoint'> = new client.Gauge({
    name: 'runplane_queue_oldest_job_age_seconds',
    help: 'Age of the oldest queued job, per endpoint (0 when none waits)',
    labelNames: ['endpoint'],
    registers: [this.registry],
  });

  readonly workers: Gauge<'endpoint' | 'state'> = new client.Gauge({
    name: 'runplane_workers',
    help: 'Workers per endpoint and state (initializing, idle, running, unhealthy, stopping, ...)',
    labelNames: ['endpoint', 'state'],
    registers: [this.registry],
  });

  readonly webhookAttemptDuration: Histogram<'outcome'> = new client.Histogram({
    name: 'runplane_webhook_attempt_duration_seconds',
    help: 'Webhook delivery attempts, by outcome (success, http_error, network_error, refused)',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookDeliveries: Counter<'result'> = new client.Counter({
    name: 'runplane_webhook_deliveries_total',
    help: 'Webhook deliveries that ended: delivered, or failed after their last attempt',
    labelNames: ['result'],
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    // Process metrics: CPU, memory, heap, event loop lag, GC, handles.
    if (options.defaultMetrics !== false) client.collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Runs `hook` before every scrape, e.g. to read values that live in a database. A failing hook
   * is logged and leaves its metrics as they were; it never fails the scrape.
   */
  beforeScrape(name: string, run: ScrapeHook): void {
    this.hooks.push({ name, run });
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  async render(logger?: HookLogger): Promise<string> {
    await Promise.all(
      this.hooks.map(async (h) => {
        try {
          await h.run();
        } catch (err) {
          logger?.warn({ hook: h.name, err: String(err) }, 'a metrics scrape hook failed');
        }
      }),
    );
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
