import { afterAll } from '@jest/globals';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { openSqlSession, postgresTarget } from '@runplane/database';
import { lifecycleSuite } from './lifecycle.suite.js';

// The same suite against a real PostgreSQL: SKIP LOCKED claims, raw statements and time
// handling must behave as on the embedded database. A unique database, dropped afterwards.
const database = uniqueName('runplane_sched_test');
let used = false;

lifecycleSuite('PostgreSQL', async () => {
  if (!(await requireService('postgres', 'scheduler lifecycle on PostgreSQL'))) return null;
  used = true;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return { DATABASE_URL_SCHEDULER: url.toString() };
});

afterAll(async () => {
  if (!used) return;
  const admin = await openSqlSession(postgresTarget('scheduler', POSTGRES_URL));
  try {
    await admin.exec(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  } finally {
    await admin.close();
  }
});
