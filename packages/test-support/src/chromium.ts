import fs from 'node:fs';
import { skipIntegrationSuite } from './skips.js';

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
  skipIntegrationSuite(why);
  return null;
}
