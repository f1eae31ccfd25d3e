import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { validateCatalogue } from '../src/catalogue/catalogue.schema.js';
import { withHostGpus } from '../src/catalogue/host-gpu-types.js';
import { gpuEnv } from '../src/compute/local-compute-provider.js';
import { pickGpus } from '../src/gpus/gpu-allocator.js';
import {
  detectGpus,
  NVIDIA_SMI_ARGS,
  parseGpuList,
  type HostGpu,
  type RunCommand,
} from '../src/gpus/gpu-inventory.js';
import { DEFAULT_CATALOGUE_FILE } from '../src/settings.js';

// What nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader prints.
const H100_X2 = [
  '0, GPU-5a1b3c4d-1111-2222-3333-444455556666, NVIDIA H100 80GB HBM3, 81559 MiB',
  '1, GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA H100 80GB HBM3, 81559 MiB',
  '',
].join('\n');
const gpu = (index: number, name = 'NVIDIA L4'): HostGpu => ({
  index,
  uuid: `GPU-${index}`,
  name,
  memoryInGb: 22.5,
});

describe('the GPU inventory (nvidia-smi and RUNPLANE_GPUS)', () => {
  it("reads nvidia-smi's csv: with units, without (nounits), CRLF, unknown memory, GeForce names", () => {
    expect(parseGpuList(H100_X2)).toEqual([
      {
        index: 0,
        uuid: 'GPU-5a1b3c4d-1111-2222-3333-444455556666',
        name: 'NVIDIA H100 80GB HBM3',
        memoryInGb: 79.6,
      },
      {
        index: 1,
        uuid: 'GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff',
        name: 'NVIDIA H100 80GB HBM3',
        memoryInGb: 79.6,
      },
    ]);
    expect(
      parseGpuList(
        '1, GPU-b, NVIDIA GeForce RTX 4090, 24564\r\n0, GPU-a, NVIDIA GH200 480GB, [N/A]\r\n',
      ),
    ).toEqual([
      { index: 0, uuid: 'GPU-a', name: 'NVIDIA GH200 480GB', memoryInGb: null },
      { index: 1, uuid: 'GPU-b', name: 'NVIDIA GeForce RTX 4090', memoryInGb: 24 },
    ]);
    expect(parseGpuList('')).toEqual([]);
  });

  it('refuses what is not a GPU list, naming the line', () => {
    expect(() => parseGpuList('No devices were found')).toThrow(
      /not a GPU: "No devices were found"/,
    );
    expect(() => parseGpuList('0, GPU-a, 81559 MiB')).toThrow(/not a GPU/);
    expect(() => parseGpuList('x, GPU-a, NVIDIA L4, 23034 MiB')).toThrow(/not a GPU/);
    expect(() =>
      parseGpuList('0, GPU-a, NVIDIA L4, 23034 MiB; 0, GPU-b, NVIDIA L4, 23034 MiB'),
    ).toThrow(/index 0 is listed twice/);
    expect(() =>
      parseGpuList('0, GPU-a, NVIDIA L4, 23034 MiB; 1, GPU-a, NVIDIA L4, 23034 MiB'),
    ).toThrow(/uuid GPU-a is listed twice/);
  });

  it('asks nvidia-smi for index, uuid, name and memory; missing, failing or listing none means no GPUs', async () => {
    const calls: Array<readonly string[]> = [];
    const answering =
      (answer: Awaited<ReturnType<RunCommand>>): RunCommand =>
      async (file, args) => {
        calls.push([file, ...args]);
        return answer;
      };
    expect(await detectGpus(undefined, answering({ ok: true, stdout: H100_X2 }))).toMatchObject({
      source: 'nvidia-smi',
      gpus: [{ index: 0 }, { index: 1 }],
    });
    expect(calls[0]).toEqual(['nvidia-smi', ...NVIDIA_SMI_ARGS]);
    expect(calls[0]).toEqual([
      'nvidia-smi',
      '--query-gpu=index,uuid,name,memory.total',
      '--format=csv,noheader',
    ]);
    expect(
      await detectGpus(undefined, answering({ ok: false, code: 'ENOENT', output: '' })),
    ).toEqual({ gpus: [], source: 'nvidia-smi', note: 'nvidia-smi is not installed' });
    expect(
      await detectGpus(
        undefined,
        answering({ ok: false, code: 6, output: 'No devices were found' }),
      ),
    ).toEqual({ gpus: [], source: 'nvidia-smi', note: 'nvidia-smi failed: No devices were found' });
    expect(
      await detectGpus(
        undefined,
        answering({
          ok: false,
          code: 9,
          output:
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
        }),
      ),
    ).toMatchObject({ gpus: [], note: expect.stringContaining("couldn't communicate") });
    // Some drivers say it on stdout with exit code 0.
    expect(
      await detectGpus(undefined, answering({ ok: true, stdout: 'No devices were found\n' })),
    ).toMatchObject({ gpus: [] });
    expect(await detectGpus(undefined, answering({ ok: true, stdout: '' }))).toEqual({
      gpus: [],
      source: 'nvidia-smi',
      note: 'nvidia-smi lists no GPUs',
    });
  });

  it('RUNPLANE_GPUS wins over nvidia-smi: none, or a list in its form; a typo stops the server', async () => {
    const never: RunCommand = async () => {
      throw new Error('nvidia-smi must not run');
    };
    expect(await detectGpus('none', never)).toEqual({ gpus: [], source: 'RUNPLANE_GPUS' });
    expect(
      await detectGpus(
        '0, GPU-fake-0, NVIDIA L4, 23034 MiB; 1, GPU-fake-1, NVIDIA L4, 23034 MiB',
        never,
      ),
    ).toMatchObject({
      source: 'RUNPLANE_GPUS',
      gpus: [{ uuid: 'GPU-fake-0' }, { uuid: 'GPU-fake-1' }],
    });
    await expect(detectGpus('2', never)).rejects.toThrow(
      /invalid configuration: RUNPLANE_GPUS: not a GPU: "2"/,
    );
  });
});

