import type { JobRequestDto } from '../jobs/job-request.dto.js';
import type { JobAccepted, JobRecord } from '../jobs/job-record.js';
import { ApiKeysClient, UsersClient } from './admin-client.js';
import { HttpCaller, type ClientOptions } from './http.js';

/** Typed client of one endpoint's queue API (`/v2/{endpointId}/...`). */
export class QueueClient {
  private readonly http: HttpCaller;
  private readonly prefix: string;

  constructor(options: ClientOptions, readonly endpointId: string) {
    this.http = new HttpCaller(options);
    this.prefix = `/v2/${encodeURIComponent(endpointId)}`;
  }

  run(request: JobRequestDto, options: { idempotencyKey?: string } = {}): Promise<JobAccepted> {
    const headers = options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : undefined;
    return this.http.call('POST', `${this.prefix}/run`, request, { headers });
  }

  status(jobId: string): Promise<JobRecord> {
    return this.http.call('GET', `${this.prefix}/status/${encodeURIComponent(jobId)}`);
  }
}

/** Entry point of the typed client: `new RunplaneClient({baseUrl, apiKey}).queue('my-endpoint').run({input})`. */
export class RunplaneClient {
  constructor(private readonly options: ClientOptions) {}

  queue(endpointId: string): QueueClient {
    return new QueueClient(this.options, endpointId);
  }

  get apiKeys(): ApiKeysClient {
    return new ApiKeysClient(this.options);
  }

  get users(): UsersClient {
    return new UsersClient(this.options);
  }
}
