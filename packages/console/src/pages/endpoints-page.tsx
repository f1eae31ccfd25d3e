import type { HealthRecord } from '@runplane/contracts';
import { useSession } from '../api/session-context';
import { useLoad } from '../api/use-load';
import { ErrorNote, Heading, Loading } from '../components/feedback';
import { Link } from '../router';

const workersText = (h: HealthRecord) =>
  Object.entries(h.workers)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ') || 'none';

/** Every endpoint of the key's user with its health: queue depth, workers and jobs by state. */
export function EndpointsPage() {
  const { api, canWrite } = useSession();
  const rows = useLoad(() => api.endpointsWithHealth(), [api], 5000);
  return (
    <>
      <Heading title="Endpoints">
        {canWrite && (
          <Link to="/endpoints/new" className="button primary">
            New endpoint
          </Link>
        )}
      </Heading>
      <ErrorNote error={rows.error} />
      <Loading when={rows.loading && !rows.data} />
      {rows.data && rows.data.length === 0 && <p>No endpoints yet.</p>}
      {rows.data && rows.data.length > 0 && (
        <table>
          <caption className="sr-only">Endpoints and their health</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">ID</th>
              <th scope="col">Workers (min–max)</th>
              <th scope="col">In queue</th>
              <th scope="col">In progress</th>
              <th scope="col">Completed</th>
              <th scope="col">Failed</th>
              <th scope="col">Workers by state</th>
              <th scope="col">Waiting</th>
            </tr>
          </thead>
          <tbody>
            {rows.data.map(({ endpoint, health }) => (
              <tr key={endpoint.id}>
                <td>
                  <Link to={`/endpoints/${endpoint.id}`}>{endpoint.name || endpoint.id}</Link>
                </td>
                <td className="mono">{endpoint.id}</td>
                <td>
                  {endpoint.workersMin}–{endpoint.workersMax}
                </td>
                <td>{health?.jobs.inQueue ?? '–'}</td>
                <td>{health?.jobs.inProgress ?? '–'}</td>
                <td>{health?.jobs.completed ?? '–'}</td>
                <td>{health?.jobs.failed ?? '–'}</td>
                <td>{health ? workersText(health) : '–'}</td>
                <td>{endpoint.waiting?.reasons.map((r) => r.code).join(', ') || '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
