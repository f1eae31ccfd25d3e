-- The queue in the order jobs are taken (normal priority first, then oldest, then id), queued
-- jobs only. The claim's ORDER BY ... LIMIT then reads as many entries as it takes: through the
-- endpoint/status/createdAt index it read and sorted the endpoint's whole queue at every take
-- (11 ms a claim at 20,000 queued jobs, 1.4 ms with this index). Partial, so a job writes an
-- entry only when it enters the queue, not when it is taken or finishes. Prisma's schema cannot
-- state a partial index without a preview feature; it keeps indexes it does not know.
-- CreateIndex
CREATE INDEX "Job_queue_idx" ON "Job"("endpointId", "lowPriority", "createdAt", "id") WHERE (status = 'IN_QUEUE'::"JobStatus");
