-- AlterTable
ALTER TABLE "Pod" ADD COLUMN     "cloudType" TEXT NOT NULL DEFAULT 'SECURE',
ADD COLUMN     "computeType" TEXT NOT NULL DEFAULT 'GPU',
ADD COLUMN     "containerRegistryAuthId" TEXT,
ADD COLUMN     "cpuFlavorId" TEXT,
ADD COLUMN     "deletedAt" TIMESTAMP(3),
ADD COLUMN     "globalNetworking" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "gpuCount" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "interruptible" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "locked" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "machineId" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "memoryInGb" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "networkVolumeId" TEXT,
ADD COLUMN     "portMappings" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "publicIp" TEXT,
ADD COLUMN     "runs" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "vcpuCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "volumeEncrypted" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "Pod_computeRef_idx" ON "Pod"("computeRef");
