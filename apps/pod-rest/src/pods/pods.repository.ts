import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient, type Pod, type DesiredStatus } from '../generated/prisma/client.js';

export type PodRow = Pod;
export type { DesiredStatus };

export interface NewPod {
  id: string;
  ownerId: string;
  name: string;
  image: string;
  templateId?: string;
  endpointId?: string;
  aiApiId?: string;
  slsVersion?: number;
  gpuTypeId?: string;
  dockerEntrypoint: string[];
  dockerStartCmd: string[];
  ports: string[];
  containerDiskInGb: number;
  volumeInGb: number;
  volumeMountPath?: string;
  /** The template's env only: never worker protocol variables or resolved secrets. */
  env: Record<string, string>;
  lastStatusChange: string;
  lastStartedAt?: Date;
  desiredStatus?: DesiredStatus;
  computeType?: string;
  cloudType?: string;
  gpuCount?: number;
  cpuFlavorId?: string | null;
  vcpuCount?: number;
  memoryInGb?: number;
  interruptible?: boolean;
  locked?: boolean;
  volumeEncrypted?: boolean;
  globalNetworking?: boolean;
  containerRegistryAuthId?: string;
  networkVolumeId?: string;
  machineId?: string;
}

export interface PodChanges {
  desiredStatus?: DesiredStatus;
  lastStatusChange?: string;
  computeRef?: string | null;
  lastStartedAt?: Date;
  exitedAt?: Date | null;
  exitCode?: number | null;
  runs?: number;
  machineId?: string;
  publicIp?: string | null;
  portMappings?: Record<string, number>;
  deletedAt?: Date;
  gpuIds?: string[];
  gpuWaitSince?: Date | null;
  // What a user may edit (PodUpdateInput).
  name?: string;
  image?: string;
  dockerEntrypoint?: string[];
  dockerStartCmd?: string[];
  env?: Record<string, string>;
  ports?: string[];
  containerDiskInGb?: number;
  volumeInGb?: number;
  volumeMountPath?: string;
  containerRegistryAuthId?: string | null;
  locked?: boolean;
  globalNetworking?: boolean;
}

/** Filters of `GET /v1/pods`; all optional. */
export interface PodFilter {
  includeWorkers: boolean;
  computeType?: string;
  cpuFlavorIds?: string[];
  desiredStatus?: DesiredStatus;
  endpointId?: string;
  gpuTypeIds?: string[];
  id?: string;
  imageName?: string;
  name?: string;
  networkVolumeId?: string;
  templateId?: string;
}

/** Data access of Pods; the only place that knows the table. */
@Injectable()
export class PodsRepository {
  constructor(private readonly db: PrismaClient) {}

  /** Inserts the Pod; returns null when the id is taken (a retried or concurrent start). */
  async insert(pod: NewPod): Promise<PodRow | null> {
    try {
      return await this.db.pod.create({ data: { desiredStatus: 'RUNNING', ...pod } });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') return null;
      throw err;
    }
  }

  findById(id: string): Promise<PodRow | null> {
    return this.db.pod.findUnique({ where: { id } });
  }

  /** The owner's Pod, or null (another user's Pod is "not found" too). */
  findOwned(ownerId: string, id: string): Promise<PodRow | null> {
    return this.db.pod.findFirst({ where: { id, ownerId } });
  }

  /** The owner's Pod as the API shows it: not deleted; serverless workers only when asked for. */
  findVisible(ownerId: string, id: string, includeWorkers = true): Promise<PodRow | null> {
    return this.db.pod.findFirst({
      where: { id, ownerId, deletedAt: null, ...(includeWorkers ? {} : { endpointId: null }) },
    });
  }

  /** The Pod whose current workload is `computeRef` (an older run's ref finds nothing). */
  findByComputeRef(computeRef: string): Promise<PodRow | null> {
    return this.db.pod.findFirst({ where: { computeRef } });
  }

