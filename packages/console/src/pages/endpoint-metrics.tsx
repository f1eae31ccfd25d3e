import type { EndpointMetrics } from '@runplane/contracts';
import { useState } from 'react';
import { useSession } from '../api/session-context';
import { useLoad } from '../api/use-load';
import { BarChart } from '../components/bar-chart';
import { ErrorNote, formatMs } from '../components/feedback';
import { SelectField } from '../components/fields';

const WINDOWS = ['15m', '1h', '6h', '24h'].map((w) => ({ value: w, label: `last ${w}` }));
const BUCKET_MIN = 5;
const BUCKETS = 12;

const percentiles = (label: string, d: EndpointMetrics['delayTime']) => ({
  label,
  bars: [
    { label: 'p70', value: d.p70 },
    { label: 'p90', value: d.p90 },
    { label: 'p98', value: d.p98 },
  ],
});

/**
 * Jobs ended per 5 minutes over the last hour: the metrics route counts jobs that ended in a window
 * reaching back from now, so the count of each bucket is the difference of two such windows.
 */
async function endedOverTime(load: (window: string) => Promise<EndpointMetrics>) {
  const windows = await Promise.all(
    Array.from({ length: BUCKETS }, (_, i) => load(`${(i + 1) * BUCKET_MIN}m`)),
  );
  const failed = (m: EndpointMetrics) => m.jobs.failed + m.jobs.timedOut;
  return windows
    .map((m, i) => ({
      label: `-${(i + 1) * BUCKET_MIN}m`,
      completed: m.jobs.completed - (i ? windows[i - 1].jobs.completed : 0),
      failed: failed(m) - (i ? failed(windows[i - 1]) : 0),
    }))
    .reverse();
}

/** Percentiles of delay, execution and cold start, and completed/failed jobs over time. */
export function EndpointMetricsPanel({ endpointId }: { endpointId: string }) {
  const { api } = useSession();
  const [window, setWindow] = useState('1h');
  const ops = api.client.operations(endpointId);
  const metrics = useLoad(() => ops.metrics({ window }), [api, endpointId, window], 15_000);
  const history = useLoad(
    () => endedOverTime((w) => ops.metrics({ window: w })),
    [api, endpointId],
    30_000,
  );
  const m = metrics.data;
  return (
    <section aria-labelledby="metrics-title">
      <div className="heading">
        <h2 id="metrics-title">Metrics</h2>
        <div className="actions">
          <SelectField
            label="Window"
            value={window}
            onChange={(e) => setWindow(e.target.value)}
            options={WINDOWS}
          />
        </div>
      </div>
      <ErrorNote error={metrics.error ?? history.error} />
      {m && (
        <>
          <p className="muted">
            {m.jobs.completed} completed, {m.jobs.failed} failed, {m.jobs.timedOut} timed out,{' '}
            {m.jobs.retried} retried in the last {m.window}.
          </p>
          <div className="charts">
            <BarChart
              title="Durations"
              unit="ms, nearest rank"
              format={formatMs}
              groups={[
                percentiles('delay', m.delayTime),
                percentiles('execution', m.executionTime),
                percentiles('cold start', m.coldStart),
              ]}
            />
            {history.data && (
              <BarChart
                title="Jobs ended per 5 minutes, last hour"
                groups={history.data.map((b) => ({
                  label: b.label,
                  bars: [
                    { label: '✓', value: b.completed },
                    { label: '✗', value: b.failed },
                  ],
                }))}
              />
            )}
          </div>
        </>
      )}
    </section>
  );
}
