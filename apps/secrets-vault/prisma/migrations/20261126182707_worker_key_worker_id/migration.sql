-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "workerId" TEXT;

-- CreateIndex
CREATE INDEX "ApiKey_workerId_idx" ON "ApiKey"("workerId");
