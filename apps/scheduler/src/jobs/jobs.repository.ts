import { Injectable } from '@nestjs/common';
import { PrismaClient, type Job, Prisma } from '../generated/prisma/client.js';

export type JobRow = Job;

export interface NewJob {
  id: string;
  endpointId: string;
  ownerId: string;
  mode: 'run' | 'runsync';
  input: Prisma.InputJsonValue;
  webhook?: string;
  s3Config?: Prisma.InputJsonValue;
  lowPriority: boolean;
  executionTimeoutMs: number;
  ttlMs: number;
}

/** Data access of jobs; the only place that knows the table. */
@Injectable()
export class JobsRepository {
  constructor(private readonly db: PrismaClient) {}

  /** Inserts the job; a second insert of the same id (a retried submission) returns the stored one. */
  async insert(job: NewJob, now: Date): Promise<JobRow> {
    try {
      return await this.db.job.create({ data: { ...job, createdAt: now, expiresAt: new Date(now.getTime() + job.ttlMs) } });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        const existing = await this.db.job.findUnique({ where: { id: job.id } });
        if (existing) return existing;
      }
      throw err;
    }
  }

  /** The owner's job on that endpoint, or null (another user's job is "not found" too). */
  findOwned(ownerId: string, endpointId: string, id: string): Promise<JobRow | null> {
    return this.db.job.findFirst({ where: { id, ownerId, endpointId } });
  }
}
