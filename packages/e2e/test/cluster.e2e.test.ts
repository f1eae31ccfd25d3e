import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NATS_URL, POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import {
  databaseUrl,
  deleteNatsStreams,
  dropDatabases,
  natsResources,
  psqlQuery,
} from './support/infrastructure.js';
import {
  ADMIN_KEY,
  http,
  killAll,
  provisionEndpoint,
  recordTiming,
  removeTempDir,
  startRunplane,
  tempDir,
  type RunplaneProcess,
} from './support/runplane-process.js';
import { describeManagementApi } from './support/management-api.js';

const SERVICES = [
  'secrets-vault',
  'scheduler',
  'template-graphql',
  'pod-rest',
  'webhook-sender',
  'queue-api',
] as const;
type Service = (typeof SERVICES)[number];

const SUITE = 'e2e cluster mode (six services as separate processes over NATS + PostgreSQL)';
// Both are asked (not short-circuited) so a skip names every missing service.
const natsUp = await requireService('nats', SUITE);
const postgresUp = await requireService('postgres', SUITE);

if (natsUp && postgresUp) {
  describe('cluster mode: runplane start --service <name> for each of the six services', () => {
    // Per run: a bus namespace of its own on the shared NATS server, and databases of its own.
    const runId = uniqueName('runplane_e2e');
    const namespace = runId.replace(/^runplane_/, '');
    const databases = Object.fromEntries(
      SERVICES.map((s) => [s, `${runId}_${s.replace(/-/g, '_')}`]),
    ) as Record<Service, string>;
    const workDir = tempDir('cluster');
    const MASTER_KEY = randomBytes(32).toString('base64');
    const procs = {} as Record<Service, RunplaneProcess>;
    const urls = {} as Record<Service, string>;

    beforeAll(async () => {
      for (const service of SERVICES) {
        const dbVar = `DATABASE_URL_${service.toUpperCase().replace(/-/g, '_')}`;
        procs[service] = startRunplane(
          service,
          ['start', '--service', service],
          {
            NODE_ENV: 'production', // no local development defaults: every setting below is required
            NATS_URL,
            RUNPLANE_BUS_NAMESPACE: namespace,
            [dbVar]: databaseUrl(POSTGRES_URL, databases[service]),
            // Only the vault knows the admin key: queue-api must ask it over the bus.
            RUNPLANE_API_KEY: service === 'secrets-vault' ? ADMIN_KEY : undefined,
            // Production mode needs the vault's master key given (it never makes one up there).
            RUNPLANE_MASTER_KEY: service === 'secrets-vault' ? MASTER_KEY : undefined,
            RUNPLANE_DATA_DIR: `${workDir}/unused-${service}`,
          },
          workDir,
        );
      }
      const started = Date.now();
      const ready = await Promise.all(
        SERVICES.map(async (s) => [s, await procs[s].waitForReady(90_000)] as const),
      );
      for (const [s, r] of ready) urls[s] = r.url;
      recordTiming(
        `cluster: all six services /readyz 200 after ${((Date.now() - started) / 1000).toFixed(1)} s (${ready.map(([s, r]) => `${s} ${(r.ms / 1000).toFixed(1)} s`).join(', ')})`,
      );
    }, 100_000);

    afterAll(async () => {
      await killAll();
      await dropDatabases(POSTGRES_URL, Object.values(databases));
      await deleteNatsStreams(NATS_URL, natsResources(namespace));
      removeTempDir(workDir);
    }, 60_000);

    it('runs each service in its own process on its own port, on NATS and its own database', async () => {
      expect(new Set(SERVICES.map((s) => procs[s].pid)).size).toBe(6);
      expect(new Set(SERVICES.map((s) => urls[s])).size).toBe(6);
      for (const s of SERVICES) {
        const readyz = await http('GET', `${urls[s]}/readyz`);
        expect({ service: s, status: readyz.status }).toEqual({ service: s, status: 200 });
        expect(procs[s].log).toContain(`NATS bus (namespace ${namespace})`);
        expect(procs[s].log).not.toContain('embedded database');
      }
    });

    it('queues a job through queue-api (key checked by secrets-vault, job stored by scheduler, over NATS)', async () => {
      // Template and endpoint through pod-rest's REST API (pod-rest -> template-graphql / scheduler).
      const endpoint = await provisionEndpoint(urls['pod-rest'], ADMIN_KEY, 'e2e-cluster');
      const queueApi = urls['queue-api'];
      const run = await http('POST', `${queueApi}/v2/${endpoint}/run`, {
        key: `Bearer ${ADMIN_KEY}`,
        body: { input: { prompt: 'hello cluster' } },
      });
      expect({ status: run.status, body: run.body }).toEqual({
        status: 200,
        body: { id: expect.any(String), status: 'IN_QUEUE' },
      });
      const id = run.body.id as string;

      for (const method of ['GET', 'POST']) {
        const status = await http(method, `${queueApi}/v2/${endpoint}/status/${id}`, {
          key: ADMIN_KEY,
        });
        expect({ method, status: status.status, body: status.body }).toEqual({
          method,
          status: 200,
          body: { id, status: 'IN_QUEUE', retries: 0 },
        });
      }

      const wrongKey = await http('POST', `${queueApi}/v2/${endpoint}/run`, {
        key: 'Bearer wrong-key-wrong-key',
        body: { input: {} },
      });
      expect(wrongKey.status).toBe(401);

      // The job lives in the scheduler's own database, in the schema named after the service.
      const rows = await psqlQuery(
        databaseUrl(POSTGRES_URL, databases.scheduler),
        `SELECT status FROM scheduler."Job" WHERE id = '${id.replace(/'/g, "''")}'`,
      );
      expect(rows).toEqual(['IN_QUEUE']);
    });

    describeManagementApi(() => ({
      graphql: urls['template-graphql'],
      rest: urls['pod-rest'],
      vault: urls['secrets-vault'],
    }));

    it('stops every service on SIGTERM with exit code 0', async () => {
      for (const s of SERVICES) procs[s].signalGroup('SIGTERM');
      const exits = await Promise.all(
        SERVICES.map(async (s) => [s, await procs[s].waitForExit(25_000)] as const),
      );
      recordTiming(
        `cluster: SIGTERM -> exits after ${exits.map(([s, e]) => `${s} ${(e.ms / 1000).toFixed(1)} s`).join(', ')}`,
      );
      for (const [s, e] of exits) {
        expect({ service: s, code: e.code, signal: e.signal }).toEqual({
          service: s,
          code: 0,
          signal: null,
        });
      }
    }, 30_000);
  });
} else {
  describe.skip(`${SUITE} — SKIPPED: NATS or PostgreSQL not reachable`, () => {
    it('queues a job across separate service processes', () => {});
  });
}
