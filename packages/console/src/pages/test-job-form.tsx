import type { JobRecord } from '@runplane/contracts';
import { isFinalStatus } from '@runplane/contracts/client';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useSession } from '../api/session-context';
import { useAction } from '../api/use-load';
import { ErrorNote, JsonBlock, StatusBadge } from '../components/feedback';
import { SelectField, TextArea } from '../components/fields';
import { Link } from '../router';

/** Sends a job (`run`, then its stream as it comes, or `runsync`) and shows what comes back. */
export function TestJobForm({ endpointId, onSent }: { endpointId: string; onSent(): void }) {
  const { api } = useSession();
  const [input, setInput] = useState('{\n  "echo": "hello"\n}');
  const [mode, setMode] = useState<'run' | 'runsync'>('run');
  const [job, setJob] = useState<(Partial<JobRecord> & { id: string }) | null>(null);
  const [chunks, setChunks] = useState<unknown[]>([]);
  const send = useAction();
  // The stream is read until the job ends, or until this form goes away.
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setJob(null);
    setChunks([]);
    await send.run(async () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(input);
      } catch {
        throw new Error('The input must be JSON.');
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new Error('The input must be a JSON object.');
      const body = { input: parsed as Record<string, unknown> };
      const queue = api.client.queue(endpointId);
      if (mode === 'runsync') {
        setJob(await queue.runsync(body, { waitMs: 60_000 }));
        onSent();
        return;
      }
      const accepted = await queue.run(body);
      setJob(accepted);
      onSent();
      while (mounted.current) {
        const page = await queue.streamOnce(accepted.id, { waitMs: 5000 });
        if (page.stream.length) setChunks((all) => [...all, ...page.stream.map((c) => c.output)]);
        setJob((j) => ({ ...j, id: accepted.id, status: page.status }));
        if (isFinalStatus(page.status)) {
          setJob(await queue.status(accepted.id));
          break;
        }
      }
    });
  };

  return (
    <section aria-labelledby="test-title" className="panel">
      <h2 id="test-title">Send a test job</h2>
      <form onSubmit={submit} className="form-grid">
        <div className="wide">
          <TextArea label="Input (JSON)" value={input} onChange={setInput} rows={4} />
        </div>
        <SelectField
          label="Mode"
          value={mode}
          onChange={(e) => setMode(e.target.value as 'run' | 'runsync')}
          options={[
            { value: 'run', label: 'run: queue, stream' },
            { value: 'runsync', label: 'runsync: wait' },
          ]}
        />
        <div className="actions">
          <button type="submit" className="primary" disabled={send.busy}>
            {send.busy ? 'Running…' : 'Send job'}
          </button>
        </div>
      </form>
      <ErrorNote error={send.error} />
      {job && (
        <div className="result" aria-live="polite">
          <p>
            Job{' '}
            <Link to={`/endpoints/${endpointId}/requests/${job.id}`} className="mono">
              {job.id}
            </Link>{' '}
            {job.status && <StatusBadge status={job.status} />}
          </p>
          {chunks.length > 0 && <JsonBlock label="Stream chunks" value={chunks} />}
          {job.output !== undefined && <JsonBlock label="Output" value={job.output} />}
          {job.error && <JsonBlock label="Error" value={job.error} />}
        </div>
      )}
    </section>
  );
}
