import { Injectable } from '@nestjs/common';
import { DatabaseTargets, DirectSql } from '@runplane/database';
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

/** Lines and bytes of text a Pod holds. */
interface Holding {
  lines: number;
  bytes: number;
}

/** The share of its bounds a Pod over them is trimmed down to. */
const TRIMMED_TO = 0.9;

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
    private readonly direct: DirectSql,
    targets: DatabaseTargets,
  ) {
    const schema = `"${targets.targetFor('pod-rest').schema.replace(/"/g, '""')}"`;
    this.table = `${schema}."WorkloadLogLine"`;
    this.pods = `${schema}."Pod"`;
  }

  /**
   * What each Pod written to holds, counted once and then kept by this repository's own appends
   * and trims (a Pod's lines come from the one pod-rest that supervises it, one batch at a time):
   * a Pod is trimmed only when it is over a bound. Trimming after every batch ran a window over
   * all of the Pod's lines, up to RUNPLANE_LOG_MAX_LINES rows per batch, so a worker that logs
   * per job made every job cost more the longer it ran.
   */
  private readonly held = new Map<string, Holding>();

  /** One statement per batch; then each Pod over its bounds is cut back to them. */
  async append(
    lines: Array<Omit<StoredLogLine, 'id'>>,
    bounds: { maxLines: number; maxBytes: number },
  ): Promise<void> {
    if (!lines.length) return;
    // One statement text whatever the batch's size: Prisma's createMany built a new query for
    // every row count and spent about 0.5 ms of CPU a line doing it (a worker that logs per job
    // made pod-rest one of the busiest processes of a cluster, docs/performance.md). Ids are
    // given in the order written (ORDER BY n): readers order a Pod's lines by id.
    await this.direct.query({
      text: `INSERT INTO ${this.table} ("podId", at, stream, text)
             SELECT "podId", at, stream, text
             FROM unnest($1::text[], $2::timestamp(3)[], $3::text[], $4::text[])
               WITH ORDINALITY AS l("podId", at, stream, text, n)
             ORDER BY n`,
      values: [
        lines.map((l) => l.podId),
        // UTC, as Prisma stores DateTime (a zone in the text is ignored by timestamp).
        lines.map((l) => l.at.toISOString()),
        lines.map((l) => l.stream),
        lines.map((l) => l.text),
      ],
    });
    const added = new Map<string, Holding>();
    for (const line of lines) {
      const sum = added.get(line.podId) ?? { lines: 0, bytes: 0 };
      sum.lines += 1;
      sum.bytes += Buffer.byteLength(line.text);
      added.set(line.podId, sum);
    }
    for (const [podId, sum] of added) {
      const known = this.held.get(podId);
      let holding = known
        ? { lines: known.lines + sum.lines, bytes: known.bytes + sum.bytes }
        : await this.measure(podId);
      if (holding.lines > bounds.maxLines || holding.bytes > bounds.maxBytes) {
        // Down to nine tenths of the bounds: a Pod that keeps logging is trimmed once per tenth
        // of its bound, not after every batch.
        const dropped = await this.trim(podId, {
          maxLines: Math.max(1, Math.floor(bounds.maxLines * TRIMMED_TO)),
          maxBytes: Math.max(1, Math.floor(bounds.maxBytes * TRIMMED_TO)),
        });
        holding = { lines: holding.lines - dropped.lines, bytes: holding.bytes - dropped.bytes };
      }
      this.held.set(podId, holding);
    }
  }

  private async measure(podId: string): Promise<Holding> {
    const [row] = await this.db.$queryRawUnsafe<Holding[]>(
      `SELECT count(*)::int AS lines, coalesce(sum(octet_length("text")), 0)::float8 AS bytes
       FROM ${this.table} WHERE "podId" = $1`,
      podId,
    );
    return row;
  }

  /** Drops the oldest lines of a Pod beyond `maxLines` or beyond `maxBytes` of text (newest kept). */
  private async trim(podId: string, b: { maxLines: number; maxBytes: number }): Promise<Holding> {
    const [dropped] = await this.db.$queryRawUnsafe<Holding[]>(
      `WITH dropped AS (
         DELETE FROM ${this.table} WHERE "podId" = $1 AND "id" <= (
           SELECT max("id") FROM (
             SELECT "id",
                    row_number() OVER (ORDER BY "id" DESC) AS n,
                    sum(octet_length("text")) OVER (ORDER BY "id" DESC) AS bytes
             FROM ${this.table} WHERE "podId" = $1
           ) newest WHERE n > $2 OR bytes > $3)
         RETURNING octet_length("text") AS bytes)
       SELECT count(*)::int AS lines, coalesce(sum(bytes), 0)::float8 AS bytes FROM dropped`,
      podId,
      b.maxLines,
      b.maxBytes,
    );
    return dropped;
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
    // Counted again at their next append.
    this.held.clear();
    await this.db.$executeRawUnsafe(
      `DELETE FROM ${this.table} l WHERE NOT EXISTS (SELECT 1 FROM ${this.pods} p WHERE p."id" = l."podId")`,
    );
  }
}
