-- CreateEnum
CREATE TYPE "DesiredStatus" AS ENUM ('RUNNING', 'EXITED', 'TERMINATED');

-- CreateTable
CREATE TABLE "Pod" (
    "id" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "desiredStatus" "DesiredStatus" NOT NULL DEFAULT 'RUNNING',
    "image" TEXT NOT NULL,
    "templateId" TEXT,
    "endpointId" TEXT,
    "slsVersion" INTEGER,
    "env" JSONB NOT NULL DEFAULT '{}',
    "lastStatusChange" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastStartedAt" TIMESTAMP(3),

    CONSTRAINT "Pod_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Pod_ownerId_idx" ON "Pod"("ownerId");

-- CreateIndex
CREATE INDEX "Pod_endpointId_idx" ON "Pod"("endpointId");
