import { Injectable } from '@nestjs/common';
import type { GpuShortage } from '@runplane/contracts';
import { Prisma, PrismaClient, type Endpoint as EndpointRow } from '../generated/prisma/client.js';

export type { EndpointRow };

/** A worker start pod-rest answered with a GPU shortage, and when (ISO 8601). */
export interface RecordedGpuShortage extends GpuShortage {
  at: string;
}

/** The endpoint's recorded shortage, or null (the column is JSON). */
export function gpuShortageOf(e: Pick<EndpointRow, 'gpuShortage'>): RecordedGpuShortage | null {
  const v = e.gpuShortage as Partial<RecordedGpuShortage> | null;
  return v && typeof v.needed === 'number' && typeof v.total === 'number'
    ? (v as RecordedGpuShortage)
    : null;
}

export type NewEndpoint = Omit<
  Prisma.EndpointCreateInput,
  'createdAt' | 'version' | 'startFailures' | 'startBackoffUntil' | 'gpuShortage'
>;
/** A template change: its owner's endpoints follow it; `revision` is the one the change made. */
export interface TemplateRelease {
  templateId: string;
  ownerId: string;
  revision?: number;
}

export type EndpointChanges = Omit<
  Prisma.EndpointUpdateInput,
  'id' | 'ownerId' | 'version' | 'createdAt' | 'startFailures' | 'startBackoffUntil' | 'gpuShortage'
>;

/** Data access of endpoints; the only code that knows the Endpoint table. */
@Injectable()
export class EndpointsRepository {
  constructor(private readonly db: PrismaClient) {}

  create(data: NewEndpoint, now: Date): Promise<EndpointRow> {
    return this.db.endpoint.create({ data: { ...data, createdAt: now } });
  }

  find(id: string): Promise<EndpointRow | null> {
    return this.db.endpoint.findUnique({ where: { id } });
  }

  /** The owner's endpoint, or null: another user's endpoint is "not found" too. */
  findOwned(ownerId: string, id: string): Promise<EndpointRow | null> {
    return this.db.endpoint.findFirst({ where: { id, ownerId } });
  }

  listOwned(ownerId: string): Promise<EndpointRow[]> {
    return this.db.endpoint.findMany({
      where: { ownerId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  listAll(): Promise<EndpointRow[]> {
    return this.db.endpoint.findMany();
  }

  /** Applies changes; `bumpVersion` starts a rolling release. Null when the endpoint is gone. */
  async update(
    id: string,
    changes: EndpointChanges,
    bumpVersion: boolean,
  ): Promise<EndpointRow | null> {
    const { count } = await this.db.endpoint.updateMany({
      where: { id },
      data: {
        ...(changes as Prisma.EndpointUpdateManyMutationInput),
        ...(bumpVersion ? { version: { increment: 1 } } : {}),
      },
    });
    return count ? this.find(id) : null;
  }

  /**
   * Rolling release of the template owner's endpoints on it (those following it); returns their
   * ids. Other users' endpoints on it that still follow it (created before endpoints were pinned)
   * are pinned to the revision before this change, the one they ran. With the event's id this
   * happens once per event: the id is recorded in the same transaction, so a redelivered event
   * finds it and changes nothing.
   */
  async releaseTemplate(
    { templateId, ownerId, revision }: TemplateRelease,
    eventId?: string,
  ): Promise<string[]> {
    return this.db.$transaction(async (tx) => {
      if (eventId) {
        const { count } = await tx.processedEvent.createMany({
          data: [{ id: eventId }],
          skipDuplicates: true,
        });
        if (!count) return [];
      }
      if (revision !== undefined)
        await tx.endpoint.updateMany({
          where: { templateId, ownerId: { not: ownerId }, templateRevision: null },
          data: { templateRevision: revision - 1 },
        });
      const following = { templateId, ownerId, templateRevision: null };
      const rows = await tx.endpoint.findMany({ where: following, select: { id: true } });
      if (rows.length)
        await tx.endpoint.updateMany({ where: following, data: { version: { increment: 1 } } });
      return rows.map((r) => r.id);
    });
  }

  /** Applied-event ids are kept for a day: far beyond any redelivery. */
  async forgetProcessedEvents(before: Date): Promise<void> {
    await this.db.processedEvent.deleteMany({ where: { processedAt: { lt: before } } });
  }

  /** True when this call removed it (a concurrent delete gets false). */
  async delete(id: string): Promise<boolean> {
    const { count } = await this.db.endpoint.deleteMany({ where: { id } });
    return count > 0;
  }

  /** Endpoints of any user on the template. */
  countUsingTemplate(templateId: string): Promise<number> {
    return this.db.endpoint.count({ where: { templateId } });
  }

  /** One more failed worker start: the next start waits `backoff(failures in a row)`. */
  async recordStartFailure(
    id: string,
    backoff: (failures: number) => number,
    now: Date,
  ): Promise<void> {
    const row = await this.db.endpoint.findUnique({
      where: { id },
      select: { startFailures: true, startBackoffUntil: true },
    });
    // Workers that fail while a back-off runs are the same failure of the endpoint: eight workers
    // lost together (their node, or a release started on all of them) are one step, not eight
    // (2 s would become over four minutes without workers).
    if (!row || (row.startBackoffUntil && row.startBackoffUntil > now)) return;
    const failures = row.startFailures + 1;
    await this.db.endpoint.updateMany({
      where: { id, startFailures: row.startFailures }, // a concurrent record counts once
      data: {
        startFailures: failures,
        startBackoffUntil: new Date(now.getTime() + backoff(failures)),
      },
    });
  }

  /** pod-rest's last GPU shortage for a worker start (null: a start got its GPUs). */
  async recordGpuShortage(id: string, shortage: RecordedGpuShortage | null): Promise<void> {
    await this.db.endpoint.updateMany({
      where: shortage ? { id } : { id, gpuShortage: { not: Prisma.DbNull } },
      data: { gpuShortage: shortage ? { ...shortage } : Prisma.DbNull },
    });
  }

  async resetStartFailures(id: string): Promise<void> {
    await this.db.endpoint.updateMany({
      where: { id, startFailures: { gt: 0 } },
      data: { startFailures: 0, startBackoffUntil: null },
    });
  }
}
