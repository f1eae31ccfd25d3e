import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Once per Jest run: a directory for the run's initialised data dir (made by the first standalone
 * server that needs it; see DATA_DIR_TEMPLATE_VAR in runplane-process.ts). Plain JavaScript: Jest
 * loads its global setup outside the ESM test runtime. The suites get the path through the
 * environment; global-teardown.mjs removes it.
 */
export default function globalSetup() {
  process.env.RUNPLANE_E2E_DATA_DIR_TEMPLATE = fs.mkdtempSync(
    path.join(os.tmpdir(), 'runplane-e2e-data-template-'),
  );
}
