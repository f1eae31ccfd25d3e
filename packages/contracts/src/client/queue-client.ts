import type {
  EndpointCreateDto,
  EndpointUpdateDto,
  Endpoint,
  HealthRecord,
} from '../endpoints/endpoint.dto.js';
import type { JobRequestDto } from '../jobs/job-request.dto.js';
import type { JobAccepted, JobRecord } from '../jobs/job-record.js';
import type { ListJobsResponse, PurgeResponse, StreamResponse } from '../bus/scheduler.js';
import { isFinalStatus, type JobStatus } from '../jobs/job-status.js';
import type { Template, TemplateCreateDto, TemplateUpdateDto } from '../templates/template.dto.js';
import { ApiKeysClient, UsersClient } from './admin-client.js';
import { HttpCaller, type ClientOptions } from './http.js';
import { EndpointOperationsClient, PodsClient, SecretsClient } from './operations-client.js';

/** Typed client of one endpoint's queue API (`/v2/{endpointId}/...`). */
export class QueueClient {
  private readonly http: HttpCaller;
  private readonly prefix: string;

  constructor(
    options: ClientOptions,
    readonly endpointId: string,
  ) {
    this.http = new HttpCaller(options);
    this.prefix = `/v2/${encodeURIComponent(endpointId)}`;
  }

  private job(op: string, jobId: string): string {
    return `${this.prefix}/${op}/${encodeURIComponent(jobId)}`;
  }

  /** Queues a job; `{id, status: "IN_QUEUE"}`. The same `idempotencyKey` within 24 h returns the same job. */
  run(request: JobRequestDto, options: { idempotencyKey?: string } = {}): Promise<JobAccepted> {
    const headers = options.idempotencyKey
      ? { 'idempotency-key': options.idempotencyKey }
      : undefined;
    return this.http.call('POST', `${this.prefix}/run`, request, { headers });
  }

  /** Runs a job and waits up to `waitMs` (1000..300000, default 90000) for its final record. */
  runsync(
    request: JobRequestDto,
    options: { waitMs?: number; idempotencyKey?: string } = {},
  ): Promise<JobRecord> {
    const wait = options.waitMs ?? 90_000;
    const headers = options.idempotencyKey
      ? { 'idempotency-key': options.idempotencyKey }
      : undefined;
    return this.http.call('POST', `${this.prefix}/runsync?wait=${wait}`, request, {
      headers,
      timeoutMs: wait + 30_000,
    });
  }

  /** The job's record; `ttlMs` sets its TTL (from submission). */
  status(jobId: string, options: { ttlMs?: number } = {}): Promise<JobRecord> {
    return this.http.call(
      'GET',
      `${this.job('status', jobId)}${options.ttlMs !== undefined ? `?ttl=${options.ttlMs}` : ''}`,
    );
  }

  /** Waits up to `waitMs` for the job to be final, then returns its record. */
  statusSync(jobId: string, options: { waitMs?: number } = {}): Promise<JobRecord> {
    const wait = options.waitMs ?? 90_000;
    return this.http.call('GET', `${this.job('status-sync', jobId)}?wait=${wait}`, undefined, {
      timeoutMs: wait + 30_000,
    });
  }

  /** Chunks not returned before (drain); waits up to `waitMs` (default 10000) when there are none yet. */
  streamOnce(jobId: string, options: { waitMs?: number } = {}): Promise<StreamResponse> {
    const wait = options.waitMs ?? 10_000;
    return this.http.call('GET', `${this.job('stream', jobId)}?wait=${wait}`, undefined, {
      timeoutMs: wait + 30_000,
    });
  }

  /** Every stream chunk's `output`, in order, until the job is final; then returns its final status. */
  async *stream(jobId: string): AsyncGenerator<unknown, JobStatus, void> {
    for (;;) {
      const page = await this.streamOnce(jobId);
      for (const chunk of page.stream) yield chunk.output;
      if (isFinalStatus(page.status)) return page.status;
    }
  }

