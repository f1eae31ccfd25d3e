-- AlterTable
ALTER TABLE "Worker" ADD COLUMN     "endedAt" TIMESTAMP(3),
ADD COLUMN     "exitCode" INTEGER,
ADD COLUMN     "reason" TEXT;

-- CreateTable
CREATE TABLE "ColdStart" (
    "endpointId" TEXT NOT NULL,
    "workerId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "ms" INTEGER NOT NULL,

    CONSTRAINT "ColdStart_pkey" PRIMARY KEY ("endpointId","workerId")
);

-- CreateIndex
CREATE INDEX "ColdStart_endpointId_at_idx" ON "ColdStart"("endpointId", "at");
