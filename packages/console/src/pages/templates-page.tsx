import type { Template } from '@runplane/contracts';
import { join, split } from 'shlex';
import { useState, type FormEvent } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { EnvEditor, formatEnv, parseEnv } from '../components/env-editor';
import { ErrorNote, Heading, Loading } from '../components/feedback';
import { Field } from '../components/fields';

interface Form {
  name: string;
  imageName: string;
  command: string;
  env: string;
  isServerless: boolean;
}

const EMPTY: Form = { name: '', imageName: '', command: '', env: '', isServerless: true };

/** Templates: create and edit (image, start command, env with secret references), delete. */
export function TemplatesPage() {
  const { api, canWrite } = useSession();
  const templates = useLoad(() => api.client.templates.list(), [api]);
  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const remove = useAction();
  return (
    <>
      <Heading title="Templates">
        {canWrite && (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            New template
          </button>
        )}
      </Heading>
      {editing && (
        <TemplateForm
          template={editing === 'new' ? undefined : editing}
          onDone={() => {
            setEditing(null);
            templates.reload();
          }}
        />
      )}
      <ErrorNote error={templates.error ?? remove.error} />
      <Loading when={templates.loading && !templates.data} />
      {templates.data && templates.data.length === 0 && <p>No templates yet.</p>}
      {templates.data && templates.data.length > 0 && (
        <table>
          <caption className="sr-only">Templates</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">ID</th>
              <th scope="col">Image</th>
              <th scope="col">Command</th>
              <th scope="col">Env</th>
              <th scope="col">Serverless</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {templates.data.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td className="mono">{t.id}</td>
                <td className="mono">{t.imageName}</td>
                <td className="mono">{join(t.dockerStartCmd)}</td>
                <td>{Object.keys(t.env).join(', ') || '–'}</td>
                <td>{t.isServerless ? 'yes' : 'no'}</td>
                {canWrite && (
                  <td>
                    <button type="button" onClick={() => setEditing(t)}>
                      Edit<span className="sr-only"> template {t.name}</span>
                    </button>
                    <button
                      type="button"
                      className="danger"
                      onClick={async () => {
                        if (!window.confirm(`Delete template ${t.name}?`)) return;
                        if (await remove.run(() => api.client.templates.delete(t.id)))
                          templates.reload();
                      }}
                    >
                      Delete<span className="sr-only"> template {t.name}</span>
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

function TemplateForm({ template, onDone }: { template?: Template; onDone(): void }) {
  const { api } = useSession();
  const [form, setForm] = useState<Form>(
    template
      ? {
          name: template.name,
          imageName: template.imageName,
          command: join(template.dockerStartCmd),
          env: formatEnv(template.env),
          isServerless: template.isServerless,
        }
      : EMPTY,
  );
  const save = useAction();
  const set = (field: keyof Form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [field]: e.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await save.run(async () => {
      const body = {
        name: form.name,
        imageName: form.imageName,
        dockerStartCmd: split(form.command),
        env: parseEnv(form.env),
      };
      if (template) await api.client.templates.update(template.id, body);
      else await api.client.templates.create({ ...body, isServerless: form.isServerless });
    });
    if (ok) onDone();
  };

  return (
    <section className="panel" aria-labelledby="template-form-title">
      <h2 id="template-form-title">
        {template ? `Edit template ${template.name}` : 'New template'}
      </h2>
      <form onSubmit={submit} className="form-grid">
        <Field label="Name" value={form.name} onChange={set('name')} required />
        <Field
          label="Image"
          value={form.imageName}
          onChange={set('imageName')}
          required
          placeholder="me/worker:1"
        />
        <div className="wide">
          <Field
            label="Start command"
            value={form.command}
            onChange={set('command')}
            placeholder="python -u handler.py"
            hint="Split like a shell would. Standalone, this command runs as a local process."
          />
        </div>
        {!template && (
          <div className="field checkbox">
            <label>
              <input
                type="checkbox"
                checked={form.isServerless}
                onChange={(e) => setForm((f) => ({ ...f, isServerless: e.target.checked }))}
              />{' '}
              Serverless (for endpoints)
            </label>
          </div>
        )}
        <div className="wide">
          <EnvEditor value={form.env} onChange={(env) => setForm((f) => ({ ...f, env }))} />
        </div>
        <ErrorNote error={save.error} />
        <div className="actions wide">
          <button type="submit" className="primary" disabled={save.busy}>
            {template ? 'Save template' : 'Create template'}
          </button>
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
