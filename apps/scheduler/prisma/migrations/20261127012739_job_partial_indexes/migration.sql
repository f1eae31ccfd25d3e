-- Partial indexes on Job: each holds only the rows its sweep or lookup looks for (running jobs by
-- timeoutAt and by endpointId + workerId, jobs with kept results, tombstones), so the insert, claim
-- and finish of every job write fewer index entries. Prisma's schema cannot state a partial index
-- without a preview feature; it keeps indexes it does not know, so these live only here.

-- DropIndex
DROP INDEX "Job_deletedAt_idx";

-- DropIndex
DROP INDEX "Job_endpointId_workerId_status_idx";

-- DropIndex
DROP INDEX "Job_resultsExpireAt_idx";

-- DropIndex
DROP INDEX "Job_status_timeoutAt_idx";

-- CreateIndex
CREATE INDEX "Job_timeoutAt_idx" ON "Job"("timeoutAt") WHERE (status = 'IN_PROGRESS'::"JobStatus");

-- CreateIndex
CREATE INDEX "Job_resultsExpireAt_idx" ON "Job"("resultsExpireAt") WHERE ("resultsExpireAt" IS NOT NULL);

-- CreateIndex
CREATE INDEX "Job_endpointId_workerId_idx" ON "Job"("endpointId", "workerId") WHERE (status = 'IN_PROGRESS'::"JobStatus");

-- CreateIndex
CREATE INDEX "Job_deletedAt_idx" ON "Job"("deletedAt") WHERE ("deletedAt" IS NOT NULL);
