import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CONTAINERS_CONF,
  nodeImage,
  REGISTRY_PASSWORD,
  REGISTRY_USER,
  podmanAvailable,
  startPodman,
  type PodmanService,
} from '@runplane/test-support';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ADMIN_KEY,
  eventually,
  http,
  killAll,
  recordTiming,
  removeTempDir,
  REPO_ROOT,
  startRunplane,
  tempDir,
  type RunplaneProcess,
} from './support/runplane-process.js';

const SUPPORT = path.dirname(fileURLToPath(import.meta.url));
const suite = podmanAvailable('docker provider (e2e)') ? describe : describe.skip;

/**
 * The docker compute provider end to end: one standalone server (the real CLI) with
 * RUNPLANE_COMPUTE_PROVIDER=docker on podman's Docker-compatible API. The test image is made
 * without a registry (node, its libraries, the probe worker with @runplane/worker-sdk, and a small
 * HTTP app) and its CMD is the protocol worker.
 */
suite('docker compute provider (standalone, podman API)', () => {
  let service: PodmanService;
  const workDir = tempDir('docker');
  const dataDir = path.join(workDir, 'data');
  const serverId = `e2e${randomBytes(4).toString('hex')}`;
  const suiteStart = Date.now();
  let image: string;
  let server: RunplaneProcess;
  let url: string;
  let engine: Engine;

  const call = (method: string, route: string, body?: unknown) =>
    http(method, `${url}${route}`, { key: `Bearer ${ADMIN_KEY}`, body });
  const start = async (name: string) => {
    server = startRunplane(
      name,
      ['start'],
      {
        RUNPLANE_DATA_DIR: dataDir,
        RUNPLANE_API_KEY: ADMIN_KEY,
        RUNPLANE_COMPUTE_PROVIDER: 'docker',
        DOCKER_HOST: service.dockerHost,
        RUNPLANE_DOCKER_SERVER_ID: serverId,
        RUNPLANE_DOCKER_PUBLISH_ADDRESS: '127.0.0.1',
        RUNPLANE_DOCKER_STOP_GRACE_SECONDS: '3',
        // Containers on the bridge reach the server through the host's gateway address.
        HOST: '0.0.0.0',
      },
      workDir,
    );
    url = (await server.waitForReady(90_000)).url.replace('0.0.0.0', '127.0.0.1');
  };
  const pod = async (id: string) => (await call('GET', `/v1/pods/${id}`)).body;
  const podWhen = (id: string, what: string, ok: (p: any) => boolean) =>
    eventually(async () => {
      const p = await pod(id);
      return ok(p) && p;
    }, `pod ${id}: ${what}`);
  const answer = (port: number, p = '/') =>
    eventually(
      () =>
        fetch(`http://127.0.0.1:${port}${p}`, { signal: AbortSignal.timeout(5000) }).then(
          (r) => r.json() as Promise<any>,
          () => undefined,
        ),
      `port ${port}${p}`,
    );
  const runsync = async (endpointId: string, input: unknown) => {
    const res = await call('POST', `/v2/${endpointId}/runsync`, { input });
    expect(res.status).toBe(200);
    if (res.body.status === 'COMPLETED') return res.body;
    return eventually(
      async () => {
        const s = (await call('GET', `/v2/${endpointId}/status/${res.body.id}`)).body;
        return ['COMPLETED', 'FAILED'].includes(s.status) && s;
      },
      'the job to finish',
      90_000,
    );
  };
  const createPod = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/pods', {
      computeType: 'CPU',
      vcpuCount: 1,
      imageName: image,
      dockerStartCmd: ['/usr/local/bin/node', '/app/pod-app.mjs'],
      ports: ['8080/http'],
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  beforeAll(async () => {
    service = await startPodman();
    image = nodeImage(
      service,
      'runplane-e2e-worker',
      {
        '/app/worker.mjs': path.join(SUPPORT, 'support/probe-worker.mjs'),
        '/app/pod-app.mjs': path.join(path.dirname(CONTAINERS_CONF), 'pod-app.mjs'),
        '/app/node_modules/@runplane/worker-sdk/package.json': path.join(
          REPO_ROOT,
          'packages/worker-sdk/package.json',
        ),
        '/app/node_modules/@runplane/worker-sdk/dist': path.join(
          REPO_ROOT,
          'packages/worker-sdk/dist',
        ),
        // The SDK's one dependency (it has none of its own).
        '/app/node_modules/undici': path.join(REPO_ROOT, 'node_modules/undici'),
      },
      ['/usr/local/bin/node', '/app/worker.mjs'],
    );
    engine = new Engine(service.socket);
    await start('docker-1');
  }, 180_000);

  afterAll(async () => {
    if (!service) return;
    try {
      await killAll();
      for (const label of [
        `io.runplane.server=${serverId}`,
        `io.runplane.server=${serverId}-other`,
      ])
        for (const c of (await engine?.containers(label)) ?? []) await engine.remove(c.Id);
      // The Pods' volumes (the Pods are not deleted here) and the pulled private image.
      service.podman([
        'volume',
        'prune',
        '--force',
        '--filter',
        `label=io.runplane.server=${serverId}`,
      ]);
      if (service.registry)
        service.podman(['rmi', '--ignore', `${service.registry}/private/app:${serverId}`]);
    } finally {
      await service.stop();
      removeTempDir(workDir);
    }
    recordTiming(`docker provider e2e suite: ${((Date.now() - suiteStart) / 1000).toFixed(1)} s`);
  }, 60_000);

  let endpointId: string;
  let templateId: string;

  it('a serverless worker image whose CMD is a protocol worker completes /runsync jobs', async () => {
    const template = await call('POST', '/v1/templates', {
      name: `e2e-docker-${serverId}`,
      imageName: image,
      isServerless: true,
      env: { VERSION: '1' },
    });
    expect(template.status).toBe(200);
    templateId = template.body.id;
    const endpoint = await call('POST', '/v1/endpoints', {
      name: 'e2e-docker',
      templateId,
      computeType: 'CPU',
      workersMin: 0,
      workersMax: 1,
    });
    expect(endpoint.status).toBe(200);
    endpointId = endpoint.body.id;

    const done = await runsync(endpointId, { env: ['VERSION', 'RUNPOD_POD_ID'] });
    expect(done.status).toBe('COMPLETED');
    expect(done.output.VERSION).toBe('1');
    const [worker] = await engine.containers(`io.runplane.endpoint=${endpointId}`);
    expect(worker.Labels).toMatchObject({
      'io.runplane.server': serverId,
      'io.runplane.pod': done.output.RUNPOD_POD_ID,
      'io.runplane.workload': done.output.RUNPOD_POD_ID,
    });
    expect(worker.Image).toBe(image);
  });

  it('a template update rolls out new worker containers', async () => {
    const [before] = await engine.containers(`io.runplane.endpoint=${endpointId}`);
    const updated = await call('PATCH', `/v1/templates/${templateId}`, { env: { VERSION: '2' } });
    expect(updated.status).toBe(200);
    const done = await eventually(
      async () => {
        const d = await runsync(endpointId, { env: ['VERSION'] });
        return d.output?.VERSION === '2' && d;
      },
      'a job served by the new version',
      90_000,
    );
    expect(done.status).toBe('COMPLETED');
    const now = await eventually(async () => {
      const list = await engine.containers(`io.runplane.endpoint=${endpointId}`);
      return list.every((c) => c.Id !== before.Id) && list;
    }, 'the old worker container to be gone');
    expect(now.length).toBeGreaterThan(0);
  });

  let podId: string;

  it('a Pod from an image publishes its port; stop, start and crashes are recorded on the Pod; its volume is kept', async () => {
    podId = await createPod({ volumeInGb: 1, volumeMountPath: '/workspace' });
    let p = await podWhen(podId, 'a published port', (x) => x.portMappings?.['8080'] > 0);
    expect(p.desiredStatus).toBe('RUNNING');
    expect(await answer(p.portMappings['8080'])).toEqual({ hello: 'runplane', pod: podId });
    expect(await answer(p.portMappings['8080'], '/count')).toEqual({ count: 1 });

    const stopped = await call('POST', `/v1/pods/${podId}/stop`);
    expect(stopped.body.desiredStatus).toBe('EXITED');
    expect(stopped.body.lastStatusChange).toMatch(/^Stopped \(exit code 0\)/);
    expect(await engine.containers(`io.runplane.pod=${podId}`)).toEqual([]);

    await call('POST', `/v1/pods/${podId}/start`);
    p = await podWhen(podId, 'running again', (x) => x.portMappings?.['8080'] > 0);
    expect(await answer(p.portMappings['8080'], '/count')).toEqual({ count: 2 }); // same volume

    await answer(p.portMappings['8080'], '/exit?code=3').catch(() => undefined);
    p = await podWhen(podId, 'its crash', (x) => x.desiredStatus === 'EXITED');
    expect(p.lastStatusChange).toMatch(/^Exited \(exit code 3\)/);

    await call('POST', `/v1/pods/${podId}/start`);
    await podWhen(podId, 'running again', (x) => x.portMappings?.['8080'] > 0);
    const [container] = await engine.containers(`io.runplane.pod=${podId}`);
    await engine.kill(container.Id);
    p = await podWhen(podId, 'its kill', (x) => x.desiredStatus === 'EXITED');
    expect(p.lastStatusChange).toMatch(/^Exited \(exit code 137\)/);

    const logs = (await call('GET', `/v1/pods/${podId}/logs`)).body as Array<{
      stream: string;
      text: string;
    }>;
    expect(logs).toContainEqual(
      expect.objectContaining({ stream: 'stderr', text: 'pod-app stderr line' }),
    );
    expect(logs).toContainEqual(
      expect.objectContaining({ stream: 'stdout', text: 'pod-app exiting with 3' }),
    );
    await call('POST', `/v1/pods/${podId}/start`);
    await podWhen(podId, 'running again', (x) => x.portMappings?.['8080'] > 0);
  });

  it('a server restarted after a crash adopts the running container (Pod still RUNNING) and removes an orphan, leaving other servers alone', async () => {
    const [running] = await engine.containers(`io.runplane.pod=${podId}`);
    // What a crash in the middle of a start leaves behind, and a container of another server.
    const orphan = await engine.run(image, {
      'io.runplane.server': serverId,
      'io.runplane.workload': 'orphan-1',
    });
    const foreign = await engine.run(image, {
      'io.runplane.server': `${serverId}-other`,
      'io.runplane.workload': 'foreign-1',
    });
    // A crash: nothing of the server runs its shutdown.
    server.signalGroup('SIGKILL');
    await server.waitForExit(30_000);
    await start('docker-2');

    const p = await pod(podId);
    expect(p.desiredStatus).toBe('RUNNING');
    expect((await engine.containers(`io.runplane.pod=${podId}`)).map((c) => c.Id)).toEqual([
      running.Id,
    ]);
    expect(await answer(p.portMappings['8080'])).toEqual({ hello: 'runplane', pod: podId });
    await eventually(
      async () =>
        !(await engine.containers(`io.runplane.server=${serverId}`)).some((c) => c.Id === orphan),
      'the orphan to be removed',
    );
    expect(
      (await engine.containers(`io.runplane.server=${serverId}-other`)).map((c) => c.Id),
    ).toEqual([foreign]);
    // Still watched: its exit is recorded by the new server.
    await answer(p.portMappings['8080'], '/exit?code=4').catch(() => undefined);
    const ended = await podWhen(podId, 'its exit', (x) => x.desiredStatus === 'EXITED');
    expect(ended.lastStatusChange).toMatch(/^Exited \(exit code 4\)/);
  });

  it('a private image is pulled with the registry auth; without it or with a wrong password the Pod says why', async () => {
    if (!service.registry) {
      if (process.env.RUNPLANE_REQUIRE_INTEGRATION === '1')
        throw new Error('docker-registry is not installed (RUNPLANE_REQUIRE_INTEGRATION=1)');
      process.stderr.write(
        '\n!!! SKIPPED private pull test — docker-registry is not installed\n\n',
      );
      return;
    }
    const privateImage = `${service.registry}/private/app:${serverId}`;
    service.podman([
      'push',
      '--quiet',
      '--creds',
      `${REGISTRY_USER}:${REGISTRY_PASSWORD}`,
      image,
      `docker://${privateImage}`,
    ]);
    const auth = async (name: string, password: string) => {
      const res = await call('POST', '/v1/containerregistryauth', {
        name: `${name}-${serverId}`,
        username: REGISTRY_USER,
        password,
      });
      expect(res.status).toBe(200);
      return res.body.id as string;
    };
    const good = await auth('good', REGISTRY_PASSWORD);
    const bad = await auth('bad', 'not-the-password');

    for (const containerRegistryAuthId of [undefined, bad]) {
      const id = await createPod({ imageName: privateImage, containerRegistryAuthId });
      const p = await podWhen(id, 'its failed pull', (x) => x.desiredStatus === 'EXITED');
      expect(p.lastStatusChange).toMatch(
        new RegExp(`could not be pulled: .*(unauthorized|authentication required)`, 'i'),
      );
    }

    const id = await createPod({ imageName: privateImage, containerRegistryAuthId: good });
    const p = await podWhen(id, 'a published port', (x) => x.portMappings?.['8080'] > 0);
    expect(await answer(p.portMappings['8080'])).toEqual({ hello: 'runplane', pod: id });
    const logs = (await call('GET', `/v1/pods/${id}/logs`)).body as Array<{ text: string }>;
    expect(logs.some((l) => l.text.startsWith(`[runplane] pull ${privateImage}`))).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(REGISTRY_PASSWORD);
    expect(server.log).not.toContain(REGISTRY_PASSWORD);

    // Deleted: its container and its volume go with it.
    const volume = `runplane-${serverId}-${id}-volume`;
    expect(service.podman(['volume', 'ls', '--quiet'])).toContain(volume);
    expect((await call('DELETE', `/v1/pods/${id}`)).status).toBe(204);
    expect(await engine.containers(`io.runplane.pod=${id}`)).toEqual([]);
    expect(service.podman(['volume', 'ls', '--quiet'])).not.toContain(volume);
  });

  it('a worker whose image cannot be pulled is counted unhealthy and its endpoint backs off', async () => {
    const template = await call('POST', '/v1/templates', {
      name: `e2e-docker-missing-${serverId}`,
      imageName: '127.0.0.1:9/runplane/missing:1',
      isServerless: true,
    });
    const endpoint = await call('POST', '/v1/endpoints', {
      name: 'e2e-docker-missing',
      templateId: template.body.id,
      computeType: 'CPU',
      workersMin: 1,
      workersMax: 1,
    });
    const id = endpoint.body.id as string;
    await call('POST', `/v2/${id}/run`, { input: {} });
    const health = await eventually(async () => {
      const h = (await call('GET', `/v2/${id}/health`)).body;
      return h.workers?.unhealthy >= 1 && h;
    }, 'an unhealthy worker');
    expect(health.workers.unhealthy).toBeGreaterThanOrEqual(1);
    // The reason carries the failed worker's last log lines once they are stored.
    const waiting = await eventually(async () => {
      const e = (await call('GET', `/v1/endpoints/${id}`)).body;
      const backoff = e.waiting?.reasons?.find((r: { code: string }) => r.code === 'START_BACKOFF');
      return /could not be pulled/.test(JSON.stringify(backoff)) && backoff;
    }, 'START_BACKOFF with the pull failure');
    expect(waiting.failures).toBeGreaterThanOrEqual(1);
    const workers = (await call('GET', `/v1/pods?endpointId=${id}`)).body as any[];
    expect(workers.some((w) => /could not be pulled/.test(w.lastStatusChange))).toBe(true);
    // Backing off: not a tight loop of starts.
    expect(workers.length).toBeLessThanOrEqual(3);
  });
});

