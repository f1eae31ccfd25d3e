import type { StreamResponse } from '@runplane/contracts';
import { useState } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import {
  ErrorNote,
  formatMs,
  formatTime,
  Heading,
  JsonBlock,
  StatusBadge,
} from '../components/feedback';
import { LogView } from '../components/log-view';
import { Link } from '../router';

/** One job: status, input, output, stream chunks, error, its history and the lines its worker wrote. */
export function JobPage({ endpointId, jobId }: { endpointId: string; jobId: string }) {
  const { api, canWrite } = useSession();
  const queue = api.client.queue(endpointId);
  const ops = api.client.operations(endpointId);
  const job = useLoad(() => ops.job(jobId), [api, endpointId, jobId], 3000);
  const events = useLoad(() => ops.jobEvents(jobId), [api, endpointId, jobId], 3000);
  const logs = useLoad(() => ops.jobLogs(jobId), [api, endpointId, jobId], 5000);
  const act = useAction();
  const status = job.data?.status;

  return (
    <>
      <Heading title={`Job ${jobId}`}>
        <Link to={`/endpoints/${endpointId}/requests`} className="button">
          Requests
        </Link>
        {canWrite && status && ['IN_QUEUE', 'IN_PROGRESS'].includes(status) && (
          <button type="button" onClick={() => act.run(() => queue.cancel(jobId)).then(job.reload)}>
            Cancel
          </button>
        )}
        {canWrite && status && ['FAILED', 'TIMED_OUT'].includes(status) && (
          <button type="button" onClick={() => act.run(() => queue.retry(jobId)).then(job.reload)}>
            Retry
          </button>
        )}
      </Heading>
      <ErrorNote error={job.error ?? act.error} />
      {job.data && (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={job.data.status} />
          </dd>
          <dt>Submitted</dt>
          <dd>
            {formatTime(job.data.createdAt)} ({job.data.mode})
          </dd>
          <dt>Worker</dt>
          <dd className="mono">{job.data.workerId ?? '–'}</dd>
          <dt>Delay</dt>
          <dd>{formatMs(job.data.delayTime)}</dd>
          <dt>Execution</dt>
          <dd>{formatMs(job.data.executionTime)}</dd>
          <dt>Retries</dt>
          <dd>{job.data.retries ?? 0}</dd>
        </dl>
      )}
      {job.data && (
        <>
          <h2>Input</h2>
          <JsonBlock label="Input" value={job.data.input} />
        </>
      )}
      {job.data?.output !== undefined && (
        <>
          <h2>Output</h2>
          <JsonBlock label="Output" value={job.data.output} />
        </>
      )}
      {job.data?.error && (
        <>
          <h2>Error</h2>
          <JsonBlock label="Error" value={job.data.error} />
        </>
      )}
      <StreamChunks read={() => queue.streamOnce(jobId, { waitMs: 1000 })} />
      <h2>History</h2>
      <ErrorNote error={events.error} />
      {events.data && (
        <table>
          <caption className="sr-only">Job history</caption>
          <thead>
            <tr>
              <th scope="col">At</th>
              <th scope="col">Event</th>
              <th scope="col">Worker</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {events.data.map((e, i) => (
              <tr key={i}>
                <td>{formatTime(e.at)}</td>
                <td>{e.type}</td>
                <td className="mono">{e.workerId ?? '–'}</td>
                <td>{e.detail ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Logs its worker wrote</h2>
      <ErrorNote error={logs.error} />
      <LogView label="Logs of this job" lines={logs.data ?? []} />
    </>
  );
}

/** Stream chunks are handed out once (reading drains them), so they are read only when asked. */
function StreamChunks({ read }: { read(): Promise<StreamResponse> }) {
  const [chunks, setChunks] = useState<unknown[] | null>(null);
  const load = useAction();
  return (
    <>
      <h2>Stream</h2>
      <p className="muted">
        Chunks not yet read by anyone (a client streaming this job took the ones it read).
      </p>
      <button
        type="button"
        disabled={load.busy}
        onClick={() =>
          load.run(async () => {
            const page = await read();
            setChunks((all) => [...(all ?? []), ...page.stream.map((c) => c.output)]);
          })
        }
      >
        Read stream chunks
      </button>
      <ErrorNote error={load.error} />
      {chunks && <JsonBlock label="Stream chunks" value={chunks} />}
    </>
  );
}
