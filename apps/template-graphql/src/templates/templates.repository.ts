import { Injectable } from '@nestjs/common';
import type { NewOutboxRow } from '@runplane/database';
import {
  PrismaClient,
  Prisma,
  type Template,
  type TemplateRevision,
} from '../generated/prisma/client.js';

export type TemplateRow = Template;
export type RevisionRow = TemplateRevision;
/** Port labels are plain objects (JSON): typed here, stored as they are. */
type Labels = { portsConfig?: Array<{ port: string; name: string }> };
export type NewTemplate = Omit<
  Prisma.TemplateCreateInput,
  'createdAt' | 'updatedAt' | 'portsConfig' | 'revision' | 'revisions'
> &
  Labels;
export type TemplateChanges = Labels &
  Pick<
    Prisma.TemplateUpdateInput,
    | 'name'
    | 'imageName'
    | 'containerDiskInGb'
    | 'containerRegistryAuthId'
    | 'dockerEntrypoint'
    | 'dockerStartCmd'
    | 'env'
    | 'isPublic'
    | 'ports'
    | 'readme'
    | 'volumeInGb'
    | 'volumeMountPath'
  >;

/** The owner already has a template with this name (unique per owner). */
export const NAME_TAKEN = 'name-taken' as const;

const isUniqueViolation = (err: unknown) =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
const isNotFound = (err: unknown) =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025';

/** Data access of templates; the only place that knows the table. */
@Injectable()
export class TemplatesRepository {
  constructor(private readonly db: PrismaClient) {}

  /** The template with its revision 1. */
  async create(template: NewTemplate): Promise<TemplateRow | typeof NAME_TAKEN> {
    try {
      return await this.db.$transaction(async (tx) => {
        const row = await tx.template.create({ data: template as Prisma.TemplateCreateInput });
        await tx.templateRevision.create({ data: snapshot(row) });
        return row;
      });
    } catch (err) {
      if (isUniqueViolation(err)) return NAME_TAKEN;
      throw err;
    }
  }

  /** The owner's templates, plus every public one when asked; oldest first. */
  listVisible(ownerId: string, includePublic: boolean): Promise<TemplateRow[]> {
    const where: Prisma.TemplateWhereInput = includePublic
      ? { OR: [{ ownerId }, { isPublic: true }] }
      : { ownerId };
    return this.db.template.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** Other users' public templates (the community's), oldest first. */
  listPublicOfOthers(ownerId: string): Promise<TemplateRow[]> {
    return this.db.template.findMany({
      where: { isPublic: true, ownerId: { not: ownerId } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  /** A template the caller may read: their own or a public one. */
  findVisible(ownerId: string, id: string): Promise<TemplateRow | null> {
    return this.db.template.findFirst({ where: { id, OR: [{ ownerId }, { isPublic: true }] } });
  }

  /** A template the caller may change (another user's public template is not theirs to change). */
  findOwned(ownerId: string, id: string): Promise<TemplateRow | null> {
    return this.db.template.findFirst({ where: { id, ownerId } });
  }

  /** The owner's template of that name (names are unique per owner). */
  findOwnedByName(ownerId: string, name: string): Promise<TemplateRow | null> {
    return this.db.template.findUnique({ where: { ownerId_name: { ownerId, name } } });
  }

  /** What revision `revision` of the template runs, or null when there is no such revision. */
  findRevision(templateId: string, revision: number): Promise<RevisionRow | null> {
    return this.db.templateRevision.findUnique({
      where: { templateId_revision: { templateId, revision } },
    });
  }

  /**
   * Applies the changes as the next revision and records the event `eventFor` makes of it, all in
   * one transaction, so the event exists exactly when the change does. The update locks the row, so
   * concurrent changes get consecutive revisions. Null when the template is not the owner's (or no
   * longer exists).
   */
  async updateOwned(
    ownerId: string,
    id: string,
    changes: TemplateChanges,
    eventFor: (row: TemplateRow) => NewOutboxRow,
  ): Promise<TemplateRow | null | typeof NAME_TAKEN> {
    try {
      return await this.db.$transaction(async (tx) => {
        const row = await tx.template.update({
          where: { id, ownerId },
          data: { ...(changes as Prisma.TemplateUpdateInput), revision: { increment: 1 } },
        });
        await tx.templateRevision.create({ data: snapshot(row) });
        const event = eventFor(row);
        await tx.outboxEvent.create({
          data: { ...event, payload: event.payload as Prisma.InputJsonValue },
        });
        return row;
      });
    } catch (err) {
      if (isUniqueViolation(err)) return NAME_TAKEN;
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** True when the owner's template existed and is now gone. */
  async deleteOwned(ownerId: string, id: string): Promise<boolean> {
    const { count } = await this.db.template.deleteMany({ where: { id, ownerId } });
    return count === 1;
  }
}

/** The fields of a template a workload runs, as its current revision. */
function snapshot(row: TemplateRow): Prisma.TemplateRevisionUncheckedCreateInput {
  return {
    templateId: row.id,
    revision: row.revision,
    imageName: row.imageName,
    containerDiskInGb: row.containerDiskInGb,
    volumeInGb: row.volumeInGb,
    volumeMountPath: row.volumeMountPath,
    containerRegistryAuthId: row.containerRegistryAuthId,
    dockerEntrypoint: row.dockerEntrypoint,
    dockerStartCmd: row.dockerStartCmd,
    env: row.env as Prisma.InputJsonValue,
    ports: row.ports,
    portsConfig: row.portsConfig as Prisma.InputJsonValue,
  };
}
