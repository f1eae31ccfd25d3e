import fs from 'node:fs';
import path from 'node:path';
import { SKIP_DIR } from './index.js';

/** Where the browser suites find Chromium: `CHROMIUM_PATH`, else Debian's package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, no sandbox (root in CI), and nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The Chromium executable for a browser suite, or null (the suite is skipped, loudly and listed at
 * the end of `npm test`) when it is not installed; with RUNPLANE_REQUIRE_INTEGRATION=1 (CI) a
 * missing Chromium fails the suite instead.
 */
export function requireChromium(suite: string): string | null {
  if (fs.existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const why = `${suite}: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.RUNPLANE_REQUIRE_INTEGRATION === '1')
    throw new Error(`${why} (RUNPLANE_REQUIRE_INTEGRATION=1)`);
  fs.mkdirSync(SKIP_DIR, { recursive: true });
  fs.appendFileSync(path.join(SKIP_DIR, `${process.pid}.txt`), `${why}\n`);
  process.stderr.write(`\n!!! SKIPPED integration suite — ${why}\n\n`);
  return null;
}
