import { randomBytes } from 'node:crypto';
import { startRunplane, type RunningServer } from '../bootstrap/start.js';
import type { ServiceDescriptor } from '../bootstrap/service-descriptor.js';

export interface TestServer extends RunningServer {
  /** Admin key of the server (the vault must be among the services for HTTP calls). */
  apiKey: string;
  /** `fetch` against the server with the admin key; JSON bodies in and out. */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read untyped JSON answers
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

/**
 * Runs the given services through the real bootstrap (same modules, same bus transport, same
 * filters) on a free port, with the in-process bus and an in-memory embedded database. For tests
 * that drive a service through its public interface; `stop()` it in afterAll.
 */
export async function startTestServer(
  services: ServiceDescriptor[],
  env: Record<string, string> = {},
): Promise<TestServer> {
  const apiKey = `test-${randomBytes(16).toString('hex')}`;
  const server = await startRunplane({
    services,
    allInOne: true,
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      RUNPLANE_DATA_DIR: 'memory',
      RUNPLANE_API_KEY: apiKey,
      LOG_LEVEL: 'silent',
      ...env,
    },
  });
  const call: TestServer['call'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return { ...server, apiKey, call };
}
