import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '@runplane/platform';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  WorkloadStartError,
  type WorkloadSpec,
  type WorkloadStatus,
} from '../src/compute/compute-provider.js';
import { KubernetesComputeProvider } from '../src/compute/kubernetes/kubernetes-compute-provider.js';
import { FakeKubernetes } from './fake-kubernetes.js';
import { waitFor } from './worker-fixture.js';

const NS = 'workloads';
const OPTIONS = {
  namespace: NS,
  installation: 'runplane_test',
  imagePullSecrets: ['regcred'],
  gpuRuntimeClass: 'nvidia',
  storageClass: 'fast-ssd',
  terminationGraceSeconds: 7,
};

describe('KubernetesComputeProvider against a fake API server', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runplane-k8s-'));
  const api = new FakeKubernetes();
  const providers: KubernetesComputeProvider[] = [];
  let n = 0;

  const newProvider = async (extra: { logPollMs?: number } = {}) => {
    const kc = new KubeConfig();
    kc.loadFromFile(api.kubeconfig(dir));
    const p = new KubernetesComputeProvider(
      kc,
      { ...OPTIONS, ...extra },
      createLogger({ level: 'silent' }),
    );
    providers.push(p);
    await p.onModuleInit();
    return p;
  };
  const workerSpec = (extra: Partial<WorkloadSpec> = {}): WorkloadSpec => ({
    id: `wk${++n}abc`,
    image: 'ghcr.io/acme/worker:1.2',
    entrypoint: ['python', '-u'],
    command: ['handler.py', '--fast'],
    env: { MODEL: 'tiny', RUNPOD_POD_ID: `wk${n}abc`, RUNPOD_ENDPOINT_ID: 'ep1' },
    secretEnv: { HF_TOKEN: 'hf_s3cr3t_value', RUNPOD_AI_API_KEY: 'rpk_worker_key_value' },
    ports: ['8000/http', '22/tcp'],
    resources: {
      vcpuCount: 6,
      memoryInGb: 41,
      gpuCount: 2,
      gpuResource: 'nvidia.com/gpu',
      gpuTypeId: 'NVIDIA L4',
      gpuNodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-L4' },
    },
    disks: { containerDiskInGb: 5, volumeInGb: 10, volumeMountPath: '/workspace' },
    labels: { endpointId: 'ep1', slsVersion: '3', ownerId: 'usr_admin', templateId: 'tpl_abc' },
    ...extra,
  });

  beforeAll(async () => {
    await api.start();
  });
  afterEach(async () => {
    await Promise.all(providers.splice(0).map((p) => p.releaseAll()));
  });
  afterAll(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the Secret, then the Pod (image, command, env with secretKeyRef, ports, resources, GPU, disks, labels), and lets the Pod own the Secret', async () => {
    const k8s = await newProvider();
    const spec = workerSpec();
    const handle = await k8s.start(spec);
    expect(handle).toMatchObject({
      ref: spec.id,
      startedAt: expect.any(Date),
      publicIp: null,
      portMappings: {},
    });

    // The informer lists and watches only this installation's workloads.
    const selector = 'app.kubernetes.io/managed-by=runplane,runplane.io/installation=runplane_test';
    expect(
      api
        .requestsTo('GET', `/api/v1/namespaces/${NS}/pods`)
        .every((r) => r.query.get('labelSelector') === selector),
    ).toBe(true);
    expect(
      api
        .requestsTo('GET', `/api/v1/namespaces/${NS}/pods`)
        .some((r) => r.query.get('watch') === 'true'),
    ).toBe(true);

    const writes = api.requests.filter((r) => r.method !== 'GET');
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /api/v1/namespaces/${NS}/secrets`,
      `POST /api/v1/namespaces/${NS}/pods`,
      `PATCH /api/v1/namespaces/${NS}/secrets/${spec.id}-env`,
    ]);
    const [secretReq, podReq, patchReq] = writes;
    const labels = {
      'app.kubernetes.io/managed-by': 'runplane',
      'app.kubernetes.io/component': 'serverless-worker',
      'runplane.io/installation': 'runplane_test',
      'runplane.io/workload': spec.id,
      'runplane.io/pod-id': spec.id,
      'runplane.io/owner': 'usr_admin',
      'runplane.io/endpoint': 'ep1',
      'runplane.io/endpoint-version': '3',
      'runplane.io/template': 'tpl_abc',
    };
    expect(secretReq.body).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: `${spec.id}-env`, namespace: NS, labels },
      stringData: { HF_TOKEN: 'hf_s3cr3t_value', RUNPOD_AI_API_KEY: 'rpk_worker_key_value' },
    });
    const pod = podReq.body;
    // Secret values never appear in the Pod object.
    expect(JSON.stringify(pod)).not.toContain('hf_s3cr3t_value');
    expect(JSON.stringify(pod)).not.toContain('rpk_worker_key_value');
    expect(pod.metadata).toMatchObject({ name: spec.id, namespace: NS, labels });
    expect(pod.spec).toMatchObject({
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 7,
      automountServiceAccountToken: false,
      runtimeClassName: 'nvidia',
      imagePullSecrets: [{ name: 'regcred' }],
      nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-L4' },
      volumes: [{ name: 'volume', emptyDir: { sizeLimit: '10Gi' } }],
    });
    const quantities = {
      cpu: '6',
      memory: '41984Mi',
      'nvidia.com/gpu': '2',
      'ephemeral-storage': '5Gi',
    };
    expect(pod.spec.containers).toEqual([
      {
        name: 'main',
        image: 'ghcr.io/acme/worker:1.2',
        imagePullPolicy: 'IfNotPresent',
        command: ['python', '-u'],
        args: ['handler.py', '--fast'],
        env: [
          { name: 'MODEL', value: 'tiny' },
          { name: 'RUNPOD_POD_ID', value: spec.id },
          { name: 'RUNPOD_ENDPOINT_ID', value: 'ep1' },
          {
            name: 'HF_TOKEN',
            valueFrom: { secretKeyRef: { name: `${spec.id}-env`, key: 'HF_TOKEN' } },
          },
          {
            name: 'RUNPOD_AI_API_KEY',
            valueFrom: { secretKeyRef: { name: `${spec.id}-env`, key: 'RUNPOD_AI_API_KEY' } },
          },
        ],
        ports: [
          { name: 'http-8000', containerPort: 8000, protocol: 'TCP' },
          { name: 'tcp-22', containerPort: 22, protocol: 'TCP' },
        ],
        resources: { requests: quantities, limits: quantities },
        volumeMounts: [{ name: 'volume', mountPath: '/workspace' }],
      },
    ]);
    // Garbage-collected with its Pod.
    expect(patchReq.headers['content-type']).toBe('application/merge-patch+json');
    expect(patchReq.body).toEqual({
      metadata: {
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Pod',
            name: spec.id,
            uid: api.pods.get(spec.id)!.metadata.uid,
            blockOwnerDeletion: false,
          },
        ],
      },
    });
  });

  it('maps watched status back: waiting reasons, running on a node with its IP and ports, and the exit (once) with code and reason', async () => {
    const k8s = await newProvider();
    const changes: WorkloadStatus[] = [];
    const exits: WorkloadStatus[] = [];
    k8s.onStatus((s) => changes.push(s));
    k8s.onExit((s) => exits.push(s));
    const spec = workerSpec();
    await k8s.start(spec);
    expect(await k8s.status(spec.id)).toMatchObject({ state: 'pending', exitCode: null });

    api.update(spec.id, (p) => {
      p.spec.nodeName = 'gpu-node-7';
      p.status = {
        phase: 'Pending',
        containerStatuses: [
          {
            name: 'main',
            ready: false,
            restartCount: 0,
            image: '',
            imageID: '',
            state: {
              waiting: {
                reason: 'ImagePullBackOff',
                message: 'Back-off pulling image "ghcr.io/acme/worker:1.2"',
              },
            },
          },
        ],
      };
    });
    await waitFor(
      () => changes.find((s) => s.reason?.startsWith('ImagePullBackOff')),
      'the waiting reason',
    );
    expect(changes.at(-1)).toMatchObject({
      ref: spec.id,
      state: 'pending',
      machineId: 'gpu-node-7',
      reason: 'ImagePullBackOff: Back-off pulling image "ghcr.io/acme/worker:1.2"',
    });

    api.run(spec.id, 'gpu-node-7', '10.42.0.17');
    await waitFor(() => changes.find((s) => s.state === 'running'), 'running');
    expect(await k8s.status(spec.id)).toMatchObject({
      state: 'running',
      machineId: 'gpu-node-7',
      publicIp: '10.42.0.17',
      portMappings: { 8000: 8000, 22: 22 },
    });

    const finishedAt = new Date().toISOString();
    for (let i = 0; i < 2; i++) {
      api.update(spec.id, (p) => {
        p.status.phase = 'Failed';
        p.status.containerStatuses[0].state = {
          terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt, startedAt: finishedAt },
        };
      });
    }
    await waitFor(() => exits[0], 'the exit');
    await new Promise((r) => setTimeout(r, 200));
    expect(exits).toHaveLength(1);
    expect(exits[0]).toMatchObject({
      ref: spec.id,
      state: 'exited',
      exitCode: 137,
      reason: 'OOMKilled',
      stopRequested: false,
      exitedAt: new Date(finishedAt),
    });
    // Stopping an ended workload cleans its objects up.
    expect(await k8s.stop(spec.id)).toMatchObject({ state: 'exited', exitCode: 137 });
    expect(api.requestsTo('DELETE', `/api/v1/namespaces/${NS}/pods/${spec.id}`)).toHaveLength(1);
  });

  it('stop deletes the Pod with the grace period and resolves once it is gone; the exit says it was requested', async () => {
    const k8s = await newProvider();
    const exits: WorkloadStatus[] = [];
    k8s.onExit((s) => exits.push(s));
    const spec = workerSpec();
    await k8s.start(spec);
    api.run(spec.id);
    await waitFor(async () => (await k8s.status(spec.id))?.state === 'running', 'running');
    api.deleteDelayMs = 300;
    const ended = await k8s.stop(spec.id, { graceMs: 2500 });
    api.deleteDelayMs = 50;
    expect(ended).toMatchObject({
      ref: spec.id,
      state: 'exited',
      stopRequested: true,
      reason: 'deleted',
    });
    const del = api.requestsTo('DELETE', `/api/v1/namespaces/${NS}/pods/${spec.id}`);
    expect(del).toHaveLength(1);
    expect(del[0].query.get('gracePeriodSeconds')).toBe('3');
    expect(
      api.requestsTo('DELETE', `/api/v1/namespaces/${NS}/secrets/${spec.id}-env`),
    ).toHaveLength(1);
    expect(api.pods.has(spec.id)).toBe(false);
    // Told once its last log lines were read (other tests' ended Pods are reported too: listed at start).
    const mine = () => exits.filter((s) => s.ref === spec.id);
    await waitFor(() => mine().length > 0, 'the exit');
    expect(mine()).toEqual([expect.objectContaining({ ref: spec.id, stopRequested: true })]);
    expect(await k8s.status(spec.id)).toBeNull();
    expect(await k8s.stop(spec.id)).toBeNull();
  });

  it("a Pod's volume is a PersistentVolumeClaim kept across runs until deleteVolume; a network volume mounts the operator's claim", async () => {
    const k8s = await newProvider();
    const first = workerSpec({
      id: 'podvol1-1',
      labels: { podId: 'podvol1', ownerId: 'usr_a' },
      secretEnv: {},
      disks: {
        containerDiskInGb: 50,
        volumeInGb: 20,
        volumeMountPath: '/data',
        persistentKey: 'podvol1',
      },
    });
    await k8s.start(first);
    const claimReq = api.requestsTo('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`);
    expect(claimReq).toHaveLength(1);
    expect(claimReq[0].body).toMatchObject({
      metadata: {
        name: 'podvol1-volume',
        labels: expect.objectContaining({
          'runplane.io/pod-id': 'podvol1',
          'app.kubernetes.io/component': 'pod',
        }),
      },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '20Gi' } },
        storageClassName: 'fast-ssd',
      },
    });
    expect(claimReq[0].body.metadata.labels['runplane.io/workload']).toBeUndefined();
    expect(
      api
        .requestsTo('POST', `/api/v1/namespaces/${NS}/secrets`)
        .filter((r) => r.body.metadata.name === 'podvol1-1-env'),
    ).toEqual([]); // no secrets, no Secret
    const pod = api.pods.get('podvol1-1')!;
    expect(pod.spec.volumes).toEqual([
      { name: 'volume', persistentVolumeClaim: { claimName: 'podvol1-volume' } },
    ]);
    expect(pod.spec.containers[0].volumeMounts).toEqual([{ name: 'volume', mountPath: '/data' }]);
    await k8s.stop('podvol1-1', { graceMs: 1000 });
    // The next run of the same Pod finds its claim (AlreadyExists is fine) and mounts it again.
    await k8s.start({ ...first, id: 'podvol1-2' });
    expect(api.pods.get('podvol1-2')!.spec.volumes).toEqual([
      { name: 'volume', persistentVolumeClaim: { claimName: 'podvol1-volume' } },
    ]);
    await k8s.stop('podvol1-2', { graceMs: 1000 });
    await k8s.deleteVolume('podvol1');
    expect(api.claims.has('podvol1-volume')).toBe(false);
    await k8s.deleteVolume('podvol1'); // already gone: fine

    await k8s.start(
      workerSpec({
        id: 'podnv-1',
        disks: {
          volumeInGb: 20,
          networkVolume: { id: 'nv-models', claimName: 'models', mountPath: '/workspace' },
          persistentKey: 'podnv',
        },
      }),
    );
    expect(api.pods.get('podnv-1')!.spec.volumes).toEqual([
      { name: 'network-volume', persistentVolumeClaim: { claimName: 'models' } },
    ]);
    expect(api.claims.has('podnv-volume')).toBe(false);
  });

  it('a new provider (pod-rest restarted) finds running workloads and reports those that ended meanwhile', async () => {
    const first = await newProvider();
    const a = workerSpec();
    const b = workerSpec();
    await first.start(a);
    await first.start(b);
    api.run(a.id);
    api.run(b.id);
    await first.releaseAll(); // shutdown: workloads keep running
    expect(api.pods.has(a.id) && api.pods.has(b.id)).toBe(true);
    api.update(b.id, (p) => {
      p.status.phase = 'Succeeded';
      p.status.containerStatuses[0].state = {
        terminated: { exitCode: 0, reason: 'Completed', finishedAt: new Date().toISOString() },
      };
    });

    const kc = new KubeConfig();
    kc.loadFromFile(api.kubeconfig(dir));
    const second = new KubernetesComputeProvider(kc, OPTIONS, createLogger({ level: 'silent' }));
    providers.push(second);
    const exits: WorkloadStatus[] = [];
    second.onExit((s) => exits.push(s));
    await second.onModuleInit();
    expect(await second.status(a.id)).toMatchObject({ state: 'running', machineId: 'node-1' });
    const ofThese = () => exits.filter((s) => s.ref === a.id || s.ref === b.id);
    await waitFor(() => ofThese().length > 0, 'the exit of b');
    expect(ofThese()).toEqual([
      expect.objectContaining({ ref: b.id, exitCode: 0, reason: 'Completed' }),
    ]);
  });

  it('keeps watching after the API server ends the watch', async () => {
    const k8s = await newProvider();
    const spec = workerSpec();
    await k8s.start(spec);
    await waitFor(() => api.watchCount() > 0, 'a watch');
    api.dropWatches();
    await waitFor(() => api.watchCount() > 0, 'the watch again');
    api.run(spec.id, 'node-9');
    await waitFor(
      async () => (await k8s.status(spec.id))?.machineId === 'node-9',
      'the change seen by the new watch',
    );
  });

  it('a Pod Kubernetes refuses is a start error (and leaves no Secret); bad names are refused before any request', async () => {
    const k8s = await newProvider();
    api.refuseNextPod = {
      code: 422,
      message: 'Pod "x" is invalid: spec.containers[0].image: Required value',
    };
    const spec = workerSpec();
    await expect(k8s.start(spec)).rejects.toThrow(WorkloadStartError);
    api.refuseNextPod = {
      code: 422,
      message: 'Pod "x" is invalid: spec.containers[0].image: Required value',
    };
    await expect(k8s.start(workerSpec())).rejects.toThrow(
      /Kubernetes refused it \(422\): Pod "x" is invalid/,
    );
    expect(api.secrets.has(`${spec.id}-env`)).toBe(false);
    const before = api.requests.length;
    await expect(k8s.start(workerSpec({ id: 'Not_A_Name' }))).rejects.toThrow(
      /not a valid Kubernetes Pod name/,
    );
    expect(api.requests.length).toBe(before);
  });

  it('describes nodes (capacity, GPU labels, region/zone); unknown or forbidden nodes are null', async () => {
    const k8s = await newProvider();
    api.nodes.set('gpu-node-7', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'gpu-node-7',
        labels: {
          'nvidia.com/gpu.product': 'NVIDIA-L4',
          'nvidia.com/gpu.memory': '23034',
          'topology.kubernetes.io/region': 'eu-west',
          'topology.kubernetes.io/zone': 'eu-west-1a',
        },
      },
      status: {
        capacity: { cpu: '48', memory: '197568880Ki', 'nvidia.com/gpu': '4' },
        nodeInfo: { architecture: 'amd64' },
      },
    });
    expect(await k8s.describeMachine('gpu-node-7')).toEqual({
      id: 'gpu-node-7',
      cpuModel: 'amd64',
      cpuCount: 48,
      threadsPerCore: 1,
      memoryInGb: 188.4,
      gpus: Array(4).fill({ name: 'NVIDIA L4', memoryInGb: 22.5 }),
      location: 'eu-west',
      dataCenterId: 'eu-west-1a',
    });
    expect(await k8s.describeMachine('nowhere')).toBeNull();
    api.forbidNodes = true;
    expect(await k8s.describeMachine('node-forbidden')).toBeNull();
    api.forbidNodes = false;
    expect(k8s.defaultMachineId()).toBe('');
  });

  it('reads logs with their timestamps', async () => {
    const k8s = await newProvider();
    api.logs.set(
      'wk-logs',
      '2026-11-22T10:00:00.000000001Z worker started\n2026-11-22T10:00:01Z job done\n',
    );
    const lines = await k8s.logs('wk-logs', { tail: 2 });
    expect(lines.map((l) => [l.at.toISOString(), l.text])).toEqual([
      ['2026-11-22T10:00:00.000Z', 'worker started'],
      ['2026-11-22T10:00:01.000Z', 'job done'],
    ]);
    expect(
      api.requestsTo('GET', `/api/v1/namespaces/${NS}/pods/wk-logs/log`)[0].query.get('tailLines'),
    ).toBe('2');
    expect(await k8s.logs('missing')).toEqual([]);
  });

  it('tells each log line of a running workload once, read from the log API as it grows, and the last ones before its exit', async () => {
    const k8s = await newProvider({ logPollMs: 20 });
    const spec = workerSpec();
    const events: string[] = [];
    k8s.onLog((ref, lines) => {
      if (ref === spec.id) events.push(...lines.map((l) => `${l.stream} ${l.text}`));
    });
    k8s.onExit((s) => void (s.ref === spec.id && events.push('exit')));
    await k8s.start(spec);
    api.run(spec.id);
    // Two lines in the same nanosecond, then a later one: none told twice, though the fake
    // answers the whole log whatever sinceSeconds says.
    const t0 = Date.now();
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    let log = `${at(0)} one\n${at(0)} two\n`;
    api.logs.set(spec.id, log);
    await waitFor(() => events.length === 2, 'the first lines');
    log += `${at(5)} three\n`;
    api.logs.set(spec.id, log);
    await waitFor(() => events.includes('stdout three'), 'a later line');
    log += `${at(9)} last words\n`;
    api.logs.set(spec.id, log);
    api.update(spec.id, (p) => {
      p.status.phase = 'Succeeded';
      p.status.containerStatuses[0].state = {
        terminated: { exitCode: 0, reason: 'Completed', finishedAt: new Date().toISOString() },
      };
    });
    await waitFor(() => events.includes('exit'), 'the exit');
    expect(events).toEqual([
      'stdout one',
      'stdout two',
      'stdout three',
      'stdout last words',
      'exit',
    ]);
    expect(
      api
        .requestsTo('GET', `/api/v1/namespaces/${NS}/pods/${spec.id}/log`)
        .some((r) => r.query.get('sinceSeconds')),
    ).toBe(true);
  });
});
