-- AlterTable
ALTER TABLE "Endpoint" ADD COLUMN     "templateRevision" INTEGER;
