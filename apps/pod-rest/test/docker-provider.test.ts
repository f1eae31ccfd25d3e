import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger, RunplaneConfig } from '@runplane/platform';
import {
  CONTAINERS_CONF,
  nodeImage,
  podmanAvailable,
  startPodman,
  type PodmanService,
} from '@runplane/test-support';
import Docker from 'dockerode';
import path from 'node:path';
import type { LogLine, WorkloadSpec, WorkloadStatus } from '../src/compute/compute-provider.js';
import { containerConfig, LABELS } from '../src/compute/docker/container-config.js';
import {
  DockerComputeProvider,
  type DockerOptions,
} from '../src/compute/docker/docker-compute-provider.js';
import { PodRestSettings } from '../src/settings.js';

describe('docker container config', () => {
  const spec: WorkloadSpec = {
    id: 'w1',
    image: 'ghcr.io/acme/worker:1',
    entrypoint: [],
    command: [],
    env: {
      RUNPOD_WEBHOOK_GET_JOB: 'http://127.0.0.1:8080/v2/ep/job-take/w1?gpu=L4',
      RUNPOD_WEBHOOK_POST_OUTPUT: 'http://127.0.0.1:8080/v2/ep/job-done/w1/$ID',
      OTHER_URL: 'http://127.0.0.1:9000/',
    },
    secretEnv: { RUNPOD_AI_API_KEY: 'key-value' },
    ports: ['8888/http', '22/tcp', '8888/tcp'],
    resources: { vcpuCount: 16, memoryInGb: 2, gpuDeviceIds: ['GPU-0', 'GPU-2'] },
    disks: { containerDiskInGb: 20 },
    labels: { ownerId: 'user_1', endpointId: 'ep', slsVersion: '3' },
  };
  const options = {
    serverId: 's1',
    network: 'bridge',
    hostAlias: 'host.docker.internal',
    addHostGateway: true,
    engineCpus: 4,
    diskLimits: true,
    publishAddress: '',
  };

  it("maps a spec: the image's own command, worker URLs on the host alias, ports, limits, the allocated GPUs as a device request", () => {
    const c = containerConfig(spec, options);
    expect(c).not.toHaveProperty('Cmd');
    expect(c).not.toHaveProperty('Entrypoint');
    expect(c.Env).toEqual([
      'RUNPOD_WEBHOOK_GET_JOB=http://host.docker.internal:8080/v2/ep/job-take/w1?gpu=L4',
      'RUNPOD_WEBHOOK_POST_OUTPUT=http://host.docker.internal:8080/v2/ep/job-done/w1/$ID',
      'OTHER_URL=http://127.0.0.1:9000/',
      'RUNPOD_AI_API_KEY=key-value',
    ]);
    expect(JSON.stringify(c.Labels)).not.toContain('key-value');
    expect(c.ExposedPorts).toEqual({ '8888/tcp': {}, '22/tcp': {} });
    expect(c.HostConfig).toMatchObject({
      NetworkMode: 'bridge',
      PortBindings: { '8888/tcp': [{ HostIp: '', HostPort: '' }] },
      ExtraHosts: ['host.docker.internal:host-gateway'],
      NanoCpus: 4e9, // at most the engine's CPUs
      Memory: 2 * 1024 ** 3,
      DeviceRequests: [
        { Driver: 'nvidia', DeviceIDs: ['GPU-0', 'GPU-2'], Capabilities: [['gpu']] },
      ],
      StorageOpt: { size: '20G' },
    });
    const host = containerConfig(
      { ...spec, resources: {}, command: ['python', '-u', 'handler.py'] },
      { ...options, network: 'host', diskLimits: false },
    );
    expect(host.Cmd).toEqual(['python', '-u', 'handler.py']);
    expect(host.Env).toContain(
      'RUNPOD_WEBHOOK_GET_JOB=http://127.0.0.1:8080/v2/ep/job-take/w1?gpu=L4',
    );
    expect(host).not.toHaveProperty('ExposedPorts');
    expect(host.HostConfig).not.toHaveProperty('DeviceRequests');
    expect(host.HostConfig).not.toHaveProperty('StorageOpt');
  });
});

