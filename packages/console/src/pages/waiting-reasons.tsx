import type { EndpointWaiting } from '@runplane/contracts';
import { formatTime } from '../components/feedback';

/** Why queued jobs wait (`waiting` of the endpoint), with a failed worker's last lines. */
export function WaitingReasons({ waiting }: { waiting: EndpointWaiting | undefined }) {
  if (!waiting) return null;
  return (
    <section aria-labelledby="waiting-title" className="waiting">
      <h2 id="waiting-title">Why {waiting.jobs} job(s) wait</h2>
      {waiting.reasons.length === 0 && (
        <p>
          Nothing holds them back: a worker is about to take them, or the scaler waits its delay.
        </p>
      )}
      <ul>
        {waiting.reasons.map((r) => (
          <li key={r.code}>
            <strong>{r.code}</strong>: {r.message}
            {r.nextAttemptAt && <> (next start {formatTime(r.nextAttemptAt)})</>}
            {r.logs && r.logs.length > 0 && (
              <pre className="log-lines" aria-label={`Last lines of worker ${r.workerId}`}>
                {r.logs.join('\n')}
              </pre>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
