import type { WorkloadLogLine } from '@runplane/contracts';
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../api/client';
import { ErrorNote } from './feedback';

/**
 * Log lines of a workload. With `follow`, reads the server-sent events of a `follow=true` log route
 * (the lines so far, then new ones) until the workload ends or the view goes away.
 */
export function LogView({
  label,
  lines: given,
  follow,
}: {
  label: string;
  lines?: WorkloadLogLine[];
  follow?: (signal: AbortSignal) => AsyncGenerator<WorkloadLogLine, void, void>;
}) {
  const [lines, setLines] = useState<WorkloadLogLine[]>(given ?? []);
  const [state, setState] = useState<'following' | 'ended' | null>(follow ? 'following' : null);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLPreElement>(null);

  useEffect(() => {
    if (given) setLines(given);
  }, [given]);

  useEffect(() => {
    if (!follow) return;
    const abort = new AbortController();
    setLines([]);
    setState('following');
    setError(null);
    (async () => {
      try {
        for await (const line of follow(abort.signal))
          setLines((all) => [...all, line].slice(-2000));
        if (!abort.signal.aborted) setState('ended');
      } catch (err) {
        if (!abort.signal.aborted) {
          setError(errorMessage(err));
          setState('ended');
        }
      }
    })();
    return () => abort.abort();
  }, [follow]);

  useEffect(() => {
    const el = box.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lines]);

  return (
    <div className="logs">
      {state && (
        <p className="muted" aria-live="polite">
          {state === 'following'
            ? 'Following: new lines appear as they are written.'
            : 'The workload ended.'}
        </p>
      )}
      <ErrorNote error={error} />
      <pre ref={box} aria-label={label} tabIndex={0} className="log-lines">
        {lines.length === 0
          ? follow
            ? 'No lines yet.'
            : 'No lines.'
          : lines.map((line, i) => (
              <span key={i} className={line.stream === 'stderr' ? 'stderr' : undefined}>
                {line.stream === 'stderr' ? '[stderr] ' : ''}
                {line.text}
                {'\n'}
              </span>
            ))}
      </pre>
    </div>
  );
}
