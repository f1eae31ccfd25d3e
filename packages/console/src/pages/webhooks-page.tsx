import { useState } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { ErrorNote, formatTime, Heading, StatusBadge } from '../components/feedback';
import { Field } from '../components/fields';

/** Webhook deliveries (every attempt's status code, latency, error) and redelivery. */
export function WebhooksPage() {
  const { api, canWrite } = useSession();
  const [jobId, setJobId] = useState('');
  const deliveries = useLoad(
    () => api.webhookDeliveries(jobId.trim() || undefined),
    [api, jobId],
    5000,
  );
  const redeliver = useAction();
  return (
    <>
      <Heading title="Webhook deliveries">
        <Field
          label="Job ID"
          value={jobId}
          onChange={(e) => setJobId(e.target.value)}
          placeholder="all jobs"
        />
      </Heading>
      <ErrorNote error={deliveries.error ?? redeliver.error} />
      {deliveries.data && deliveries.data.length === 0 && <p>No webhook deliveries.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <table>
          <caption className="sr-only">Webhook deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Webhook ID</th>
              <th scope="col">Job</th>
              <th scope="col">Event</th>
              <th scope="col">URL</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Created</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {deliveries.data.map((d) => (
              <tr key={d.id}>
                <td className="mono">{d.id}</td>
                <td className="mono">{d.jobId}</td>
                <td>{d.event}</td>
                <td className="mono">{d.url}</td>
                <td>
                  <StatusBadge status={d.status} />
                </td>
                <td>
                  {d.attempts.map((a) => (
                    <div key={a.attempt}>
                      #{a.attempt}: {a.statusCode ?? 'no answer'} in {a.latencyMs} ms
                      {a.error ? ` (${a.error})` : ''}
                    </div>
                  ))}
                </td>
                <td>{formatTime(d.createdAt)}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      disabled={redeliver.busy}
                      onClick={() =>
                        redeliver.run(() => api.redeliverWebhook(d.id)).then(deliveries.reload)
                      }
                    >
                      Redeliver<span className="sr-only"> webhook {d.id}</span>
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
