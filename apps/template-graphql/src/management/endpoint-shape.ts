import {
  EndpointCreateDto,
  EndpointUpdateDto,
  RunplaneError,
  type Endpoint,
  type ErrorDetail,
  type GpuTypeOffer,
} from '@runplane/contracts';
import { flattenValidationErrors } from '@runplane/platform';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { invalid } from '../graphql/template-shape.js';
import { FlashBootType, type EndpointGql, type EndpointInput } from './endpoint.types.js';

/**
 * Endpoints in RunPod's GraphQL shape: `gpuIds` names serverless GPU pools (each the catalogue's
 * GPU types of that pool) or GPU types, comma-separated; `locations` the data centers. REST's
 * endpoint stores GPU types, so a pool given in `gpuIds` is answered as that pool as long as the
 * endpoint allows every GPU type of it.
 */
export function toGraphqlEndpoint(e: Endpoint, gpuTypes: GpuTypeOffer[]): EndpointGql {
  return {
    id: e.id,
    name: e.name,
    templateId: e.templateId,
    gpuIds: gpuIdsOf(e.gpuTypeIds, gpuTypes),
    gpuCount: e.gpuCount,
    instanceIds: e.computeType === 'CPU' ? e.cpuFlavorIds.map((f) => `${f}-${e.vcpuCount}`) : [],
    computeType: e.computeType,
    type: 'QB',
    userId: e.userId,
    version: e.version,
    workersMin: e.workersMin,
    workersMax: e.workersMax,
    workersStandby: 0,
    idleTimeout: e.idleTimeout,
    scalerType: e.scalerType,
    scalerValue: e.scalerValue,
    executionTimeoutMs: e.executionTimeoutMs,
    locations: e.dataCenterIds.join(','),
    networkVolumeId: e.networkVolumeId ?? null,
    networkVolumeIds: e.networkVolumeId
      ? [{ networkVolumeId: e.networkVolumeId, dataCenterId: null }]
      : [],
    flashBootType: FlashBootType.OFF,
    allowedCudaVersions: '',
    minCudaVersion: null,
    modelReferences: [],
    aiKey: null,
    env: Object.entries(e.env).map(([key, value]) => ({ key, value })),
    createdAt: e.createdAt,
  };
}

/** The pools whose every GPU type is allowed, then the other allowed types, in the endpoint's order. */
function gpuIdsOf(gpuTypeIds: string[], gpuTypes: GpuTypeOffer[]): string {
  const allowed = new Set(gpuTypeIds);
  const out: string[] = [];
  for (const id of gpuTypeIds) {
    const pool = gpuTypes.find((g) => g.id === id)?.pool;
    const members = pool ? gpuTypes.filter((g) => g.pool === pool) : [];
    const whole = members.length > 0 && members.every((g) => allowed.has(g.id));
    const item = whole ? pool! : id;
    if (!out.includes(item)) out.push(item);
  }
  return out.join(',');
}

/** `gpuIds` as GPU type ids: a pool stands for its GPU types; an unknown name is refused. */
function gpuTypesOf(gpuIds: string, gpuTypes: GpuTypeOffer[], problems: ErrorDetail[]): string[] {
  const out: string[] = [];
  for (const token of gpuIds
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)) {
    const lower = token.toLowerCase();
    const pool = gpuTypes.filter((g) => g.pool?.toLowerCase() === lower);
    const type = gpuTypes.find(
      (g) => g.id.toLowerCase() === lower || g.displayName.toLowerCase() === lower,
    );
    const ids = pool.length ? pool.map((g) => g.id) : type ? [type.id] : [];
    if (!ids.length) {
      const pools = [...new Set(gpuTypes.map((g) => g.pool).filter(Boolean))];
      problems.push({
        path: 'gpuIds',
        message: `gpuIds: "${token}" is neither a GPU pool nor a GPU type of this installation (pools: ${pools.join(', ') || 'none'}; GPU types: see gpuTypes)`,
      });
    }
    for (const id of ids) if (!out.includes(id)) out.push(id);
  }
  return out;
}

/**
 * `saveEndpoint` input as REST's EndpointCreateDto (without `id`) or the changes of an
 * EndpointUpdateDto (with `id`: only the fields given change), checked like a REST body. "" means
 * "none" for `networkVolumeId`, `locations` and `gpuIds`. `templateId` is the caller's to fill in
 * when the input carries an inline `template`.
 */
export function fromEndpointInput(
  input: EndpointInput,
  gpuTypes: GpuTypeOffer[],
  mode: 'create' | 'modify',
): EndpointCreateDto {
  const problems: ErrorDetail[] = [];
  if (input.type && input.type !== 'QB')
    problems.push({
      path: 'type',
      message: `type ${input.type}: only queue-based (QB) endpoints exist here`,
    });
  const out: Record<string, unknown> = {
    name: input.name ?? undefined,
    templateId: input.templateId || undefined,
    gpuCount: input.gpuCount ?? undefined,
    workersMin: input.workersMin ?? undefined,
    workersMax: input.workersMax ?? undefined,
    idleTimeout: input.idleTimeout ?? undefined,
    scalerType: input.scalerType ?? undefined,
    scalerValue: input.scalerValue ?? undefined,
    executionTimeoutMs: input.executionTimeoutMs ?? undefined,
  };
  if (input.gpuIds !== undefined && input.gpuIds !== null)
    out.gpuTypeIds = gpuTypesOf(input.gpuIds, gpuTypes, problems);
  if (input.locations !== undefined && input.locations !== null)
    out.dataCenterIds = input.locations
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean);
  const volume =
    input.networkVolumeId ??
    input.networkVolumeIds?.find((v) => v?.networkVolumeId)?.networkVolumeId;
  if (volume !== undefined && volume !== null)
    out.networkVolumeId = volume || (mode === 'modify' ? null : undefined);
  const instances = (input.instanceIds ?? []).filter((s): s is string => !!s);
  if (instances.length) {
    const parsed = instances.map((id) => /^([a-z0-9]+)-(\d+)(?:-\d+)?$/.exec(id));
    if (parsed.some((m) => !m))
      problems.push({
        path: 'instanceIds',
        message: 'instance ids look like <flavor>-<vcpus>-<memory>, e.g. cpu3c-2-4',
      });
    else {
      out.cpuFlavorIds = parsed.map((m) => m![1]);
      out.vcpuCount = Number(parsed[0]![2]);
      if (mode === 'create') out.computeType = 'CPU';
    }
  }
  if (problems.length) throw invalid(problems);
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  const dto = plainToInstance(mode === 'create' ? EndpointCreateDto : EndpointUpdateDto, out);
  const errors = validateSync(dto, {
    forbidUnknownValues: false,
    skipMissingProperties: false,
    validationError: { target: false, value: false },
  }).filter((e) => !(mode === 'create' && e.property === 'templateId' && !out.templateId));
  if (errors.length) throw invalid(flattenValidationErrors(errors).map(gqlPath));
  return dto as EndpointCreateDto;
}

export function requiredField(name: string): RunplaneError {
  return RunplaneError.badRequest(`${name} is required`, [
    { path: name, message: `${name} is required` },
  ]);
}

function gqlPath(d: ErrorDetail): ErrorDetail {
  const names: Record<string, string> = {
    gpuTypeIds: 'gpuIds',
    dataCenterIds: 'locations',
    cpuFlavorIds: 'instanceIds',
    vcpuCount: 'instanceIds',
  };
  const [head, ...rest] = d.path.split('.');
  return names[head] ? { ...d, path: [names[head], ...rest].join('.') } : d;
}
