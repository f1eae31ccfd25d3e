import net from 'node:net';
import { skipIntegrationSuite } from './skips.js';

export { SKIP_DIR, skipIntegrationSuite } from './skips.js';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const POSTGRES_URL =
  process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** True when a TCP connection to the URL's host and port opens within `timeoutMs`. */
export function reachable(url: string, defaultPort: number, timeoutMs = 1500): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port) || defaultPort });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Decides whether an integration suite can run against a real service. When the service is not
 * reachable the suite is skipped and says so loudly (and is listed again at the end of
 * `npm test`); with RUNPLANE_REQUIRE_INTEGRATION=1 (set by CI) it fails instead.
 */
export async function requireService(
  service: 'nats' | 'postgres',
  suite: string,
): Promise<boolean> {
  const url = service === 'nats' ? NATS_URL : POSTGRES_URL;
  const ok = await reachable(url, service === 'nats' ? 4222 : 5432);
  if (ok) return true;
  const why = `${suite}: ${service} at ${redact(url)} is not reachable`;
  skipIntegrationSuite(why);
  return false;
}

/** A short random name for isolating test resources (NATS namespaces, databases, schemas). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}

export * from './podman.js';
export * from './chromium.js';
