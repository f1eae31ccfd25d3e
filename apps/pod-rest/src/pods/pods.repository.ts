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
  lastStartedAt: Date;
}

export interface PodChanges {
  desiredStatus?: DesiredStatus;
  lastStatusChange?: string;
  computeRef?: string;
  lastStartedAt?: Date;
  exitedAt?: Date | null;
  exitCode?: number | null;
}

/** Data access of Pods; the only place that knows the table. */
@Injectable()
export class PodsRepository {
  constructor(private readonly db: PrismaClient) {}

  /** Inserts the Pod; returns null when the id is taken (a retried or concurrent start). */
  async insert(pod: NewPod): Promise<PodRow | null> {
    try {
      return await this.db.pod.create({ data: { ...pod, desiredStatus: 'RUNNING' } });
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

  /** Pods meant to be running on some compute workload (checked against the provider at start-up). */
  findRunningWithWorkload(): Promise<PodRow[]> {
    return this.db.pod.findMany({ where: { desiredStatus: 'RUNNING', computeRef: { not: null } } });
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
}
