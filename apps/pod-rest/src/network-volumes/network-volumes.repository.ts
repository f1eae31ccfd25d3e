import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient, type NetworkVolume } from '../generated/prisma/client.js';

export type NetworkVolumeRow = NetworkVolume;

/** Data access of users' network volumes; the only place that knows the table. */
@Injectable()
export class NetworkVolumesRepository {
  constructor(private readonly db: PrismaClient) {}

  /** null when the id is taken. */
  async insert(row: Omit<NetworkVolumeRow, 'createdAt'>): Promise<NetworkVolumeRow | null> {
    try {
      return await this.db.networkVolume.create({ data: row });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') return null;
      throw err;
    }
  }

  listOwned(ownerId: string): Promise<NetworkVolumeRow[]> {
    return this.db.networkVolume.findMany({
      where: { ownerId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  findOwned(ownerId: string, id: string): Promise<NetworkVolumeRow | null> {
    return this.db.networkVolume.findFirst({ where: { id, ownerId } });
  }

  /** null when it is gone meanwhile. */
  async updateOwned(
    ownerId: string,
    id: string,
    changes: { name?: string; size?: number },
  ): Promise<NetworkVolumeRow | null> {
    const { count } = await this.db.networkVolume.updateMany({
      where: { id, ownerId },
      data: changes,
    });
    return count ? this.findOwned(ownerId, id) : null;
  }

  async deleteOwned(ownerId: string, id: string): Promise<boolean> {
    const { count } = await this.db.networkVolume.deleteMany({ where: { id, ownerId } });
    return count > 0;
  }
}
