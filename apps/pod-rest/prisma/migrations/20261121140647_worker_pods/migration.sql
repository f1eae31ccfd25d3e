-- AlterTable
ALTER TABLE "Pod" ADD COLUMN     "aiApiId" TEXT,
ADD COLUMN     "computeRef" TEXT,
ADD COLUMN     "containerDiskInGb" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "dockerEntrypoint" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "dockerStartCmd" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "exitCode" INTEGER,
ADD COLUMN     "exitedAt" TIMESTAMP(3),
ADD COLUMN     "gpuTypeId" TEXT,
ADD COLUMN     "ports" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "volumeInGb" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "volumeMountPath" TEXT;
