import type { ReactNode } from 'react';

/** An error from the server, read out by screen readers when it appears. */
export function ErrorNote({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? <p className="muted">Loading…</p> : null;
}

/** A page or section heading with its actions on the right. */
export function Heading({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="heading">
      <h1>{title}</h1>
      <div className="actions">{children}</div>
    </div>
  );
}

const TONES: Record<string, string> = {
  COMPLETED: 'ok',
  IDLE: 'ok',
  RUNNING: 'busy',
  IN_PROGRESS: 'busy',
  IN_QUEUE: 'wait',
  INITIALIZING: 'wait',
  pending: 'wait',
  delivered: 'ok',
  FAILED: 'bad',
  failed: 'bad',
  TIMED_OUT: 'bad',
  UNHEALTHY: 'bad',
  CANCELLED: 'muted',
  EXITED: 'muted',
  TERMINATED: 'muted',
};

/** A state as a coloured label (the text itself says it; colour only helps). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`status ${TONES[status] ?? ''}`}>{status}</span>;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** JSON as readable text, in a scrollable block. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <figure className="block">
      <figcaption>{label}</figcaption>
      <pre className="json" aria-label={label} tabIndex={0}>
        {value === undefined ? '–' : JSON.stringify(value, null, 2)}
      </pre>
    </figure>
  );
}
