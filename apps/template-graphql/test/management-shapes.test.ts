import { describe, expect, it } from '@jest/globals';
import type { Endpoint, GpuTypeOffer, Pod } from '@runplane/contracts';
import { fromEndpointInput, toGraphqlEndpoint } from '../src/management/endpoint-shape.js';
import { fromDeployInput, toGraphqlPod } from '../src/management/pod-shape.js';
import { CloudTypeEnum } from '../src/management/pod.types.js';

const offer = (id: string, pool: string | null): GpuTypeOffer => ({
  id,
  displayName: id.replace('NVIDIA ', ''),
  manufacturer: 'Nvidia',
  memoryInGb: 24,
  pool,
  securePrice: 1,
  communityPrice: 1,
  secureSpotPrice: 1,
  communitySpotPrice: 1,
  oneWeekPrice: 1,
  oneMonthPrice: 1,
  threeMonthPrice: 1,
  sixMonthPrice: 1,
  maxGpuCount: 16,
});
const GPUS = [
  offer('NVIDIA A100 80GB PCIe', 'AMPERE_80'),
  offer('NVIDIA A100-SXM4-80GB', 'AMPERE_80'),
  offer('NVIDIA L4', 'AMPERE_24'),
  offer('NVIDIA T4', null),
];
const endpoint = (e: Partial<Endpoint>): Endpoint => ({
  id: 'ep1',
  name: 'e',
  templateId: 't',
  userId: 'u',
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  computeType: 'GPU',
  gpuTypeIds: [],
  gpuCount: 1,
  cpuFlavorIds: [],
  vcpuCount: 2,
  dataCenterIds: [],
  env: {},
  executionTimeoutMs: 600000,
  idleTimeout: 5,
  scalerType: 'QUEUE_DELAY',
  scalerValue: 4,
  workersMin: 0,
  workersMax: 3,
  networkVolumeId: null,
  ...e,
});
const badInput = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as { status: number; details: Array<{ path: string }> };
  }
  throw new Error('expected a BAD_USER_INPUT');
};

describe('GraphQL endpoint shape', () => {
  it('gpuIds: a pool stands for its GPU types, types stay types, and a whole pool reads back as the pool', () => {
    const dto = fromEndpointInput(
      { name: 'x', templateId: 't', gpuIds: 'AMPERE_80, NVIDIA L4,nvidia t4' },
      GPUS,
      'create',
    );
    expect(dto.gpuTypeIds).toEqual([
      'NVIDIA A100 80GB PCIe',
      'NVIDIA A100-SXM4-80GB',
      'NVIDIA L4',
      'NVIDIA T4',
    ]);
    expect(toGraphqlEndpoint(endpoint({ gpuTypeIds: dto.gpuTypeIds! }), GPUS).gpuIds).toBe(
      'AMPERE_80,AMPERE_24,NVIDIA T4',
    );
    expect(
      toGraphqlEndpoint(endpoint({ gpuTypeIds: ['NVIDIA A100-SXM4-80GB'] }), GPUS).gpuIds,
    ).toBe('NVIDIA A100-SXM4-80GB');
    const err = badInput(() =>
      fromEndpointInput({ templateId: 't', gpuIds: 'AMPERE_16' }, GPUS, 'create'),
    );
    expect(err).toMatchObject({ status: 400, details: [{ path: 'gpuIds' }] });
  });

  it('"" means none; with id only the fields given change; REST rules apply with GraphQL field names', () => {
    const created = fromEndpointInput(
      { templateId: 't', networkVolumeId: '', locations: '', gpuIds: '' },
      GPUS,
      'create',
    );
    expect(created).toEqual({ templateId: 't', dataCenterIds: [], gpuTypeIds: [] });
    expect(
      fromEndpointInput({ id: 'e', networkVolumeId: '', workersMax: 2 }, GPUS, 'modify'),
    ).toEqual({
      networkVolumeId: null,
      workersMax: 2,
    });
    expect(fromEndpointInput({ id: 'e', locations: 'EU-RO-1,US-TX-3' }, GPUS, 'modify')).toEqual({
      dataCenterIds: ['EU-RO-1', 'US-TX-3'],
    });
    expect(
      fromEndpointInput({ templateId: 't', instanceIds: ['cpu3c-4-8'] }, GPUS, 'create'),
    ).toMatchObject({ computeType: 'CPU', cpuFlavorIds: ['cpu3c'], vcpuCount: 4 });
    expect(
      badInput(() => fromEndpointInput({ templateId: 't', scalerType: 'FAST' }, GPUS, 'create')),
    ).toMatchObject({
      details: [{ path: 'scalerType' }],
    });
    expect(
      badInput(() => fromEndpointInput({ templateId: 't', type: 'LB' }, GPUS, 'create')),
    ).toMatchObject({
      details: [{ path: 'type' }],
    });
  });
});

