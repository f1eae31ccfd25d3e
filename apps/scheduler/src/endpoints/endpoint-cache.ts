import { Injectable } from '@nestjs/common';
import { ANY_JOB, JobChanges } from '../shared/job-changes.js';
import { EndpointsRepository, type EndpointRow } from '../store/endpoints.repository.js';

/**
 * Endpoint rows for the hot paths (every submission, take and result names its endpoint), kept
 * for at most TTL_MS. Every endpoint write announces an endpoint-wide change (`ANY_JOB`) on this
 * replica and, by signal, on the others: the entry is dropped there at once, and the TTL bounds a
 * lost signal. Only found rows are kept; reads that decide on a change read the table itself.
 */
@Injectable()
export class EndpointCache {
  static readonly TTL_MS = 1000;
  private static readonly MAX_ENTRIES = 10_000;
  private readonly entries = new Map<string, { row: EndpointRow; expires: number }>();

  constructor(
    private readonly endpoints: EndpointsRepository,
    changes: JobChanges,
  ) {
    changes.onWake((endpointId, jobId) => {
      if (jobId === ANY_JOB) this.entries.delete(endpointId);
    });
  }

  async get(id: string): Promise<EndpointRow | null> {
    const hit = this.entries.get(id);
    if (hit && hit.expires > Date.now()) return hit.row;
    const row = await this.endpoints.find(id);
    if (row) {
      if (this.entries.size >= EndpointCache.MAX_ENTRIES) this.entries.clear();
      this.entries.set(id, { row, expires: Date.now() + EndpointCache.TTL_MS });
    } else {
      this.entries.delete(id);
    }
    return row;
  }
}
