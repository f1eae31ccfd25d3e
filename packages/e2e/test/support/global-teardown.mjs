import fs from 'node:fs';

/** Removes the run's data dir template of global-setup.mjs (kept with RUNPLANE_E2E_KEEP=1). */
export default function globalTeardown() {
  const dir = process.env.RUNPLANE_E2E_DATA_DIR_TEMPLATE;
  if (dir && process.env.RUNPLANE_E2E_KEEP !== '1')
    fs.rmSync(dir, { recursive: true, force: true });
}