describe('GraphQL Pod shape', () => {
  it('deploy input becomes REST PodCreateDto: strings "" not given, min sizes per GPU, instance ids, enum cloud types', () => {
    expect(
      fromDeployInput(
        {
          name: 'p',
          imageName: 'img',
          cloudType: CloudTypeEnum.ALL,
          gpuTypeId: 'NVIDIA L4',
          gpuCount: 2,
          minVcpuCount: 9,
          minMemoryInGb: 1,
          dockerArgs: '',
          networkVolumeId: '',
          ports: '8888/http, 22/tcp',
          env: [{ key: 'A', value: '1' }],
          dataCenterId: null,
        },
        'gpu',
      ),
    ).toEqual({
      name: 'p',
      imageName: 'img',
      computeType: 'GPU',
      cloudType: 'SECURE',
      gpuTypeIds: ['NVIDIA L4'],
      gpuCount: 2,
      minVCPUPerGPU: 5,
      minRAMPerGPU: 1,
      ports: ['8888/http', '22/tcp'],
      env: { A: '1' },
    });
    expect(
      fromDeployInput(
        {
          imageName: 'img',
          templateId: 'runpod-ubuntu',
          instanceId: 'cpu5g-4-16',
          cloudType: CloudTypeEnum.COMMUNITY,
        },
        'cpu',
      ),
    ).toEqual({
      imageName: 'img',
      computeType: 'CPU',
      cloudType: 'COMMUNITY',
      cpuFlavorIds: ['cpu5g'],
      vcpuCount: 4,
    });
    // Without an image, runpod-ubuntu is a template name like any other (and unknown here).
    expect(fromDeployInput({ templateId: 'runpod-ubuntu' }, 'cpu').templateId).toBe(
      'runpod-ubuntu',
    );
    expect(
      badInput(() => fromDeployInput({ imageName: 'i', ports: '8888' }, 'gpu')).details,
    ).toEqual([expect.objectContaining({ path: 'ports' })]);
    expect(
      badInput(() => fromDeployInput({ imageName: 'i', gpuCount: 99 }, 'gpu')).details,
    ).toEqual([expect.objectContaining({ path: 'gpuCount' })]);
    expect(
      badInput(() => fromDeployInput({ imageName: 'i', computeType: 'TPU' }, 'gpu')).details,
    ).toEqual([expect.objectContaining({ path: 'computeType' })]);
    expect(
      badInput(() => fromDeployInput({ imageName: 'i', instanceId: 'big' }, 'cpu')).details,
    ).toEqual([expect.objectContaining({ path: 'instanceId' })]);
  });

  it('a REST Pod in GraphQL shape: strings for ports and env, runtime only while it runs', () => {
    const pod = {
      id: 'p1',
      name: 'p',
      imageName: 'img',
      desiredStatus: 'RUNNING',
      costPerHr: 1,
      adjustedCostPerHr: 1,
      containerDiskInGb: 10,
      volumeInGb: 0,
      volumeMountPath: '/workspace',
      gpuCount: 1,
      memoryInGb: 41.4,
      vcpuCount: 6,
      ports: ['8888/http', '22/tcp'],
      portMappings: { 22: 10022 },
      publicIp: '203.0.113.5',
      env: { A: 'b c' },
      dockerStartCmd: ['python', '-c', 'print(1)'],
      interruptible: false,
      lastStartedAt: '2026-01-01T00:00:00.000Z',
    } as unknown as Pod;
    const gql = toGraphqlPod(pod, Date.parse('2026-01-01T00:01:40.000Z'));
    expect(gql).toMatchObject({
      ports: '8888/http,22/tcp',
      env: ['A=b c'],
      dockerArgs: "python -c 'print(1)'",
      memoryInGb: 41,
      podType: 'RESERVED',
      uptimeSeconds: 100,
    });
    expect(gql.runtime!.ports).toEqual([
      { ip: '203.0.113.5', isIpPublic: true, privatePort: 8888, publicPort: 8888, type: 'http' },
      { ip: '203.0.113.5', isIpPublic: true, privatePort: 22, publicPort: 10022, type: 'tcp' },
    ]);
    expect(toGraphqlPod({ ...pod, desiredStatus: 'EXITED' }).runtime).toBeNull();
    expect(toGraphqlPod({ ...pod, publicIp: null }).runtime).toBeNull();
  });
});
