import { JobEvents, WEBHOOK_JOB_STATES, type JobFinishedEvent } from '@runplane/contracts';
import { OutboxRelay, type NewOutboxRow } from '@runplane/database';
import { randomBytes } from 'node:crypto';
import { toJobRecord } from './job-view.js';
import type { JobRow } from './job-rows.js';

/**
 * The `job.finished.v1` outbox row of a job that just became final, or null when it has no webhook.
 * The body is built now, from the row the final statement wrote (the `/status` object
 * plus `input` and `webhook`): by the time it is delivered the job may be retried or its results
 * dropped. Its id becomes the delivery's `webhook-id`.
 */
export function jobFinishedOutboxRow(row: JobRow, now: Date, leased: boolean): NewOutboxRow | null {
  if (!row.webhook || !(WEBHOOK_JOB_STATES as readonly string[]).includes(row.status)) return null;
  const payload: JobFinishedEvent = {
    jobId: row.id,
    endpointId: row.endpointId,
    ownerId: row.ownerId,
    status: row.status as JobFinishedEvent['status'],
    webhook: row.webhook,
    body: JSON.stringify({ ...toJobRecord(row, now), input: row.input, webhook: row.webhook }),
  };
  // Leased: the writer publishes it after the commit (a worker's results). Unleased: the relay,
  // kicked after the commit, publishes it (in batches when many jobs end at once).
  return OutboxRelay.entry(JobEvents.finished, payload, {
    id: `msg_${randomBytes(16).toString('hex')}`,
    leased,
    now: now.getTime(),
  });
}
