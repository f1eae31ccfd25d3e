-- AlterTable
ALTER TABLE "Endpoint" ADD COLUMN     "gpuShortage" JSONB;
