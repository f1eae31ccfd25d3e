import type { ServiceName } from '@runplane/contracts';
import { openSqlSession, postgresTarget } from '@runplane/database';

export interface ScratchDatabase {
  /** For the service's `DATABASE_URL_*`: the service creates the database when it starts. */
  url: string;
  /** Drops the database (connections and all); for afterAll, whether or not it was created. */
  drop(): Promise<void>;
}

/**
 * A PostgreSQL database of one test file's own, named `name` (make it unique), on the server of
 * `serverUrl`: for tests that run a service in cluster mode's storage beside other test files.
 */
export function scratchDatabase(
  service: ServiceName,
  serverUrl: string,
  name: string,
): ScratchDatabase {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const admin = await openSqlSession(postgresTarget(service, serverUrl));
      try {
        await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.close();
      }
    },
  };
}