  /** The owner's Pods, newest first, as `GET /v1/pods` filters them. */
  list(ownerId: string, f: PodFilter): Promise<PodRow[]> {
    return this.db.pod.findMany({
      where: {
        ownerId,
        deletedAt: null,
        ...(f.includeWorkers || f.endpointId ? {} : { endpointId: null }),
        ...(f.endpointId ? { endpointId: f.endpointId } : {}),
        ...(f.computeType ? { computeType: f.computeType } : {}),
        ...(f.cpuFlavorIds?.length ? { cpuFlavorId: { in: f.cpuFlavorIds } } : {}),
        ...(f.gpuTypeIds?.length ? { gpuTypeId: { in: f.gpuTypeIds } } : {}),
        ...(f.desiredStatus ? { desiredStatus: f.desiredStatus } : {}),
        ...(f.id ? { id: f.id } : {}),
        ...(f.imageName ? { image: f.imageName } : {}),
        ...(f.name ? { name: f.name } : {}),
        ...(f.networkVolumeId ? { networkVolumeId: f.networkVolumeId } : {}),
        ...(f.templateId ? { templateId: f.templateId } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: 1000,
    });
  }

  /** Pods (not deleted) that mount the network volume. */
  async idsUsingNetworkVolume(networkVolumeId: string): Promise<string[]> {
    const rows = await this.db.pod.findMany({
      where: { networkVolumeId, deletedAt: null },
      select: { id: true },
      take: 100,
    });
    return rows.map((r) => r.id);
  }

  /** Pods meant to be running on some compute workload (checked against the provider at start-up). */
  findRunningWithWorkload(): Promise<PodRow[]> {
    return this.db.pod.findMany({
      where: { desiredStatus: 'RUNNING', computeRef: { not: null }, gpuWaitSince: null },
    });
  }

  /** Host GPUs held by runs that have not ended. */
  async gpuIdsInUse(): Promise<string[]> {
    const rows = await this.db.pod.findMany({
      where: { gpuIds: { isEmpty: false } },
      select: { gpuIds: true },
    });
    return rows.flatMap((r) => r.gpuIds);
  }

  /** Users' Pods waiting for GPUs, oldest first. */
  waitingForGpus(): Promise<PodRow[]> {
    return this.db.pod.findMany({
      where: { gpuWaitSince: { not: null }, desiredStatus: 'RUNNING', deletedAt: null },
      orderBy: [{ gpuWaitSince: 'asc' }, { id: 'asc' }],
    });
  }

  /**
   * Pods of any user on the template: those using it now (running, or stopped but able to start
   * again; a terminated Pod until its process is gone) and when the last one stopped running it.
   */
  async templateUsage(templateId: string): Promise<{ inUse: number; lastExitedAt: Date | null }> {
    const [inUse, last] = await Promise.all([
      this.db.pod.count({
        where: {
          templateId,
          OR: [
            { desiredStatus: 'RUNNING' },
            { desiredStatus: 'EXITED', endpointId: null },
            { desiredStatus: 'TERMINATED', computeRef: { not: null }, exitedAt: null },
          ],
        },
      }),
      this.db.pod.aggregate({ where: { templateId }, _max: { exitedAt: true } }),
    ]);
    return { inUse, lastExitedAt: last._max.exitedAt };
  }

  async update(id: string, changes: PodChanges): Promise<void> {
    await this.db.pod.updateMany({ where: { id }, data: changes });
  }

  /** Applies changes only while the Pod's workload is still `computeRef` (a later run wins); true when it did. */
  async updateRun(
    id: string,
    computeRef: string,
    changes: PodChanges,
    onlyIfNotExited = false,
  ): Promise<boolean> {
    const { count } = await this.db.pod.updateMany({
      where: { id, computeRef, ...(onlyIfNotExited ? { exitedAt: null } : {}) },
      data: changes,
    });
    return count > 0;
  }

  async reload(id: string): Promise<PodRow> {
    return this.db.pod.findUniqueOrThrow({ where: { id } });
  }

  /** Deleted users' Pods whose workload's end was not recorded. */
  findDeletedNotExited(): Promise<PodRow[]> {
    return this.db.pod.findMany({
      where: { deletedAt: { not: null }, exitedAt: null, endpointId: null },
    });
  }

  /** Deleted Pods are kept a day (template usage needs their last use for 2 minutes). */
  async purgeDeleted(before: Date): Promise<void> {
    await this.db.pod.deleteMany({
      where: { deletedAt: { lt: before }, OR: [{ exitedAt: { not: null } }, { computeRef: null }] },
    });
  }
}