describe('handing out GPUs', () => {
  const host = [gpu(0), gpu(1), gpu(2)];

  it('whole GPUs, each to one workload: the free ones of lowest index, or the shortage', () => {
    expect(pickGpus(host, new Set(), 2)).toEqual({ ids: ['GPU-0', 'GPU-1'] });
    expect(pickGpus(host, new Set(['GPU-0']), 2)).toEqual({ ids: ['GPU-1', 'GPU-2'] });
    expect(pickGpus(host, new Set(['GPU-1']), 1)).toEqual({ ids: ['GPU-0'] });
    expect(pickGpus(host, new Set(['GPU-0', 'GPU-2']), 2)).toEqual({
      shortage: { needed: 2, free: 1, total: 3 },
    });
    expect(pickGpus(host, new Set(), 4)).toEqual({ shortage: { needed: 4, free: 3, total: 3 } });
    expect(pickGpus(host, new Set(['GPU-0', 'GPU-1', 'GPU-2']), 0)).toEqual({ ids: [] });
  });

  it('a local process sees exactly its GPUs; one without GPUs sees none where the host has some', () => {
    expect(gpuEnv(['GPU-a', 'GPU-b'])).toEqual({
      CUDA_VISIBLE_DEVICES: 'GPU-a,GPU-b',
      NVIDIA_VISIBLE_DEVICES: 'GPU-a,GPU-b',
    });
    expect(gpuEnv([])).toEqual({ CUDA_VISIBLE_DEVICES: '' });
    expect(gpuEnv(undefined)).toEqual({});
  });
});

describe('the catalogue on a host with GPUs', () => {
  const catalogue = validateCatalogue(
    parse(readFileSync(DEFAULT_CATALOGUE_FILE, 'utf8')),
  ).catalogue!;

  it('no GPUs: the operator catalogue as written', () => {
    expect(withHostGpus(catalogue, [])).toBe(catalogue);
  });

  it('known models (by id, display name or alias) keep their entry; the default becomes the host GPU when it is not on the host', () => {
    const merged = withHostGpus(catalogue, [gpu(0, 'NVIDIA L4'), gpu(1, 'NVIDIA L4')]);
    expect(merged.gpuTypes).toEqual(catalogue.gpuTypes);
    expect(merged.defaults).toEqual({ ...catalogue.defaults, gpuTypeId: 'NVIDIA L4' });
    // The default on the host stays the default.
    const rtx = withHostGpus(catalogue, [gpu(0, 'NVIDIA GeForce RTX 4090')]);
    expect(rtx.defaults).toEqual(catalogue.defaults);
  });

  it('an unknown model is added, priced 0 and sized like the default GPU type, and is the default', () => {
    const merged = withHostGpus(catalogue, [
      gpu(0, 'NVIDIA Z100 96GB'),
      gpu(1, 'NVIDIA Z100 96GB'),
    ]);
    const fallback = catalogue.gpuTypes.find((t) => t.id === catalogue.defaults.gpuTypeId)!;
    expect(merged.gpuTypes.slice(0, -1)).toEqual(catalogue.gpuTypes);
    expect(merged.gpuTypes.at(-1)).toEqual({
      id: 'NVIDIA Z100 96GB',
      displayName: 'Z100 96GB',
      memoryInGb: 23,
      ramPerGpuInGb: fallback.ramPerGpuInGb,
      vcpuPerGpu: fallback.vcpuPerGpu,
      prices: {
        secure: 0,
        community: 0,
        secureSpot: 0,
        communitySpot: 0,
        oneWeek: 0,
        oneMonth: 0,
        threeMonth: 0,
        sixMonth: 0,
      },
    });
    expect(merged.defaults.gpuTypeId).toBe('NVIDIA Z100 96GB');
    expect(validateCatalogue(JSON.parse(JSON.stringify(merged))).problems ?? []).toEqual([]);
  });
});
