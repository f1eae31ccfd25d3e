import type { Endpoint, EndpointCreateDto, ScalerType, Template } from '@runplane/contracts';
import { useState, type FormEvent } from 'react';
import { useSession } from '../api/session-context';
import { useAction, useLoad } from '../api/use-load';
import { EnvEditor, formatEnv, parseEnv } from '../components/env-editor';
import { ErrorNote, Heading, Loading } from '../components/feedback';
import { Field, SelectField } from '../components/fields';
import { Link, navigate } from '../router';

const SCALERS: { value: ScalerType; label: string }[] = [
  { value: 'QUEUE_DELAY', label: 'Queue delay (s a job may wait)' },
  { value: 'REQUEST_COUNT', label: 'Request count (jobs per worker)' },
];

interface Form {
  name: string;
  templateId: string;
  workersMin: string;
  workersMax: string;
  idleTimeout: string;
  scalerType: ScalerType;
  scalerValue: string;
  computeType: 'GPU' | 'CPU';
  gpuCount: string;
  env: string;
}

const EMPTY: Form = {
  name: '',
  templateId: '',
  workersMin: '0',
  workersMax: '3',
  idleTimeout: '5',
  scalerType: 'QUEUE_DELAY',
  scalerValue: '4',
  computeType: 'GPU',
  gpuCount: '1',
  env: '',
};

const toForm = (e: Endpoint): Form => ({
  name: e.name,
  templateId: e.templateId,
  workersMin: String(e.workersMin),
  workersMax: String(e.workersMax),
  idleTimeout: String(e.idleTimeout),
  scalerType: e.scalerType,
  scalerValue: String(e.scalerValue),
  computeType: e.computeType,
  gpuCount: String(e.gpuCount),
  env: formatEnv(e.env),
});

/** Create an endpoint, or edit one (`endpointId`): template, workers, idle timeout, scaler, GPUs, env. */
export function EndpointFormPage({ endpointId }: { endpointId?: string }) {
  const { api } = useSession();
  const templates = useLoad(() => api.client.templates.list(), [api]);
  const existing = useLoad(
    () => (endpointId ? api.client.endpoints.get(endpointId) : Promise.resolve(undefined)),
    [api, endpointId],
  );
  // The form appears once what it starts from is there (an edit: the endpoint's values).
  const ready = templates.data && (!endpointId || existing.data);
  return (
    <>
      <Heading title={endpointId ? `Edit endpoint ${existing.data?.name ?? ''}` : 'New endpoint'} />
      <ErrorNote error={templates.error ?? existing.error} />
      <Loading when={!ready && !templates.error && !existing.error} />
      {templates.data && templates.data.length === 0 && (
        <p>
          An endpoint runs a template: <Link to="/templates">create a template</Link> first.
        </p>
      )}
      {ready && (
        <EndpointForm
          endpointId={endpointId}
          endpoint={existing.data}
          templates={templates.data!}
        />
      )}
    </>
  );
}

function EndpointForm({
  endpointId,
  endpoint,
  templates,
}: {
  endpointId?: string;
  endpoint?: Endpoint;
  templates: Template[];
}) {
  const { api } = useSession();
  const [form, setForm] = useState<Form>(() =>
    endpoint ? toForm(endpoint) : { ...EMPTY, templateId: templates[0]?.id ?? '' },
  );
  const save = useAction();

  const set = (field: keyof Form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [field]: e.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    let id = endpointId;
    const ok = await save.run(async () => {
      const body: EndpointCreateDto = {
        name: form.name,
        templateId: form.templateId,
        workersMin: Number(form.workersMin),
        workersMax: Number(form.workersMax),
        idleTimeout: Number(form.idleTimeout),
        scalerType: form.scalerType,
        scalerValue: Number(form.scalerValue),
        ...(form.computeType === 'GPU' && { gpuCount: Number(form.gpuCount) }),
        env: parseEnv(form.env),
      };
      if (endpointId) await api.client.endpoints.update(endpointId, body);
      else id = (await api.client.endpoints.create({ ...body, computeType: form.computeType })).id;
    });
    if (ok) navigate(`/endpoints/${id}`);
  };

  const template = templates.find((t) => t.id === form.templateId);
  return (
    <form onSubmit={submit} className="form-grid">
      <Field label="Name" value={form.name} onChange={set('name')} required maxLength={191} />
      <SelectField
        label="Template"
        value={form.templateId}
        onChange={set('templateId')}
        options={templates.map((t) => ({
          value: t.id,
          label: `${t.name} (${t.id})`,
        }))}
        required
      />
      <Field
        label="Workers min"
        type="number"
        min={0}
        max={1000}
        value={form.workersMin}
        onChange={set('workersMin')}
        required
      />
      <Field
        label="Workers max"
        type="number"
        min={0}
        max={1000}
        value={form.workersMax}
        onChange={set('workersMax')}
        required
      />
      <Field
        label="Idle timeout (s)"
        type="number"
        min={1}
        max={3600}
        value={form.idleTimeout}
        onChange={set('idleTimeout')}
        required
      />
      <SelectField
        label="Scaler"
        value={form.scalerType}
        onChange={set('scalerType')}
        options={SCALERS}
      />
      <Field
        label="Scaler value"
        type="number"
        min={1}
        value={form.scalerValue}
        onChange={set('scalerValue')}
        required
      />
      <SelectField
        label="Compute"
        value={form.computeType}
        onChange={set('computeType')}
        disabled={Boolean(endpointId)}
        options={[
          { value: 'GPU', label: 'GPU' },
          { value: 'CPU', label: 'CPU' },
        ]}
      />
      {form.computeType === 'GPU' && (
        <Field
          label="GPUs per worker"
          type="number"
          min={1}
          max={16}
          value={form.gpuCount}
          onChange={set('gpuCount')}
          required
        />
      )}
      <EnvEditor value={form.env} onChange={(env) => setForm((f) => ({ ...f, env }))} />
      <p className="muted wide">
        Workers get their template&apos;s environment
        {template ? (
          <>
            {' '}
            ({Object.keys(template.env).length} variables of{' '}
            <Link to="/templates">{template.name}</Link>)
          </>
        ) : null}{' '}
        with these variables over it; a change here or there rolls out new workers.
      </p>
      <ErrorNote error={save.error} />
      <div className="actions wide">
        <button type="submit" className="primary" disabled={save.busy}>
          {endpointId ? 'Save' : 'Create endpoint'}
        </button>
        <Link to={endpointId ? `/endpoints/${endpointId}` : '/'} className="button">
          Cancel
        </Link>
      </div>
    </form>
  );
}
