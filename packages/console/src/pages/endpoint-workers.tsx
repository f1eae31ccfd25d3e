import type { EndpointWorker } from '@runplane/contracts';
import { useCallback, useState } from 'react';
import { useSession } from '../api/session-context';
import { useLoad } from '../api/use-load';
import { ErrorNote, formatTime, StatusBadge } from '../components/feedback';
import { LogView } from '../components/log-view';

/** The endpoint's workers (ended ones too), their version, and one worker's followed logs. */
export function EndpointWorkersPanel({
  endpointId,
  version,
}: {
  endpointId: string;
  version: number;
}) {
  const { api } = useSession();
  const ops = api.client.operations(endpointId);
  const workers = useLoad(() => ops.workers(), [api, endpointId], 3000);
  const [watched, setWatched] = useState<string | null>(null);
  const follow = useCallback(
    (signal: AbortSignal) =>
      api.client.operations(endpointId).followWorkerLogs(watched!, { tail: 200 }, signal),
    [api, endpointId, watched],
  );
  const stale = workers.data?.filter((w) => w.isStale && w.state !== 'EXITED') ?? [];
  return (
    <section aria-labelledby="workers-title">
      <h2 id="workers-title">Workers</h2>
      <ErrorNote error={workers.error} />
      {stale.length > 0 && (
        <p className="notice" role="status">
          Rolling release to version {version} in progress: {stale.length} worker(s) still on an
          older version are replaced once they are free.
        </p>
      )}
      {workers.data && workers.data.length === 0 && <p>No workers (yet).</p>}
      {workers.data && workers.data.length > 0 && (
        <table>
          <caption className="sr-only">Workers</caption>
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">State</th>
              <th scope="col">Version</th>
              <th scope="col">Jobs</th>
              <th scope="col">Started</th>
              <th scope="col">Last seen</th>
              <th scope="col">Ended</th>
              <th scope="col">Logs</th>
            </tr>
          </thead>
          <tbody>
            {workers.data.map((w: EndpointWorker) => (
              <tr key={w.id}>
                <td className="mono">{w.id}</td>
                <td>
                  <StatusBadge status={w.state} />
                </td>
                <td>
                  {w.version}
                  {w.isStale ? ' (older)' : ''}
                </td>
                <td className="mono">{w.jobs.join(', ') || '–'}</td>
                <td>{formatTime(w.startedAt)}</td>
                <td>{formatTime(w.lastSeenAt)}</td>
                <td>{w.endedAt ? `${formatTime(w.endedAt)}: ${w.reason ?? ''}` : '–'}</td>
                <td>
                  <button
                    type="button"
                    aria-pressed={watched === w.id}
                    onClick={() => setWatched(watched === w.id ? null : w.id)}
                  >
                    {watched === w.id ? 'Stop following' : `Follow logs`}
                    <span className="sr-only"> of worker {w.id}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {watched && (
        <>
          <h3>Logs of worker {watched}</h3>
          <LogView label={`Logs of worker ${watched}`} follow={follow} />
        </>
      )}
    </section>
  );
}
