import { Injectable } from '@nestjs/common';
import { DatabaseTargets } from '@runplane/database';
import { PrismaClient } from '../generated/prisma/client.js';

export interface StoredLogLine {
  id: bigint;
  podId: string;
  at: Date;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface LogReadOptions {
  /** Lines after this id only (a follower's cursor). */
  afterId?: bigint;
  /** Lines written at or after this time. */
  since?: Date;
  /** Lines written at or before this time. */
  until?: Date;
  /** The newest n of the lines that match. */
  tail?: number;
}

/** Hard cap on one read: a follower reads on from the last id it got. */
const MAX_READ = 10_000;

/** Workload log lines of pod-rest's database, bounded per Pod. */
@Injectable()
export class LogLinesRepository {
  /** Schema-qualified names for raw SQL (Prisma qualifies its own queries; the embedded database has no per-service search_path). */
  private readonly table: string;
  private readonly pods: string;

  constructor(
    private readonly db: PrismaClient,
    targets: DatabaseTargets,
  ) {
    const schema = `"${targets.targetFor('pod-rest').schema.replace(/"/g, '""')}"`;
    this.table = `${schema}."WorkloadLogLine"`;
    this.pods = `${schema}."Pod"`;
  }

  /** One statement per batch; then each Pod written to is cut back to its bounds. */
  async append(
    lines: Array<Omit<StoredLogLine, 'id'>>,
    bounds: { maxLines: number; maxBytes: number },
  ): Promise<void> {
    if (!lines.length) return;
    await this.db.workloadLogLine.createMany({ data: lines });
    for (const podId of new Set(lines.map((l) => l.podId))) await this.trim(podId, bounds);
  }

  /** Drops the oldest lines of a Pod beyond `maxLines` or beyond `maxBytes` of text (newest kept). */
  private async trim(podId: string, b: { maxLines: number; maxBytes: number }): Promise<void> {
    await this.db.$executeRawUnsafe(
      `DELETE FROM ${this.table} WHERE "podId" = $1 AND "id" <= (
         SELECT max("id") FROM (
           SELECT "id",
                  row_number() OVER (ORDER BY "id" DESC) AS n,
                  sum(octet_length("text")) OVER (ORDER BY "id" DESC) AS bytes
           FROM ${this.table} WHERE "podId" = $1
         ) newest WHERE n > $2 OR bytes > $3)`,
      podId,
      b.maxLines,
      b.maxBytes,
    );
  }

  /** Lines of a Pod, oldest first. */
  async read(podId: string, o: LogReadOptions = {}): Promise<StoredLogLine[]> {
    const where = {
      podId,
      ...(o.afterId !== undefined ? { id: { gt: o.afterId } } : {}),
      ...(o.since || o.until
        ? { at: { ...(o.since ? { gte: o.since } : {}), ...(o.until ? { lte: o.until } : {}) } }
        : {}),
    };
    const take = Math.min(o.tail ?? MAX_READ, MAX_READ);
    const rows =
      o.tail !== undefined
        ? (
            await this.db.workloadLogLine.findMany({ where, orderBy: { id: 'desc' }, take })
          ).reverse()
        : await this.db.workloadLogLine.findMany({ where, orderBy: { id: 'asc' }, take });
    return rows as StoredLogLine[];
  }

  /** Lines of Pods that no longer exist (purged after their deletion). */
  async deleteOrphans(): Promise<void> {
    await this.db.$executeRawUnsafe(
      `DELETE FROM ${this.table} l WHERE NOT EXISTS (SELECT 1 FROM ${this.pods} p WHERE p."id" = l."podId")`,
    );
  }
}
