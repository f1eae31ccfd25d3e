import { useCallback, useState } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { ErrorNote, formatTime, Heading, StatusBadge } from '../components/feedback';
import { LogView } from '../components/log-view';

/** The user's Pods: start, stop, and follow a Pod's logs. */
export function PodsPage() {
  const { api, canWrite } = useSession();
  const pods = useLoad(() => api.client.pods.list(), [api], 5000);
  const act = useAction();
  const [watched, setWatched] = useState<string | null>(null);
  const follow = useCallback(
    (signal: AbortSignal) => api.client.pods.followLogs(watched!, { tail: 200 }, signal),
    [api, watched],
  );
  const run = (action: () => Promise<unknown>) => act.run(action).then(pods.reload);

  return (
    <>
      <Heading title="Pods" />
      <ErrorNote error={pods.error ?? act.error} />
      {pods.data && pods.data.length === 0 && <p>No Pods.</p>}
      {pods.data && pods.data.length > 0 && (
        <table>
          <caption className="sr-only">Pods</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">ID</th>
              <th scope="col">Status</th>
              <th scope="col">Image</th>
              <th scope="col">Cost/h</th>
              <th scope="col">Last change</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {pods.data.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td>
                <td className="mono">{p.id}</td>
                <td>
                  <StatusBadge status={p.desiredStatus} />
                </td>
                <td className="mono">{p.imageName}</td>
                <td>{p.costPerHr}</td>
                <td>
                  {p.lastStatusChange} {formatTime(p.lastStartedAt)}
                </td>
                <td>
                  {canWrite && p.desiredStatus === 'RUNNING' && (
                    <button
                      type="button"
                      disabled={act.busy}
                      onClick={() => run(() => api.client.pods.stop(p.id))}
                    >
                      Stop<span className="sr-only"> Pod {p.name}</span>
                    </button>
                  )}
                  {canWrite && p.desiredStatus === 'EXITED' && (
                    <button
                      type="button"
                      disabled={act.busy}
                      onClick={() => run(() => api.client.pods.start(p.id))}
                    >
                      Start<span className="sr-only"> Pod {p.name}</span>
                    </button>
                  )}
                  <button
                    type="button"
                    aria-pressed={watched === p.id}
                    onClick={() => setWatched(watched === p.id ? null : p.id)}
                  >
                    {watched === p.id ? 'Hide logs' : 'Logs'}
                    <span className="sr-only"> of Pod {p.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {watched && (
        <>
          <h2>Logs of Pod {watched}</h2>
          <LogView label={`Logs of Pod ${watched}`} follow={follow} />
        </>
      )}
    </>
  );
}
