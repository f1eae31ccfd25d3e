-- AlterTable
ALTER TABLE "Pod" ADD COLUMN     "gpuIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "gpuWaitSince" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Pod_gpuWaitSince_idx" ON "Pod"("gpuWaitSince");