describe('docker provider settings', () => {
  const settings = (raw: Record<string, string>) =>
    new PodRestSettings(Object.assign(new RunplaneConfig(), { raw }));

  it('is chosen by RUNPLANE_COMPUTE_PROVIDER=docker; bad values stop the start naming the variable', () => {
    const s = settings({ RUNPLANE_COMPUTE_PROVIDER: 'docker' });
    expect(s.computeProvider).toBe('docker');
    expect(s.docker).toMatchObject({
      dockerHost: 'unix:///var/run/docker.sock',
      network: 'bridge',
      publishAddress: '',
      stopGraceSeconds: 10,
    });
    expect(s.docker.serverId).toMatch(/^[0-9a-f]{12}$/);
    // The same data directory is the same server (its containers are adopted after a restart).
    expect(settings({ RUNPLANE_COMPUTE_PROVIDER: 'docker' }).docker.serverId).toBe(
      s.docker.serverId,
    );
    expect(() => settings({ RUNPLANE_COMPUTE_PROVIDER: 'dokcer' })).toThrow(
      /RUNPLANE_COMPUTE_PROVIDER must be "local", "kubernetes" or "docker" \(got "dokcer"\)/,
    );
    const docker = { RUNPLANE_COMPUTE_PROVIDER: 'docker' };
    expect(() => settings({ ...docker, DOCKER_HOST: '/var/run/docker.sock' })).toThrow(
      /DOCKER_HOST must be unix:\/\/\/path\/to\/socket or tcp:\/\/host:port/,
    );
    expect(() => settings({ ...docker, RUNPLANE_DOCKER_SERVER_ID: 'Has Spaces' })).toThrow(
      /RUNPLANE_DOCKER_SERVER_ID must be/,
    );
    // Another provider ignores a DOCKER_HOST set for other tools.
    expect(settings({ DOCKER_HOST: 'ssh://me@build-host' }).computeProvider).toBe('local');
    expect(() => settings({ RUNPLANE_DOCKER_STOP_GRACE_SECONDS: '-1' })).toThrow(
      /RUNPLANE_DOCKER_STOP_GRACE_SECONDS must be an integer/,
    );
  });

  it('an engine that does not answer stops the start saying where it was looked for', async () => {
    const docker = new DockerComputeProvider(
      {
        dockerHost: 'unix:///nonexistent/docker.sock',
        serverId: 's1',
        network: 'bridge',
        publishAddress: '',
      },
      createLogger({ level: 'silent' }),
    );
    await expect(docker.onModuleInit()).rejects.toThrow(
      /the container engine at DOCKER_HOST=unix:\/\/\/nonexistent\/docker\.sock does not answer/,
    );
  });
});

/** The docker provider against a real engine API: podman's Docker-compatible socket. */
const suite = podmanAvailable('docker compute provider (apps/pod-rest)') ? describe : describe.skip;
const POD_APP = path.join(path.dirname(CONTAINERS_CONF), 'pod-app.mjs');

