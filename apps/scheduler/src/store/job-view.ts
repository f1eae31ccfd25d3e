import { isFinalStatus, RunplaneError, type JobRecord } from '@runplane/contracts';
import type { JobState } from './job-rows.js';

/** Deleted by its TTL (a tombstone, or expired and not yet swept): the job is "not found". */
export function isGone(job: JobState, now: Date): boolean {
  return job.deletedAt !== null || job.expiresAt.getTime() <= now.getTime();
}

/** A final job whose result retention elapsed: no output, no error, no retry. */
export function resultsExpired(job: JobState, now: Date): boolean {
  return (
    isFinalStatus(job.status) &&
    (job.resultsExpireAt === null || job.resultsExpireAt.getTime() <= now.getTime())
  );
}

/** The `/status` record of a job row (times in ms). */
export function toJobRecord(job: JobState, now = new Date()): JobRecord {
  const record: JobRecord = { id: job.id, status: job.status };
  if (job.startedAt) {
    record.delayTime = Math.max(0, job.startedAt.getTime() - job.createdAt.getTime());
    record.executionTime = Math.max(
      0,
      (job.completedAt ?? now).getTime() - job.startedAt.getTime(),
    );
  }
  if (!resultsExpired(job, now)) {
    if (job.output !== null) record.output = job.output;
    if (job.error !== null) record.error = job.error;
  }
  record.retries = job.retries;
  if (job.workerId) record.workerId = job.workerId;
  return record;
}

/** The 404 of a job that is not there (or is another user's, or gone). */
export function jobNotFound(jobId: string): RunplaneError {
  return RunplaneError.notFound(`job ${jobId} not found`, 'JOB_NOT_FOUND');
}
