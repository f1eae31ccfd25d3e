import { afterAll } from '@jest/globals';
import { scratchDatabase } from '@runplane/platform';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { lifecycleSuite } from './lifecycle.suite.js';

// The same suite against a real PostgreSQL: SKIP LOCKED claims, raw statements and time
// handling must behave as on the embedded database. A unique database, dropped afterwards.
const database = scratchDatabase('scheduler', POSTGRES_URL, uniqueName('runplane_sched_test'));
let used = false;

lifecycleSuite('PostgreSQL', async () => {
  if (!(await requireService('postgres', 'scheduler lifecycle on PostgreSQL'))) return null;
  used = true;
  return { DATABASE_URL_SCHEDULER: database.url };
});

afterAll(async () => {
  if (used) await database.drop();
});
