import {
  HttpCaller,
  RunplaneClient,
  withQuery,
  type ClientOptions,
} from '@runplane/contracts/client';
import type {
  ApiKeyView,
  Endpoint,
  HealthRecord,
  JobStatus,
  ListJobsResponse,
  WebhookDeliveryView,
} from '@runplane/contracts';

/** Every call the console makes: the contracts' typed client plus the few routes it lacks. */
export class ConsoleApi {
  readonly client: RunplaneClient;
  private readonly http: HttpCaller;

  constructor(apiKey: string) {
    const options: ClientOptions = { baseUrl: window.location.origin, apiKey };
    this.client = new RunplaneClient(options);
    this.http = new HttpCaller(options);
  }

  /** The signed-in key (its scope decides which buttons are shown); a wrong key fails with 401. */
  currentKey(): Promise<ApiKeyView> {
    return this.client.apiKeys.current();
  }

  /** Every endpoint with its `/health`, read side by side. */
  async endpointsWithHealth(): Promise<{ endpoint: Endpoint; health: HealthRecord | null }[]> {
    const endpoints = await this.client.endpoints.list();
    return Promise.all(
      endpoints.map(async (endpoint) => ({
        endpoint,
        health: await this.client
          .queue(endpoint.id)
          .health()
          .catch(() => null),
      })),
    );
  }

  requests(
    endpointId: string,
    options: { status?: JobStatus; limit?: number },
  ): Promise<ListJobsResponse> {
    return this.client.queue(endpointId).requests(options);
  }

  webhookDeliveries(jobId?: string): Promise<WebhookDeliveryView[]> {
    return this.http.call('GET', withQuery('/v1/webhooks/deliveries', { jobId }));
  }

  redeliverWebhook(id: string): Promise<WebhookDeliveryView> {
    return this.http.call('POST', `/v1/webhooks/deliveries/${encodeURIComponent(id)}/redeliver`);
  }
}

/** A message fit for the page: the server's own words for API errors. */
export function errorMessage(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) {
    const status = (err as { status?: number }).status;
    const message = String((err as { message: unknown }).message);
    return status ? `${status}: ${message}` : message;
  }
  return String(err);
}
