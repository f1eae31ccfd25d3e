import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';

export const POD_REST_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** pod-rest serves the RunPod REST v1 API: Pods, endpoints and templates. Its behaviour arrives with its issue; for now it owns and migrates its database. */
@Module({
  imports: [DatabaseModule.forService({ service: 'pod-rest', client: PrismaClient, migrationsDir: POD_REST_MIGRATIONS })],
})
export class PodRestModule {}
