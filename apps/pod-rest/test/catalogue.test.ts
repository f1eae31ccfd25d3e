import { afterAll, describe, expect, it } from '@jest/globals';
import { RunplaneConfig, createLogger } from '@runplane/platform';
import { chmodSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { CatalogueService, loadCatalogueFile } from '../src/catalogue/catalogue.service.js';
import type { Catalogue } from '../src/catalogue/catalogue.schema.js';
import { machineView } from '../src/catalogue/machine-view.js';
import {
  adjustedCost,
  findGpuType,
  gpuObject,
  plansFor,
  podCost,
  sizePod,
  type PricedPod,
} from '../src/catalogue/pricing.js';
import {
  dataCenterIds,
  dataCenterOffers,
  gpuTypeOffers,
  lowestPrice,
} from '../src/catalogue/offers.js';
import { HostMachine, parseNvidiaSmi, parseThreadsPerCore } from '../src/compute/host-machine.js';
import { DEFAULT_CATALOGUE_FILE, PodRestSettings } from '../src/settings.js';

const dir = mkdtempSync(path.join(tmpdir(), 'runplane-catalogue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, doc: unknown) => {
  const file = path.join(dir, name);
  writeFileSync(file, typeof doc === 'string' ? doc : stringify(doc));
  return file;
};
const minimal = (extra: Record<string, unknown> = {}) => ({
  version: 1,
  defaults: { gpuTypeId: 'GPU-A', cpuFlavorId: 'cpuX' },
  gpuTypes: [
    {
      id: 'GPU-A',
      displayName: 'A',
      ramPerGpuInGb: 10,
      vcpuPerGpu: 4,
      aliases: ['Vendor A 24GB'],
      prices: {
        secure: 1,
        community: 0.5,
        secureSpot: 0.4,
        communitySpot: 0.2,
        oneWeek: 0.9,
        oneMonth: 0.8,
        threeMonth: 0.7,
        sixMonth: 0.6,
      },
    },
  ],
  cpuFlavors: [{ id: 'cpuX', displayName: 'X', pricePerVcpu: 0.05, ramPerVcpuInGb: 3 }],
  ...extra,
});
const pod = (p: Partial<PricedPod> = {}): PricedPod => ({
  id: 'pod1',
  ownerId: 'usr_a',
  computeType: 'GPU',
  gpuTypeId: 'GPU-A',
  gpuCount: 2,
  cpuFlavorId: null,
  vcpuCount: 8,
  cloudType: 'SECURE',
  interruptible: false,
  ...p,
});

describe('catalogue file', () => {
  it('ships a valid default catalogue', () => {
    const c = loadCatalogueFile(DEFAULT_CATALOGUE_FILE);
    expect(findGpuType(c, c.defaults.gpuTypeId)).toBeDefined();
    expect(c.cpuFlavors.map((f) => f.id)).toEqual(expect.arrayContaining(['cpu3c', 'cpu5g']));
  });

  it('names every problem of an invalid file with its path', () => {
    const bad = minimal({
      defaults: { gpuTypeId: 'nope', cpuFlavorId: 'cpuX' },
      savingsPlans: [
        {
          id: 'sp',
          userId: 'u',
          gpuTypeId: 'GPU-B',
          costPerHr: 1,
          startTime: '2026-02-01T00:00:00Z',
          endTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    (bad.gpuTypes[0].prices as Record<string, unknown>).secure = -1;
    bad.gpuTypes.push({ ...bad.gpuTypes[0], prices: { ...bad.gpuTypes[0].prices, secure: 1 } });
    let message = '';
    try {
      loadCatalogueFile(write('bad.yaml', bad));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('gpuTypes[0].prices.secure: secure must not be less than 0');
    bad.gpuTypes[0].prices.secure = 1;
    try {
      loadCatalogueFile(write('bad2.yaml', bad));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('gpuTypes[1].id: "GPU-A" is listed twice');
    expect(message).toContain('defaults.gpuTypeId: "nope" is not one of gpuTypes');
    expect(message).toContain('savingsPlans[0].gpuTypeId: "GPU-B" is not one of gpuTypes');
    expect(message).toContain('savingsPlans[0].endTime must be after startTime');
    expect(() =>
      loadCatalogueFile(write('syntax.yaml', 'version: 1\ngpuTypes: [unclosed\n')),
    ).toThrow(/is not valid YAML/);
    expect(() => loadCatalogueFile(path.join(dir, 'missing.yaml'))).toThrow(
      /cannot read the catalogue/,
    );
    expect(() => loadCatalogueFile(write('list.yaml', '- 1\n'))).toThrow(/must be a mapping/);
  });

  it('stops pod-rest at start when invalid; picks up valid edits while running and keeps the old one on a bad edit', () => {
    const file = write('live.yaml', minimal());
    const settings = (f: string) =>
      new PodRestSettings(
        Object.assign(new RunplaneConfig(), {
          raw: { RUNPLANE_CATALOGUE_FILE: f, RUNPLANE_CATALOGUE_RECHECK_MS: '0' },
        }),
      );
    const logger = createLogger({ level: 'silent' });
    expect(
      () => new CatalogueService(settings(write('broken.yaml', { version: 2 })), logger),
    ).toThrow(/version must be 1/);
    const service = new CatalogueService(settings(file), logger);
    expect(service.get().cpuFlavors[0].pricePerVcpu).toBe(0.05);
    const edited = minimal();
    edited.cpuFlavors[0].pricePerVcpu = 0.07;
    writeFileSync(file, stringify(edited));
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(service.get().cpuFlavors[0].pricePerVcpu).toBe(0.07);
    writeFileSync(file, 'version: [');
    utimesSync(file, new Date(), new Date(Date.now() + 10_000));
    expect(service.get().cpuFlavors[0].pricePerVcpu).toBe(0.07);
  });
});

describe('pricing', () => {
  const c = loadCatalogueFileFrom(
    minimal({
      savingsPlans: [
        {
          id: 'sp-old',
          userId: 'usr_a',
          gpuTypeId: 'GPU-A',
          costPerHr: 0.3,
          startTime: '2020-01-01T00:00:00Z',
          endTime: '2021-01-01T00:00:00Z',
        },
        {
          id: 'sp-now',
          userId: 'usr_a',
          gpuTypeId: 'GPU-A',
          costPerHr: 0.75,
          startTime: '2026-01-01T00:00:00Z',
          endTime: '2027-01-01T00:00:00Z',
        },
        {
          id: 'sp-cheaper-one-pod',
          userId: 'usr_a',
          podId: 'pod2',
          gpuTypeId: 'GPU-A',
          costPerHr: 0.6,
          startTime: '2026-01-01T00:00:00Z',
          endTime: '2027-01-01T00:00:00Z',
        },
        {
          id: 'sp-later',
          userId: 'usr_a',
          gpuTypeId: 'GPU-A',
          costPerHr: 0.1,
          startTime: '2026-12-01T00:00:00Z',
          endTime: '2027-01-01T00:00:00Z',
        },
        {
          id: 'sp-other-user',
          userId: 'usr_b',
          gpuTypeId: 'GPU-A',
          costPerHr: 0.1,
          startTime: '2026-01-01T00:00:00Z',
          endTime: '2027-01-01T00:00:00Z',
        },
      ],
    }),
  );
  const now = new Date('2026-06-01T00:00:00Z');

  it('sizes Pods: GPU by default, the first offered GPU type or CPU flavor, RAM and vCPUs per GPU; unknown choices are 400s', () => {
    expect(sizePod(c, {})).toEqual({
      computeType: 'GPU',
      gpuTypeId: 'GPU-A',
      gpuCount: 1,
      cpuFlavorId: null,
      vcpuCount: 4,
      memoryInGb: 10,
    });
    expect(
      sizePod(c, { gpuTypeIds: ['unknown', 'vendor a 24gb'], gpuCount: 3, minRAMPerGPU: 16 }),
    ).toMatchObject({ gpuTypeId: 'GPU-A', gpuCount: 3, vcpuCount: 12, memoryInGb: 48 });
    expect(sizePod(c, { computeType: 'CPU', vcpuCount: 4 })).toEqual({
      computeType: 'CPU',
      gpuTypeId: null,
      gpuCount: 0,
      cpuFlavorId: 'cpuX',
      vcpuCount: 4,
      memoryInGb: 12,
    });
    expect(() => sizePod(c, { gpuTypeIds: ['NVIDIA B200'] })).toThrow(
      expect.objectContaining({
        status: 400,
        details: [{ path: 'gpuTypeIds', message: 'no offered GPU type' }],
      }),
    );
    expect(() => sizePod(c, { computeType: 'CPU', cpuFlavorIds: ['cpu9z'] })).toThrow(
      expect.objectContaining({ status: 400 }),
    );
    // Serverless workers: an endpoint may name a GPU the catalogue lacks; kept, priced 0.
    expect(sizePod(c, { gpuTypeIds: ['NVIDIA B200'] }, false)).toMatchObject({
      gpuTypeId: 'NVIDIA B200',
      gpuCount: 1,
    });
    expect(podCost(c, pod({ gpuTypeId: 'NVIDIA B200', gpuCount: 1 }))).toBe(0);
  });

  it('costPerHr: GPUs × the price of the cloud type (spot when interruptible), or vCPUs × the flavor price', () => {
    expect(podCost(c, pod())).toBe(2);
    expect(podCost(c, pod({ cloudType: 'COMMUNITY' }))).toBe(1);
    expect(podCost(c, pod({ interruptible: true }))).toBe(0.8);
    expect(podCost(c, pod({ interruptible: true, cloudType: 'COMMUNITY' }))).toBe(0.4);
    expect(
      podCost(
        c,
        pod({
          computeType: 'CPU',
          gpuTypeId: null,
          gpuCount: 0,
          cpuFlavorId: 'cpuX',
          vcpuCount: 3,
        }),
      ),
    ).toBe(0.15);
    expect(gpuObject(c, 'GPU-A', 2)).toEqual({
      id: 'GPU-A',
      count: 2,
      displayName: 'A',
      securePrice: 1,
      communityPrice: 0.5,
      oneMonthPrice: 0.8,
      threeMonthPrice: 0.7,
      sixMonthPrice: 0.6,
      oneWeekPrice: 0.9,
      communitySpotPrice: 0.2,
      secureSpotPrice: 0.4,
    });
  });

  it("adjustedCostPerHr: the lowest active savings plan of the Pod's user and GPU type (× GPUs), else costPerHr", () => {
    expect(plansFor(c, pod(), now).map((p) => p.id)).toEqual(['sp-now', 'sp-later']);
    expect(adjustedCost(c, pod(), now)).toBe(1.5);
    expect(plansFor(c, pod({ id: 'pod2' }), now).map((p) => p.id)).toEqual([
      'sp-now',
      'sp-cheaper-one-pod',
      'sp-later',
    ]);
    expect(adjustedCost(c, pod({ id: 'pod2' }), now)).toBe(1.2);
    expect(adjustedCost(c, pod(), new Date('2026-12-15T00:00:00Z'))).toBe(0.2);
    expect(adjustedCost(c, pod({ ownerId: 'usr_c' }), now)).toBe(2);
    expect(plansFor(c, pod({ computeType: 'CPU', gpuTypeId: null }), now)).toEqual([]);
    // A plan never makes a Pod dearer.
    expect(adjustedCost(c, pod({ cloudType: 'COMMUNITY' }), now)).toBe(1);
  });

  it('machine objects combine host facts, the catalogue entry and prices', () => {
    const withMachine = loadCatalogueFileFrom(
      minimal({
        machines: [
          {
            id: 'host-1',
            location: 'Lab',
            dataCenterId: 'LAB-1',
            maxUploadSpeedMbps: 900,
            maintenanceStart: '2026-12-01T02:00:00Z',
            maintenanceEnd: '2026-12-01T04:00:00Z',
            maintenanceNote: 'kernel',
            note: 'rack 4',
          },
        ],
      }),
    );
    const facts = {
      id: 'host-1',
      cpuModel: 'Intel(R) Xeon(R) Gold',
      cpuCount: 32,
      threadsPerCore: 2,
      memoryInGb: 256,
      gpus: [
        { name: 'Vendor A 24GB', memoryInGb: 24 },
        { name: 'Vendor A 24GB', memoryInGb: 24 },
      ],
    };
    expect(
      machineView(withMachine, 'host-1', facts, {
        computeType: 'GPU',
        gpuTypeId: 'GPU-A',
        cloudType: 'SECURE',
        interruptible: false,
      }),
    ).toEqual({
      minPodGpuCount: 1,
      gpuTypeId: 'GPU-A',
      gpuType: gpuObject(withMachine, 'GPU-A', 2),
      cpuCount: 32,
      cpuTypeId: 'Intel(R) Xeon(R) Gold',
      cpuType: {
        id: 'Intel(R) Xeon(R) Gold',
        displayName: 'Intel(R) Xeon(R) Gold',
        cores: 16,
        threadsPerCore: 2,
        groupId: 'Intel',
      },
      memoryInGb: 256,
      location: 'Lab',
      dataCenterId: 'LAB-1',
      diskThroughputMBps: null,
      maxDownloadSpeedMbps: null,
      maxUploadSpeedMbps: 900,
      supportPublicIp: false,
      secureCloud: true,
      maintenanceStart: '2026-12-01T02:00:00.000Z',
      maintenanceEnd: '2026-12-01T04:00:00.000Z',
      maintenanceNote: 'kernel',
      note: 'rack 4',
      costPerHr: 2,
      currentPricePerGpu: 1,
      gpuAvailable: 2,
      gpuDisplayName: 'A',
    });
    // A host without GPUs running a CPU Pod: priced by its vCPUs, defaults for what nobody wrote down.
    expect(
      machineView(
        withMachine,
        'elsewhere',
        { ...facts, gpus: [] },
        { computeType: 'CPU', gpuTypeId: null, cloudType: 'SECURE', interruptible: false },
      ),
    ).toMatchObject({
      gpuTypeId: null,
      gpuType: null,
      minPodGpuCount: 0,
      gpuAvailable: 0,
      costPerHr: 1.6,
      location: 'Local',
      dataCenterId: 'LOCAL-1',
      note: '',
    });
  });
});

describe('offers (GraphQL gpuTypes, lowestPrice, dataCenters)', () => {
  const c = loadCatalogueFileFrom(
    minimal({
      defaults: { gpuTypeId: 'GPU-A', cpuFlavorId: 'cpuX', dataCenterId: 'DC-1', location: 'Here' },
      machines: [{ id: 'm1', dataCenterId: 'DC-2', location: 'There' }],
    }),
  );

  it('lists GPU types with their prices and pool; ids (or aliases) narrow the list', () => {
    expect(gpuTypeOffers(c)).toEqual([
      expect.objectContaining({
        id: 'GPU-A',
        manufacturer: 'Nvidia',
        pool: null,
        securePrice: 1,
        maxGpuCount: 16,
      }),
    ]);
    expect(gpuTypeOffers(c, ['vendor a 24gb']).map((g) => g.id)).toEqual(['GPU-A']);
    expect(gpuTypeOffers(c, ['nope'])).toEqual([]);
  });

  it('prices n GPUs like a Pod with them (secure or community, on demand and spot) and sizes them', () => {
    expect(lowestPrice(c, { gpuTypeId: 'GPU-A', gpuCount: 3 })).toEqual({
      gpuTypeId: 'GPU-A',
      gpuName: 'A',
      gpuCount: 3,
      uninterruptablePrice: 3,
      minimumBidPrice: 1.2,
      minMemory: 30,
      minVcpu: 12,
      stockStatus: 'High',
    });
    expect(lowestPrice(c, { gpuTypeId: 'GPU-A', gpuCount: 2, secureCloud: false })).toMatchObject({
      uninterruptablePrice: 1,
      minimumBidPrice: 0.4,
    });
    expect(lowestPrice(c, { gpuTypeId: 'nope', gpuCount: 1 })).toBeNull();
  });

  it('data centers: the default one, then those the machines name; every GPU type offered in each', () => {
    expect(dataCenterIds(c)).toEqual(['DC-1', 'DC-2']);
    expect(dataCenterOffers(c)).toEqual([
      {
        id: 'DC-1',
        name: 'DC-1',
        location: 'Here',
        gpuAvailability: [
          { gpuTypeId: 'GPU-A', displayName: 'A', stockStatus: 'High', available: true },
        ],
      },
      {
        id: 'DC-2',
        name: 'DC-2',
        location: 'There',
        gpuAvailability: [
          { gpuTypeId: 'GPU-A', displayName: 'A', stockStatus: 'High', available: true },
        ],
      },
    ]);
  });

  it('a pool is an upper-case id; the shipped catalogue covers the RunPod pools', () => {
    const bad = minimal();
    (bad.gpuTypes[0] as Record<string, unknown>).pool = 'ada 24';
    expect(() => loadCatalogueFileFrom(bad)).toThrow(/pool must be like ADA_24/);
    const pools = new Set(
      gpuTypeOffers(loadCatalogueFile(DEFAULT_CATALOGUE_FILE)).map((g) => g.pool),
    );
    for (const pool of [
      'AMPERE_16',
      'AMPERE_24',
      'ADA_24',
      'AMPERE_48',
      'ADA_48_PRO',
      'AMPERE_80',
      'ADA_80_PRO',
      'HOPPER_141',
    ])
      expect(pools).toContain(pool);
  });
});

describe('this host', () => {
  it('parses nvidia-smi and /proc/cpuinfo', () => {
    expect(
      parseNvidiaSmi('NVIDIA GeForce RTX 4090, 24564\nNVIDIA H100 80GB HBM3, 81559\n\n'),
    ).toEqual([
      { name: 'NVIDIA GeForce RTX 4090', memoryInGb: 24 },
      { name: 'NVIDIA H100 80GB HBM3', memoryInGb: 79.6 },
    ]);
    expect(parseThreadsPerCore('processor\t: 0\nsiblings\t: 16\ncpu cores\t: 8\n')).toBe(2);
    expect(parseThreadsPerCore('processor : 0\n')).toBe(1);
  });

  it('lists the GPUs nvidia-smi reports when it is installed, none otherwise', async () => {
    expect((await new HostMachine().describe()).gpus).toEqual([]); // this machine has no nvidia-smi
    const bin = mkdtempSync(path.join(dir, 'bin-'));
    const fake = path.join(bin, 'nvidia-smi');
    writeFileSync(
      fake,
      '#!/bin/sh\n[ "$1" = "--query-gpu=name,memory.total" ] && printf "NVIDIA L4, 23034\\nNVIDIA L4, 23034\\n"\n',
    );
    chmodSync(fake, 0o755);
    const savedPath = process.env.PATH;
    process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
    try {
      const host = new HostMachine();
      const facts = await host.describe();
      expect(facts).toMatchObject({
        id: host.id,
        gpus: [
          { name: 'NVIDIA L4', memoryInGb: 22.5 },
          { name: 'NVIDIA L4', memoryInGb: 22.5 },
        ],
      });
      expect(facts.cpuCount).toBeGreaterThan(0);
      expect(facts.memoryInGb).toBeGreaterThan(0);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

function loadCatalogueFileFrom(doc: unknown): Catalogue {
  return loadCatalogueFile(write(`c-${Math.random().toString(36).slice(2)}.yaml`, doc));
}
