import {
  QueueApiSignals,
  RELAY_HEARTBEAT_MS,
  RunplaneError,
  SchedulerRpc,
  TemplateRpc,
  type RpcDefinition,
  type Template,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { schedulerService } from '../src/index.js';

/** Short timings so timers and liveness are observable in seconds. */
export const FAST_ENV = {
  RUNPLANE_WORKER_PING_INTERVAL_MS: '1000',
  RUNPLANE_SCHEDULER_SWEEP_MS: '100',
  RUNPLANE_AUTOSCALE_INTERVAL_MS: '100',
  RUNPLANE_LONG_POLL_RECHECK_MS: '1000',
};

export const OWNER = 'user-a';
export const OTHER = 'user-b';

/**
 * A scheduler (with the vault, as in production) driven over its bus, standing in for queue-api
 * (the harness's calls, and its relay heartbeat) and for template-graphql (TemplateRpc.get).
 */
export interface Harness {
  server: TestServer;
  /** Template ids the stand-in template-graphql knows. */
  templates: Set<string>;
  /** Owners of templates that belong to someone (public ones); others belong to whoever asks. */
  templateOwners: Map<string, string>;
  /** Current revisions of templates (1 when not set). */
  templateRevisions: Map<string, number>;
  /** How the stand-in answers: normally, as if no instance were up (503), or crashing (500). */
  templateService: 'up' | 'down' | 'crashing';
  /** Whether the stand-in queue-api announces that it relays workers' calls (it does, unless set). */
  relaying: boolean;
  call<Req, Res>(rpc: RpcDefinition<Req, Res>, payload: Req, timeoutMs?: number): Promise<Res>;
  /** The RunplaneError a call fails with (fails the test when it succeeds). */
  error<Req, Res>(rpc: RpcDefinition<Req, Res>, payload: Req): Promise<RunplaneError>;
  /** A new endpoint of OWNER (workersMax 0 unless given: no managed workers). */
  endpoint(overrides?: Record<string, unknown>, ownerId?: string): Promise<string>;
  submit(
    endpointId: string,
    input?: Record<string, unknown>,
    extra?: Record<string, unknown>,
    mode?: 'run' | 'runsync',
  ): Promise<string>;
  stop(): Promise<void>;
}

let seq = 0;
export const jobId = (prefix = 'job') =>
  `${prefix}-${Date.now().toString(36)}-${(seq++).toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

export function template(id: string): Template {
  return {
    id,
    name: `tpl-${id}`,
    imageName: 'runplane/test:1',
    category: 'CPU',
    containerDiskInGb: 5,
    dockerEntrypoint: [],
    dockerStartCmd: ['node', 'w.mjs'],
    earned: 0,
    env: {},
    isPublic: false,
    isRunpod: false,
    isServerless: true,
    ports: [],
    readme: '',
    runtimeInMin: 0,
    volumeInGb: 0,
    volumeMountPath: '/workspace',
  };
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const server = await startTestServer([secretsVaultService, schedulerService], {
    ...FAST_ENV,
    ...env,
  });
  const templates = new Set<string>(['tpl-1', 'tpl-2']);
  const call: Harness['call'] = (rpc, payload, timeoutMs = 15_000) =>
    server.bus.request(rpc, payload, { timeoutMs });
  const h: Harness = {
    server,
    templates,
    templateOwners: new Map(),
    templateRevisions: new Map(),
    templateService: 'up',
    relaying: true,
    call,
    async error(rpc, payload) {
      try {
        await call(rpc, payload);
      } catch (err) {
        if (err instanceof RunplaneError) return err;
        throw err;
      }
      throw new Error(`${rpc.subject} succeeded but was expected to fail`);
    },
    async endpoint(overrides = {}, ownerId = OWNER) {
      const ep = await call(SchedulerRpc.createEndpoint, {
        ownerId,
        endpoint: { templateId: 'tpl-1', workersMin: 0, workersMax: 0, ...overrides } as never,
      });
      return ep.id;
    },
    async submit(endpointId, input = { n: 1 }, extra = {}, mode = 'run') {
      const id = jobId(mode === 'runsync' ? 'sync' : 'job');
      await call(SchedulerRpc.submitJob, {
        ownerId: OWNER,
        endpointId,
        jobId: id,
        mode,
        job: { input, ...extra } as never,
      });
      return id;
    },
    stop: () => {
      clearInterval(heartbeat);
      return server.stop();
    },
  };
  const heartbeat = setInterval(() => {
    if (h.relaying)
      void server.bus.signal(QueueApiSignals.workerRelay, { replica: 'harness' }).catch(() => {});
  }, RELAY_HEARTBEAT_MS);
  await server.bus.serve(TemplateRpc.get, async ({ ownerId, templateId, withRevision }) => {
    // What the bus answers when no template-graphql instance is up.
    if (h.templateService === 'down')
      throw RunplaneError.unavailable(
        `no instance of template-graphql is answering ${TemplateRpc.get.subject}`,
      );
    if (h.templateService === 'crashing') throw new Error('template-graphql fault');
    if (!templates.has(templateId))
      throw RunplaneError.notFound(`template ${templateId} not found`);
    if (!withRevision) return template(templateId);
    return {
      ...template(templateId),
      revision: h.templateRevisions.get(templateId) ?? 1,
      owned: (h.templateOwners.get(templateId) ?? ownerId) === ownerId,
    };
  });
  return h;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function until<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const v = await check().catch((err: unknown) => {
      last = err;
      return undefined;
    });
    if (v) return v;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
      );
    await sleep(50);
  }
}
