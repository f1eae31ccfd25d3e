-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT');

-- CreateTable
CREATE TABLE "Job" (
    "id" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "status" "JobStatus" NOT NULL DEFAULT 'IN_QUEUE',
    "mode" TEXT NOT NULL,
    "input" JSONB NOT NULL,
    "webhook" TEXT,
    "s3Config" JSONB,
    "lowPriority" BOOLEAN NOT NULL DEFAULT false,
    "executionTimeoutMs" INTEGER NOT NULL,
    "ttlMs" INTEGER NOT NULL,
    "output" JSONB,
    "error" TEXT,
    "retries" INTEGER NOT NULL DEFAULT 0,
    "workerId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "completedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Job_endpointId_status_createdAt_idx" ON "Job"("endpointId", "status", "createdAt");

-- CreateIndex
CREATE INDEX "Job_ownerId_endpointId_createdAt_idx" ON "Job"("ownerId", "endpointId", "createdAt");

-- CreateIndex
CREATE INDEX "Job_expiresAt_idx" ON "Job"("expiresAt");
