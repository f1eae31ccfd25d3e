import { useState, type FormEvent } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { ErrorNote, formatTime, Heading } from '../components/feedback';
import { Field } from '../components/fields';

/** Secrets by name (values go in once and never come back); create and delete. */
export function SecretsPage() {
  const { api, canWrite } = useSession();
  const secrets = useLoad(() => api.client.secrets.list(), [api]);
  const [form, setForm] = useState({ name: '', value: '', description: '' });
  const save = useAction();
  const remove = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await save.run(() =>
      api.client.secrets.create({
        name: form.name,
        value: form.value,
        ...(form.description && { description: form.description }),
      }),
    );
    if (ok) {
      setForm({ name: '', value: '', description: '' });
      secrets.reload();
    }
  };

  return (
    <>
      <Heading title="Secrets" />
      <p className="muted">
        A template uses a secret as <code>{'{{ RUNPOD_SECRET_<name> }}'}</code> in its environment;
        it is resolved only when a worker or Pod starts. Values are never shown again.
      </p>
      {canWrite && (
        <form onSubmit={submit} className="form-grid panel" aria-label="New secret">
          <Field
            label="Name"
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.target.value })}
            required
          />
          <Field
            label="Value"
            type="password"
            autoComplete="off"
            value={form.value}
            onChange={(e) => setForm({ ...form, value: e.target.value })}
            required
          />
          <Field
            label="Description"
            value={form.description}
            onChange={(e) => setForm({ ...form, description: e.target.value })}
          />
          <div className="actions">
            <button type="submit" className="primary" disabled={save.busy}>
              Create secret
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={secrets.error ?? save.error ?? remove.error} />
      {secrets.data && secrets.data.length === 0 && <p>No secrets.</p>}
      {secrets.data && secrets.data.length > 0 && (
        <table>
          <caption className="sr-only">Secrets</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Reference</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {secrets.data.map((s) => (
              <tr key={s.id}>
                <td>{s.name}</td>
                <td className="mono">{`{{ RUNPOD_SECRET_${s.name} }}`}</td>
                <td>{s.description ?? ''}</td>
                <td>{formatTime(s.createdAt)}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      className="danger"
                      onClick={async () => {
                        if (!window.confirm(`Delete secret ${s.name}?`)) return;
                        if (await remove.run(() => api.client.secrets.delete(s.id)))
                          secrets.reload();
                      }}
                    >
                      Delete<span className="sr-only"> secret {s.name}</span>
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
