import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { JobEffects } from './job-effects.js';
import { SchedulerTables } from './scheduler-tables.js';
import { at } from './job-rows.js';
import { heldBySql } from './job-rules.js';

/**
 * The job-stop channel: jobs a worker must abandon (cancelled, timed out, expired, requeued away
 * from it). The transitions that end a running job write its stop row; this hands them out.
 */
@Injectable()
export class JobStopsRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
  ) {}

  /** Takes the stops waiting for this worker; each is handed out once. */
  async deliver(endpointId: string, workerId: string, now: Date): Promise<string[]> {
    const rows = await this.db.$queryRaw<Array<{ jobId: string }>>(Prisma.sql`
      UPDATE ${this.t.sql.stop} SET "deliveredAt" = ${at(now)}::timestamp(3)
      WHERE "endpointId" = ${endpointId} AND "workerId" = ${workerId} AND "deliveredAt" IS NULL
      RETURNING "jobId"`);
    return rows.map((r) => r.jobId).sort();
  }

  /**
   * Tells the worker to drop jobs it still reports (ping) but no longer holds: cancelled, requeued
   * to another worker, expired. A stop handed out before `redeliverBefore` whose job the worker
   * still reports is handed out again (the job-stop response may never have reached it).
   */
  async stopIfNotHeld(
    endpointId: string,
    workerId: string,
    jobIds: string[],
    now: Date,
    redeliverBefore: Date,
  ): Promise<number> {
    if (!jobIds.length) return 0;
    const { stop, job } = this.t.sql;
    const rows = await this.db.$queryRaw<Array<{ jobId: string }>>(Prisma.sql`
      INSERT INTO ${stop} AS s ("jobId", "workerId", "endpointId", reason, "createdAt")
      SELECT j.id, ${workerId}, ${endpointId}, 'not-held', ${at(now)}::timestamp(3) FROM ${job} j
      WHERE j.id = ANY(${jobIds}::text[]) AND j."endpointId" = ${endpointId} AND NOT (${heldBySql('j', endpointId, workerId)})
      ON CONFLICT ("jobId", "workerId") DO UPDATE SET "deliveredAt" = NULL
        WHERE s."deliveredAt" < ${at(redeliverBefore)}::timestamp(3)
      RETURNING "jobId"`);
    if (rows.length) this.effects.stopsWritten(endpointId);
    return rows.length;
  }
}
