import type { ApiKeyScope, CreatedApiKey } from '@runplane/contracts';
import { useState, type FormEvent } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { ErrorNote, formatTime, Heading } from '../components/feedback';
import { Field, SelectField } from '../components/fields';

const SCOPES: ApiKeyScope[] = ['readonly', 'readwrite', 'admin'];

/** The user's API keys: create one (its value shown once), revoke one. */
export function ApiKeysPage() {
  const { api, key: own, canWrite } = useSession();
  const keys = useLoad(() => api.client.apiKeys.list(), [api]);
  const [form, setForm] = useState<{ name: string; scope: ApiKeyScope }>({
    name: '',
    scope: 'readonly',
  });
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const save = useAction();
  const revoke = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await save.run(async () => setCreated(await api.client.apiKeys.create(form)));
    if (ok) {
      setForm({ name: '', scope: 'readonly' });
      keys.reload();
    }
  };

  return (
    <>
      <Heading title="API keys" />
      {canWrite && (
        <form onSubmit={submit} className="form-grid panel" aria-label="New API key">
          <Field
            label="Name"
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.target.value })}
            required
          />
          <SelectField
            label="Scope"
            value={form.scope}
            onChange={(e) => setForm({ ...form, scope: e.target.value as ApiKeyScope })}
            options={SCOPES.map((s) => ({ value: s, label: s }))}
          />
          <div className="actions">
            <button type="submit" className="primary" disabled={save.busy}>
              Create key
            </button>
          </div>
        </form>
      )}
      {created && (
        <div className="notice" role="status">
          <p>
            Key <strong>{created.name}</strong> ({created.scope}) — copy it now, it is not shown
            again:
          </p>
          <input
            readOnly
            aria-label="The new key"
            value={created.key}
            className="mono wide-input"
            onFocus={(e) => e.target.select()}
          />
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <ErrorNote error={keys.error ?? save.error ?? revoke.error} />
      {keys.data && (
        <table>
          <caption className="sr-only">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">ID</th>
              <th scope="col">Scope</th>
              <th scope="col">User</th>
              <th scope="col">Created</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr key={k.id}>
                <td>
                  {k.name}
                  {k.id === own.id ? ' (this session)' : ''}
                </td>
                <td className="mono">{k.id}</td>
                <td>
                  {k.scope}
                  {k.endpointId ? ` (${k.endpointId})` : ''}
                </td>
                <td className="mono">{k.userId}</td>
                <td>{formatTime(k.createdAt)}</td>
                {canWrite && (
                  <td>
                    {k.id !== own.id && (
                      <button
                        type="button"
                        className="danger"
                        onClick={async () => {
                          if (!window.confirm(`Revoke key ${k.name}?`)) return;
                          if (await revoke.run(() => api.client.apiKeys.revoke(k.id)))
                            keys.reload();
                        }}
                      >
                        Revoke<span className="sr-only"> key {k.name}</span>
                      </button>
                    )}
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