  cancel(jobId: string): Promise<JobAccepted> {
    return this.http.call('POST', this.job('cancel', jobId));
  }

  retry(jobId: string): Promise<JobAccepted> {
    return this.http.call('POST', this.job('retry', jobId));
  }

  purgeQueue(): Promise<PurgeResponse> {
    return this.http.call('POST', `${this.prefix}/purge-queue`);
  }

  health(): Promise<HealthRecord> {
    return this.http.call('GET', `${this.prefix}/health`);
  }

  /** The endpoint's jobs, newest first, a page at a time (`nextCursor`). */
  requests(
    options: { status?: JobStatus; limit?: number; cursor?: string } = {},
  ): Promise<ListJobsResponse> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(options)) if (v !== undefined) query.set(k, String(v));
    const qs = query.toString();
    return this.http.call('GET', `${this.prefix}/requests${qs ? `?${qs}` : ''}`);
  }
}

/** `/v1/endpoints` (RunPod REST v1 shapes). */
export class EndpointsClient {
  private readonly http: HttpCaller;

  constructor(options: ClientOptions) {
    this.http = new HttpCaller(options);
  }

  create(request: EndpointCreateDto): Promise<Endpoint> {
    return this.http.call('POST', '/v1/endpoints', request);
  }

  list(): Promise<Endpoint[]> {
    return this.http.call('GET', '/v1/endpoints');
  }

  get(endpointId: string): Promise<Endpoint> {
    return this.http.call('GET', `/v1/endpoints/${encodeURIComponent(endpointId)}`);
  }

  update(endpointId: string, changes: EndpointUpdateDto): Promise<Endpoint> {
    return this.http.call('PATCH', `/v1/endpoints/${encodeURIComponent(endpointId)}`, changes);
  }

  async delete(endpointId: string): Promise<void> {
    await this.http.call('DELETE', `/v1/endpoints/${encodeURIComponent(endpointId)}`);
  }
}

/** `/v1/templates` (REST shape: `dockerStartCmd` arrays, `env` map, `ports` array). */
export class TemplatesClient {
  private readonly http: HttpCaller;

  constructor(options: ClientOptions) {
    this.http = new HttpCaller(options);
  }

  create(request: TemplateCreateDto): Promise<Template> {
    return this.http.call('POST', '/v1/templates', request);
  }

  list(): Promise<Template[]> {
    return this.http.call('GET', '/v1/templates');
  }

  get(templateId: string): Promise<Template> {
    return this.http.call('GET', `/v1/templates/${encodeURIComponent(templateId)}`);
  }

  /** Spec `POST /v1/templates/{id}/update`; a change starts a rolling release of its endpoints. */
  update(templateId: string, changes: TemplateUpdateDto): Promise<Template> {
    return this.http.call(
      'POST',
      `/v1/templates/${encodeURIComponent(templateId)}/update`,
      changes,
    );
  }

  async delete(templateId: string): Promise<void> {
    await this.http.call('DELETE', `/v1/templates/${encodeURIComponent(templateId)}`);
  }
}

/**
 * Entry point of the typed client:
 * `new RunplaneClient({baseUrl, apiKey}).queue('my-endpoint').run({input})`.
 */
export class RunplaneClient {
  constructor(private readonly options: ClientOptions) {}

  queue(endpointId: string): QueueClient {
    return new QueueClient(this.options, endpointId);
  }

  get endpoints(): EndpointsClient {
    return new EndpointsClient(this.options);
  }

  get templates(): TemplatesClient {
    return new TemplatesClient(this.options);
  }

  /** Workers, metrics, job histories and logs of one endpoint. */
  operations(endpointId: string): EndpointOperationsClient {
    return new EndpointOperationsClient(this.options, endpointId);
  }

  get pods(): PodsClient {
    return new PodsClient(this.options);
  }

  get secrets(): SecretsClient {
    return new SecretsClient(this.options);
  }

  get apiKeys(): ApiKeysClient {
    return new ApiKeysClient(this.options);
  }

  get users(): UsersClient {
    return new UsersClient(this.options);
  }
}
