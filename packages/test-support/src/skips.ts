import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where skipped integration suites are recorded; `npm test` lists them loudly at the end. */
export const SKIP_DIR = path.join(os.tmpdir(), 'runplane-test-skips');

/**
 * An integration suite cannot run here (`why` names the suite and what is missing): it is skipped
 * loudly and recorded for the summary of `npm test`; with RUNPLANE_REQUIRE_INTEGRATION=1 (CI) it
 * fails instead.
 */
export function skipIntegrationSuite(why: string): void {
  if (process.env.RUNPLANE_REQUIRE_INTEGRATION === '1')
    throw new Error(`${why} (RUNPLANE_REQUIRE_INTEGRATION=1)`);
  fs.mkdirSync(SKIP_DIR, { recursive: true });
  fs.appendFileSync(path.join(SKIP_DIR, `${process.pid}.txt`), `${why}\n`);
  process.stderr.write(`\n!!! SKIPPED integration suite — ${why}\n\n`);
}
