import type { JobEvent } from '../bus/scheduler.js';
import type { JobDetail } from '../jobs/job-record.js';
import type { EndpointMetrics, EndpointWorker } from '../endpoints/endpoint-operations.js';
import type { Pod, PodCreateDto } from '../pods/pod.dto.js';
import type { WorkloadLogLine } from '../pods/workload-log.js';
import { HttpCaller, withQuery, type ClientOptions } from './http.js';

/** Which log lines: the last `tail`, those from `since` (ISO 8601 time or seconds before now). */
export interface LogOptions {
  tail?: number;
  since?: string;
}

const id = encodeURIComponent;

/** `/v1/pods`: Pods and their logs. */
export class PodsClient {
  private readonly http: HttpCaller;

  constructor(options: ClientOptions) {
    this.http = new HttpCaller(options);
  }

  create(request: PodCreateDto): Promise<Pod> {
    return this.http.call('POST', '/v1/pods', request);
  }

  list(): Promise<Pod[]> {
    return this.http.call('GET', '/v1/pods');
  }

  get(podId: string): Promise<Pod> {
    return this.http.call('GET', `/v1/pods/${id(podId)}`);
  }

  start(podId: string): Promise<Pod> {
    return this.http.call('POST', `/v1/pods/${id(podId)}/start`);
  }

  stop(podId: string): Promise<Pod> {
    return this.http.call('POST', `/v1/pods/${id(podId)}/stop`);
  }

  async delete(podId: string): Promise<void> {
    await this.http.call('DELETE', `/v1/pods/${id(podId)}`);
  }

  /** What the Pod's workload wrote, oldest first. */
  logs(podId: string, options: LogOptions = {}): Promise<WorkloadLogLine[]> {
    return this.http.call('GET', withQuery(`/v1/pods/${id(podId)}/logs`, { ...options }));
  }

  /** Its lines, then each new one as it is written, until the workload ended or `signal` aborts. */
  followLogs(
    podId: string,
    options: LogOptions = {},
    signal?: AbortSignal,
  ): AsyncGenerator<WorkloadLogLine, void, void> {
    return this.http.events(
      withQuery(`/v1/pods/${id(podId)}/logs`, { ...options, follow: true }),
      signal,
    );
  }
}

/** Operating an endpoint: its workers, their logs, a job's history and logs, metrics. */
export class EndpointOperationsClient {
  private readonly http: HttpCaller;
  private readonly prefix: string;

  constructor(options: ClientOptions, endpointId: string) {
    this.http = new HttpCaller(options);
    this.prefix = `/v1/endpoints/${id(endpointId)}`;
  }

  workers(): Promise<EndpointWorker[]> {
    return this.http.call('GET', `${this.prefix}/workers`);
  }

  /** `window`: `15m`, `1h` (default), `24h`… */
  metrics(options: { window?: string } = {}): Promise<EndpointMetrics> {
    return this.http.call('GET', withQuery(`${this.prefix}/metrics`, options));
  }

  /** The job with its input (its owner's view; `/status` never returns the input). */
  job(jobId: string): Promise<JobDetail> {
    return this.http.call('GET', `${this.prefix}/jobs/${id(jobId)}`);
  }

  jobEvents(jobId: string): Promise<JobEvent[]> {
    return this.http.call('GET', `${this.prefix}/jobs/${id(jobId)}/events`);
  }

  /** What the endpoint's workers wrote while they held the job. */
  jobLogs(jobId: string): Promise<WorkloadLogLine[]> {
    return this.http.call('GET', withQuery(`${this.prefix}/logs`, { jobId }));
  }

  workerLogs(workerId: string, options: LogOptions = {}): Promise<WorkloadLogLine[]> {
    return this.http.call(
      'GET',
      withQuery(`${this.prefix}/workers/${id(workerId)}/logs`, { ...options }),
    );
  }

  followWorkerLogs(
    workerId: string,
    options: LogOptions = {},
    signal?: AbortSignal,
  ): AsyncGenerator<WorkloadLogLine, void, void> {
    return this.http.events(
      withQuery(`${this.prefix}/workers/${id(workerId)}/logs`, { ...options, follow: true }),
      signal,
    );
  }
}

/** A secret as listed: never its value. */
export interface SecretView {
  id: string;
  name: string;
  description: string | null;
  createdAt: string;
}

/** The caller's secrets (through GraphQL, where they live); values go in, never come out. */
export class SecretsClient {
  private readonly http: HttpCaller;

  constructor(options: ClientOptions) {
    this.http = new HttpCaller(options);
  }

  async list(): Promise<SecretView[]> {
    const data = await this.http.graphql<{ myself: { secrets: SecretView[] } }>(
      'query { myself { secrets { id name description createdAt } } }',
    );
    return data.myself.secrets;
  }

  async create(input: { name: string; value: string; description?: string }): Promise<SecretView> {
    const data = await this.http.graphql<{ secretCreate: SecretView }>(
      'mutation ($input: SecretCreateInput) { secretCreate(input: $input) { id name description createdAt } }',
      { input },
    );
    return data.secretCreate;
  }

  async delete(secretId: string): Promise<void> {
    await this.http.graphql('mutation ($id: ID) { secretDelete(id: $id) }', { id: secretId });
  }
}
