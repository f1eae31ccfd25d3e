-- JobEvent loses its foreign key to Job (the per-row key check was a sixth of a job insert batch);
-- the statements that delete jobs delete their events. The history is keyed by job first.
/*
  Warnings:

  - The primary key for the `JobEvent` table will be changed. If it partially fails, the table could be left without primary key constraint.

*/
-- DropForeignKey
ALTER TABLE "JobEvent" DROP CONSTRAINT "JobEvent_jobId_fkey";

-- DropIndex
DROP INDEX "JobEvent_jobId_id_idx";

-- AlterTable
ALTER TABLE "JobEvent" DROP CONSTRAINT "JobEvent_pkey",
ADD CONSTRAINT "JobEvent_pkey" PRIMARY KEY ("jobId", "id");
