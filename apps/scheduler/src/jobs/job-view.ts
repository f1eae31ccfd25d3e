import type { JobRecord } from '@runplane/contracts';
import type { JobRow } from './jobs.repository.js';

/** The `/status` record of a job row (spec "Job response record"; times in ms). */
export function toJobRecord(job: JobRow, now = new Date()): JobRecord {
  const record: JobRecord = { id: job.id, status: job.status };
  if (job.startedAt) {
    record.delayTime = job.startedAt.getTime() - job.createdAt.getTime();
    record.executionTime = (job.completedAt ?? now).getTime() - job.startedAt.getTime();
  }
  if (job.output !== null) record.output = job.output;
  if (job.error !== null) record.error = job.error;
  record.retries = job.retries;
  if (job.workerId) record.workerId = job.workerId;
  return record;
}
