-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "deletedAt" TIMESTAMP(3),
ADD COLUMN     "policy" JSON,
ADD COLUMN     "queuedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "resultsExpireAt" TIMESTAMP(3),
ADD COLUMN     "streamSeq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "timeoutAt" TIMESTAMP(3),
ALTER COLUMN "input" SET DATA TYPE JSON,
ALTER COLUMN "s3Config" SET DATA TYPE JSON,
ALTER COLUMN "output" SET DATA TYPE JSON;

-- CreateTable
CREATE TABLE "Endpoint" (
    "id" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "templateId" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "computeType" TEXT NOT NULL DEFAULT 'GPU',
    "gpuTypeIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "gpuCount" INTEGER NOT NULL DEFAULT 1,
    "cpuFlavorIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "vcpuCount" INTEGER NOT NULL DEFAULT 2,
    "dataCenterIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "env" JSONB NOT NULL DEFAULT '{}',
    "executionTimeoutMs" INTEGER NOT NULL DEFAULT 600000,
    "idleTimeout" INTEGER NOT NULL DEFAULT 5,
    "scalerType" TEXT NOT NULL DEFAULT 'QUEUE_DELAY',
    "scalerValue" INTEGER NOT NULL DEFAULT 4,
    "workersMin" INTEGER NOT NULL DEFAULT 0,
    "workersMax" INTEGER NOT NULL DEFAULT 3,
    "networkVolumeId" TEXT,
    "startFailures" INTEGER NOT NULL DEFAULT 0,
    "startBackoffUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Endpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "JobStreamChunk" (
    "jobId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "output" JSON NOT NULL,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JobStreamChunk_pkey" PRIMARY KEY ("jobId","seq")
);

-- CreateTable
CREATE TABLE "JobStop" (
    "jobId" TEXT NOT NULL,
    "workerId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "JobStop_pkey" PRIMARY KEY ("jobId","workerId")
);

-- CreateTable
CREATE TABLE "Worker" (
    "id" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "managed" BOOLEAN NOT NULL,
    "state" TEXT NOT NULL,
    "podId" TEXT,
    "lastSeenAt" TIMESTAMP(3),
    "firstSeenAt" TIMESTAMP(3),
    "lastBusyAt" TIMESTAMP(3),
    "pingIntervalMs" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    "stopRequested" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Worker_pkey" PRIMARY KEY ("endpointId","id")
);

-- CreateTable
CREATE TABLE "ProcessedEvent" (
    "id" TEXT NOT NULL,
    "processedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ProcessedEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Lease" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Lease_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "Endpoint_ownerId_createdAt_idx" ON "Endpoint"("ownerId", "createdAt");

-- CreateIndex
CREATE INDEX "Endpoint_templateId_idx" ON "Endpoint"("templateId");

-- CreateIndex
CREATE INDEX "JobStop_endpointId_workerId_deliveredAt_idx" ON "JobStop"("endpointId", "workerId", "deliveredAt");

-- CreateIndex
CREATE INDEX "Worker_state_lastSeenAt_idx" ON "Worker"("state", "lastSeenAt");

-- CreateIndex
CREATE INDEX "ProcessedEvent_processedAt_idx" ON "ProcessedEvent"("processedAt");

-- CreateIndex
CREATE INDEX "Job_status_timeoutAt_idx" ON "Job"("status", "timeoutAt");

-- CreateIndex
CREATE INDEX "Job_resultsExpireAt_idx" ON "Job"("resultsExpireAt");

-- CreateIndex
CREATE INDEX "Job_endpointId_workerId_status_idx" ON "Job"("endpointId", "workerId", "status");

-- CreateIndex
CREATE INDEX "Job_deletedAt_idx" ON "Job"("deletedAt");

-- AddForeignKey
ALTER TABLE "JobStreamChunk" ADD CONSTRAINT "JobStreamChunk_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE CASCADE ON UPDATE CASCADE;
