import type { JobStatus } from '@runplane/contracts';
import { useState } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { ErrorNote, formatMs, formatTime, Heading, StatusBadge } from '../components/feedback';
import { SelectField } from '../components/fields';
import { Link } from '../router';
import { TestJobForm } from './test-job-form';

const STATUSES: (JobStatus | '')[] = [
  '',
  'IN_QUEUE',
  'IN_PROGRESS',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMED_OUT',
];
const CANCELLABLE = new Set<JobStatus>(['IN_QUEUE', 'IN_PROGRESS']);
const RETRYABLE = new Set<JobStatus>(['FAILED', 'TIMED_OUT']);

/** Recent jobs of an endpoint, filtered by status; cancel and retry one or a selection; a test job. */
export function RequestsPage({ endpointId }: { endpointId: string }) {
  const { api, canWrite } = useSession();
  const [status, setStatus] = useState<JobStatus | ''>('');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const jobs = useLoad(
    () => api.requests(endpointId, { status: status || undefined, limit: 100 }),
    [api, endpointId, status],
    3000,
  );
  const bulk = useAction();
  const queue = api.client.queue(endpointId);
  const rows = jobs.data?.requests ?? [];
  const chosen = rows.filter((j) => selected.has(j.id));

  const act = async (what: 'cancel' | 'retry', ids: string[]) => {
    const results = await Promise.allSettled(
      ids.map((id) => (what === 'cancel' ? queue.cancel(id) : queue.retry(id))),
    );
    const failed = results.filter((r) => r.status === 'rejected').length;
    setSelected(new Set());
    jobs.reload();
    if (failed)
      throw new Error(`${what}: ${failed} of ${ids.length} job(s) refused (see their status)`);
  };

  const toggle = (id: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  return (
    <>
      <Heading title="Requests">
        <Link to={`/endpoints/${endpointId}`} className="button">
          Endpoint
        </Link>
      </Heading>
      {canWrite && <TestJobForm endpointId={endpointId} onSent={jobs.reload} />}
      <section aria-labelledby="jobs-title">
        <div className="heading">
          <h2 id="jobs-title">Recent jobs</h2>
          <div className="actions">
            <SelectField
              label="Status"
              value={status}
              onChange={(e) => setStatus(e.target.value as JobStatus | '')}
              options={STATUSES.map((s) => ({ value: s, label: s || 'any' }))}
            />
            {canWrite && (
              <>
                <button
                  type="button"
                  disabled={bulk.busy || !chosen.some((j) => CANCELLABLE.has(j.status))}
                  onClick={() =>
                    bulk.run(() =>
                      act(
                        'cancel',
                        chosen.filter((j) => CANCELLABLE.has(j.status)).map((j) => j.id),
                      ),
                    )
                  }
                >
                  Cancel selected
                </button>
                <button
                  type="button"
                  disabled={bulk.busy || !chosen.some((j) => RETRYABLE.has(j.status))}
                  onClick={() =>
                    bulk.run(() =>
                      act(
                        'retry',
                        chosen.filter((j) => RETRYABLE.has(j.status)).map((j) => j.id),
                      ),
                    )
                  }
                >
                  Retry selected
                </button>
              </>
            )}
          </div>
        </div>
        <ErrorNote error={jobs.error ?? bulk.error} />
        {jobs.data && rows.length === 0 && <p>No jobs{status ? ` ${status}` : ''}.</p>}
        {rows.length > 0 && (
          <table>
            <caption className="sr-only">Recent jobs</caption>
            <thead>
              <tr>
                {canWrite && <th scope="col">Select</th>}
                <th scope="col">Job</th>
                <th scope="col">Status</th>
                <th scope="col">Submitted</th>
                <th scope="col">Delay</th>
                <th scope="col">Execution</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {rows.map((job) => (
                <tr key={job.id} data-job-id={job.id}>
                  {canWrite && (
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Select job ${job.id}`}
                        checked={selected.has(job.id)}
                        onChange={() => toggle(job.id)}
                      />
                    </td>
                  )}
                  <td>
                    <Link to={`/endpoints/${endpointId}/requests/${job.id}`} className="mono">
                      {job.id}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={job.status} />
                  </td>
                  <td>{formatTime(job.createdAt)}</td>
                  <td>{formatMs(job.delayTime)}</td>
                  <td>{formatMs(job.executionTime)}</td>
                  {canWrite && (
                    <td>
                      {CANCELLABLE.has(job.status) && (
                        <button
                          type="button"
                          disabled={bulk.busy}
                          onClick={() => bulk.run(() => act('cancel', [job.id]))}
                        >
                          Cancel<span className="sr-only"> job {job.id}</span>
                        </button>
                      )}
                      {RETRYABLE.has(job.status) && (
                        <button
                          type="button"
                          disabled={bulk.busy}
                          onClick={() => bulk.run(() => act('retry', [job.id]))}
                        >
                          Retry<span className="sr-only"> job {job.id}</span>
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
