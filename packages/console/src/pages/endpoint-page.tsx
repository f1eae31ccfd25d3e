import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { ErrorNote, Heading, Loading } from '../components/feedback';
import { Link, navigate } from '../router';
import { EndpointMetricsPanel } from './endpoint-metrics';
import { EndpointWorkersPanel } from './endpoint-workers';
import { WaitingReasons } from './waiting-reasons';

/** One endpoint: why its jobs wait, its health, metrics and workers. */
export function EndpointPage({ endpointId }: { endpointId: string }) {
  const { api, canWrite } = useSession();
  const endpoint = useLoad(() => api.client.endpoints.get(endpointId), [api, endpointId], 3000);
  const health = useLoad(() => api.client.queue(endpointId).health(), [api, endpointId], 3000);
  const remove = useAction();
  const e = endpoint.data;

  const onDelete = async () => {
    if (!window.confirm(`Delete endpoint ${e?.name ?? endpointId}? Its queued jobs are cancelled.`))
      return;
    if (await remove.run(() => api.client.endpoints.delete(endpointId))) navigate('/');
  };

  return (
    <>
      <Heading title={e ? `Endpoint ${e.name}` : `Endpoint ${endpointId}`}>
        <Link to={`/endpoints/${endpointId}/requests`} className="button">
          Requests
        </Link>
        {canWrite && (
          <>
            <Link to={`/endpoints/${endpointId}/edit`} className="button">
              Edit
            </Link>
            <button type="button" className="danger" onClick={onDelete} disabled={remove.busy}>
              Delete
            </button>
          </>
        )}
      </Heading>
      <ErrorNote error={endpoint.error ?? remove.error} />
      <Loading when={endpoint.loading && !e} />
      {e && (
        <dl className="facts">
          <dt>ID</dt>
          <dd className="mono">{e.id}</dd>
          <dt>Template</dt>
          <dd className="mono">{e.templateId}</dd>
          <dt>Version</dt>
          <dd>{e.version}</dd>
          <dt>Workers</dt>
          <dd>
            {e.workersMin}–{e.workersMax}, idle timeout {e.idleTimeout} s
          </dd>
          <dt>Scaler</dt>
          <dd>
            {e.scalerType} {e.scalerValue}
          </dd>
          <dt>Compute</dt>
          <dd>
            {e.computeType === 'GPU'
              ? `${e.gpuCount} GPU(s) per worker`
              : `CPU, ${e.vcpuCount} vCPUs`}
          </dd>
          {health.data && (
            <>
              <dt>Jobs</dt>
              <dd>
                {health.data.jobs.inQueue} in queue, {health.data.jobs.inProgress} in progress,{' '}
                {health.data.jobs.completed} completed, {health.data.jobs.failed} failed
              </dd>
            </>
          )}
        </dl>
      )}
      {e && <WaitingReasons waiting={e.waiting} />}
      <EndpointMetricsPanel endpointId={endpointId} />
      {e && <EndpointWorkersPanel endpointId={endpointId} version={e.version} />}
    </>
  );
}