/** The few engine calls the test makes itself (over the same socket, with fetch). */
class Engine {
  constructor(private readonly socket: string) {}

  private async request(method: string, route: string, body?: unknown): Promise<any> {
    const { request } = await import('node:http');
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socket,
          path: `/v1.41${route}`,
          method,
          headers: body ? { 'content-type': 'application/json' } : {},
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            if ((res.statusCode ?? 500) >= 400)
              reject(new Error(`${method} ${route}: ${res.statusCode} ${text}`));
            else resolve(text ? JSON.parse(text) : undefined);
          });
        },
      );
      req.on('error', reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  }

  /** Running containers with the label (`key=value`). */
  containers(
    label: string,
  ): Promise<Array<{ Id: string; Image: string; Labels: Record<string, string> }>> {
    return this.request(
      'GET',
      `/containers/json?filters=${encodeURIComponent(JSON.stringify({ label: [label] }))}`,
    );
  }

  async run(image: string, labels: Record<string, string>): Promise<string> {
    const { Id } = await this.request('POST', '/containers/create', {
      Image: image,
      Cmd: ['/usr/local/bin/node', '/app/pod-app.mjs'],
      Labels: labels,
    });
    await this.request('POST', `/containers/${Id}/start`);
    return Id;
  }

  kill(id: string): Promise<void> {
    return this.request('POST', `/containers/${id}/kill`);
  }

  remove(id: string): Promise<void> {
    return this.request('DELETE', `/containers/${id}?force=true`).catch(() => undefined);
  }
}
