import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { BULK_TX } from './job-rules.js';
import { SchedulerTables } from './scheduler-tables.js';

/**
 * Jobs removed for good, with their history. JobEvent has no foreign key to Job (its per-row key
 * check was a sixth of a job insert's cost), so every statement that deletes jobs is here.
 *
 * The events go in a second statement of the same transaction: under READ COMMITTED it sees every
 * event committed before it started, and a transition writes its event in the statement that
 * changes its job, holding the job's row, which the delete now holds until it commits; after
 * that, the job is gone and no transition finds it. So no event outlives its job.
 */
@Injectable()
export class JobDeletions {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /** Deletes the jobs matching `where` and their events; returns how many jobs. */
  async deleteWhere(where: Prisma.Sql): Promise<number> {
    const { job, event } = this.t.sql;
    return this.db.$transaction(async (tx) => {
      const gone = await tx.$queryRaw<Array<{ id: string }>>(
        Prisma.sql`DELETE FROM ${job} WHERE ${where} RETURNING id`,
      );
      if (gone.length)
        await tx.$executeRaw(
          Prisma.sql`DELETE FROM ${event} WHERE "jobId" = ANY(${gone.map((r) => r.id)}::text[])`,
        );
      return gone.length;
    }, BULK_TX);
  }
}