suite('DockerComputeProvider (podman API socket)', () => {
  let service: PodmanService;
  const serverId = `t${Date.now().toString(36)}`;
  let image: string;
  let engine: Docker;
  const providers: DockerComputeProvider[] = [];
  const lines = new Map<string, LogLine[]>();
  const exits = new Map<string, WorkloadStatus>();
  let n = 0;

  const provider = async (o: Partial<DockerOptions> = {}) => {
    const p = new DockerComputeProvider(
      {
        dockerHost: service.dockerHost,
        serverId,
        network: 'bridge',
        publishAddress: '127.0.0.1',
        defaultGraceMs: 2000,
        ...o,
      },
      createLogger({ level: 'silent' }),
    );
    p.onLog((ref, l) => lines.set(ref, [...(lines.get(ref) ?? []), ...l]));
    p.onExit((s) => exits.set(s.ref, s));
    await p.onModuleInit();
    providers.push(p);
    return p;
  };
  const spec = (extra: Partial<WorkloadSpec> = {}): WorkloadSpec => ({
    id: `w${++n}-${serverId}`,
    image,
    entrypoint: [],
    command: ['/usr/local/bin/node', '/app/pod-app.mjs'],
    env: { RUNPOD_POD_ID: `pod${n}` },
    ports: ['8080/http'],
    labels: { ownerId: 'user_1', podId: `pod${n}` },
    ...extra,
  });
  const until = async <T>(check: () => T | undefined | Promise<T | undefined>, what: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const v = await check();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const answer = (port: number, p = '/') =>
    until(
      () =>
        fetch(`http://127.0.0.1:${port}${p}`).then(
          (r) => r.json() as Promise<Record<string, unknown>>,
          () => undefined,
        ),
      `port ${port}${p}`,
    );
  const containerOf = async (ref: string) =>
    (
      await engine.listContainers({
        all: true,
        filters: { label: [`${LABELS.workload}=${ref}`] },
      })
    )[0];

  beforeAll(async () => {
    service = await startPodman();
    image = nodeImage(service, 'runplane-pod-app', { '/app/pod-app.mjs': POD_APP }, [
      '/usr/local/bin/node',
      '/app/pod-app.mjs',
    ]);
    engine = new Docker({ socketPath: service.socket });
  }, 120_000);

  afterAll(async () => {
    try {
      for (const p of providers) await p.releaseAll();
      for (const c of (await engine?.listContainers({
        all: true,
        filters: { label: [`${LABELS.server}=${serverId}`] },
      })) ?? [])
        await engine.getContainer(c.Id).remove({ force: true });
    } finally {
      await service?.stop();
    }
  }, 60_000);

  it('runs the image with its env, labels and published port; stdout and stderr are the logs; a stop is SIGTERM and is recorded', async () => {
    const docker = await provider();
    // containerDiskInGb: podman's overlay cannot limit it; the container runs without the limit.
    const s = spec({
      secretEnv: { API_TOKEN: 'secret-value-123' },
      disks: { containerDiskInGb: 5 },
    });
    const handle = await docker.start(s);
    expect(handle.state).toBe('running');
    const port = handle.portMappings!['8080'];
    expect(port).toBeGreaterThan(0);
    expect(await answer(port)).toEqual({ hello: 'runplane', pod: s.env.RUNPOD_POD_ID });
    expect(await answer(port, '/env?name=API_TOKEN')).toEqual({ API_TOKEN: 'secret-value-123' });

    const c = await containerOf(s.id);
    expect(c.Labels).toMatchObject({
      [LABELS.server]: serverId,
      [LABELS.workload]: s.id,
      [LABELS.pod]: s.labels!.podId,
      [LABELS.owner]: 'user_1',
    });
    expect(JSON.stringify(c.Labels)).not.toContain('secret-value-123');

    await until(
      () => (lines.get(s.id) ?? []).some((l) => l.stream === 'stderr'),
      'the stderr line',
    );
    expect(lines.get(s.id)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ stream: 'stdout', text: 'pod-app listening on 8080' }),
        expect.objectContaining({ stream: 'stderr', text: 'pod-app stderr line' }),
      ]),
    );

    const ended = await docker.stop(s.id, { graceMs: 5000 });
    expect(ended).toMatchObject({ state: 'exited', exitCode: 0, stopRequested: true });
    expect(lines.get(s.id)!.map((l) => l.text)).toContain('pod-app got SIGTERM');
    expect(exits.get(s.id)).toMatchObject({ exitCode: 0 });
    expect(await containerOf(s.id)).toBeUndefined(); // removed once ended
  });

  it('a workload that ignores SIGTERM is killed after the grace; one that exits by itself reports its code', async () => {
    const docker = await provider();
    const stubborn = spec({ env: { IGNORE_SIGTERM: '1' } });
    await docker.start(stubborn);
    await until(() => lines.get(stubborn.id)?.length, 'its first line');
    const killed = await docker.stop(stubborn.id, { graceMs: 1000 });
    expect(killed).toMatchObject({ state: 'exited', exitCode: 137 });

    const crashing = spec();
    const handle = await docker.start(crashing);
    await answer(handle.portMappings!['8080'], '/exit?code=3').catch(() => undefined);
    const exit = await until(() => exits.get(crashing.id), 'the exit');
    expect(exit).toMatchObject({ state: 'exited', exitCode: 3, stopRequested: false });
  });

  it('memoryInGb is enforced: a container over it is killed (exit 137, OOMKilled where the engine says so)', async () => {
    const docker = await provider();
    const s = spec({
      command: [
        '/usr/local/bin/node',
        '-e',
        'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));',
      ],
      resources: { memoryInGb: 0.125 },
    });
    await docker.start(s);
    const exit = await until(() => exits.get(s.id), 'the exit');
    expect(exit).toMatchObject({ exitCode: 137, stopRequested: false });
    // Docker reports State.OOMKilled; podman 4.3 on cgroup v2 leaves it false.
    expect([undefined, 'OOMKilled']).toContain(exit.reason);
  });

  it("the Pod's volume outlives its containers and is deleted with the Pod", async () => {
    const docker = await provider();
    const key = `vol${serverId}`;
    const disks = { volumeInGb: 1, volumeMountPath: '/workspace', persistentKey: key };
    const first = await docker.start(spec({ id: `${key}-1`, disks }));
    expect(await answer(first.portMappings!['8080'], '/count')).toEqual({ count: 1 });
    const volumes = async () =>
      (
        await engine.listVolumes({
          filters: JSON.stringify({ label: [`${LABELS.server}=${serverId}`] }),
        } as object)
      ).Volumes ?? [];
    expect((await volumes()).map((v) => [v.Name, v.Labels[LABELS.pod]])).toEqual([
      [`runplane-${serverId}-${key}-volume`, `pod${n}`],
    ]);
    await docker.stop(`${key}-1`);
    const second = await docker.start(spec({ id: `${key}-2`, disks }));
    expect(await answer(second.portMappings!['8080'], '/count')).toEqual({ count: 2 });
    await docker.stop(`${key}-2`);
    await docker.deleteVolume(key);
    const third = await docker.start(spec({ id: `${key}-3`, disks }));
    expect(await answer(third.portMappings!['8080'], '/count')).toEqual({ count: 1 });
    await docker.stop(`${key}-3`);
    await docker.deleteVolume(key);
    expect(await volumes()).toEqual([]);
  });

  it('a restarted server adopts its running containers and reports those that ended meanwhile; another server ignores them', async () => {
    const before = await provider();
    const running = spec();
    const handle = await before.start(running);
    const ending = spec();
    const ends = await before.start(ending);
    await before.releaseAll(); // the server goes away; its containers stay

    await answer(ends.portMappings!['8080'], '/exit?code=5').catch(() => undefined);
    await until(
      async () => (await containerOf(ending.id))?.State === 'exited',
      'the container to end',
    );

    const other = await provider({ serverId: `${serverId}-other` });
    expect(await other.status(running.id)).toBeNull();
    expect(await other.adoptedWorkloads()).toEqual([]);

    exits.clear();
    const after = await provider();
    expect(await after.adoptedWorkloads()).toContain(running.id);
    expect(await after.status(running.id)).toMatchObject({
      state: 'running',
      portMappings: { '8080': handle.portMappings!['8080'] },
    });
    expect(await until(() => exits.get(ending.id), 'the exit of the ended one')).toMatchObject({
      exitCode: 5,
    });
    // Still the same container, and still watched: its exit is seen by the new server.
    await answer(handle.portMappings!['8080'], '/exit?code=7').catch(() => undefined);
    expect(await until(() => exits.get(running.id), 'the adopted exit')).toMatchObject({
      exitCode: 7,
    });
  });

  it('an image that cannot be pulled ends the start with the reason', async () => {
    const docker = await provider();
    const s = spec({ image: '127.0.0.1:9/runplane/missing:1' });
    const handle = await docker.start(s);
    expect(handle.state).toBe('pending');
    const exit = await until(() => exits.get(s.id), 'the failed pull');
    expect(exit.exitCode).toBeNull();
    expect(exit.reason).toMatch(/^image 127\.0\.0\.1:9\/runplane\/missing:1 could not be pulled: /);
    expect(lines.get(s.id)!.at(-1)!.text).toContain('could not be pulled');
  });
});
