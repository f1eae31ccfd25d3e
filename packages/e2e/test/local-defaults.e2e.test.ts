import { afterAll, describe, expect, it } from '@jest/globals';
import { requireService, uniqueName } from '@runplane/test-support';
import { deleteNatsStreams, natsResources, psqlQuery } from './support/infrastructure.js';
import {
  http,
  killAll,
  recordTiming,
  removeTempDir,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

const SUITE = 'e2e npm run start:<service> local development defaults';
const natsUp = await requireService('nats', SUITE);
const postgresUp = await requireService('postgres', SUITE);

/** What the CLI falls back to when NODE_ENV is not production (packages/cli/src/main.ts). */
const LOCAL_NATS = 'nats://127.0.0.1:4222';
const LOCAL_DB = 'postgresql://postgres@127.0.0.1:5432/runplane_scheduler';

if (natsUp && postgresUp) {
  describe('runplane start --service scheduler without NATS_URL / DATABASE_URL (NODE_ENV unset)', () => {
    const workDir = tempDir('local-defaults');
    // Its own bus namespace, so it never joins a development cluster running on this machine.
    const namespace = uniqueName('e2e_local');

    afterAll(async () => {
      await killAll();
      await deleteNatsStreams(LOCAL_NATS, natsResources(namespace));
      removeTempDir(workDir);
      // The database runplane_scheduler is left in place: it is the developer's local default.
    }, 60_000);

    it('uses the local NATS and PostgreSQL and becomes ready', async () => {
      // NODE_ENV, NATS_URL and every DATABASE_URL* are removed from the environment by startRunplane().
      const scheduler = startRunplane(
        'scheduler-local-defaults',
        ['start', '--service', 'scheduler'],
        {
          RUNPLANE_BUS_NAMESPACE: namespace,
          RUNPLANE_DATA_DIR: `${workDir}/unused`,
        },
        workDir,
      );
      const ready = await scheduler.waitForReady(60_000);
      recordTiming(`local defaults: scheduler /readyz 200 after ${(ready.ms / 1000).toFixed(1)} s`);

      expect(scheduler.log).toContain(
        `NATS_URL not set; using ${LOCAL_NATS} (local development default)`,
      );
      expect(scheduler.log).toContain(
        `DATABASE_URL_SCHEDULER not set; using ${LOCAL_DB} (local development default)`,
      );
      expect(scheduler.log).toContain(`NATS bus (namespace ${namespace})`);
      expect(scheduler.log).not.toContain('embedded database');
      expect((await http('GET', `${ready.url}/readyz`)).status).toBe(200);

      // Its tables are in the "scheduler" schema of the runplane_scheduler database on the local server.
      const schemas = await psqlQuery(
        LOCAL_DB,
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'scheduler'",
      );
      expect(schemas).toEqual(['scheduler']);

      scheduler.signalGroup('SIGTERM');
      expect((await scheduler.waitForExit(25_000)).code).toBe(0);
    }, 90_000);
  });
} else {
  describe.skip(`${SUITE} — SKIPPED: NATS or PostgreSQL not reachable`, () => {
    it('uses the local NATS and PostgreSQL and becomes ready', () => {});
  });
}
