-- No query reads jobs by owner (a job is always found by id or by endpoint, its owner checked on
-- the row), yet every version of every job wrote an entry here: a fifth of a job's index writes.
-- DropIndex
DROP INDEX "Job_ownerId_endpointId_createdAt_idx";
