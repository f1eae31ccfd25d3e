-- AlterTable
ALTER TABLE "Template" ADD COLUMN     "portsConfig" JSONB NOT NULL DEFAULT '[]';
