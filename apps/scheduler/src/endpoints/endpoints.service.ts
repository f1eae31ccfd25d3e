import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  ENDPOINT_DEFAULTS,
  RunplaneError,
  TemplateRpc,
  type Ack,
  type CreateEndpointRequest,
  type Endpoint,
  type EndpointScopedRequest,
  type EndpointUpdateDto,
  type OwnedRequest,
  type TemplateUsageRequest,
  type TemplateUsageResponse,
  type UpdateEndpointRequest,
} from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { JobControlRepository } from '../store/job-control.repository.js';
import { JobChanges, ANY_JOB } from '../shared/job-changes.js';
import { shortId } from '../shared/ids.js';
import { WorkersRepository } from '../store/workers.repository.js';
import { EndpointCache } from './endpoint-cache.js';
import { WaitingReasons } from './waiting-reasons.js';
import { toEndpoint } from './endpoint-view.js';
import {
  EndpointsRepository,
  type EndpointChanges,
  type EndpointRow,
  type TemplateRelease,
} from '../store/endpoints.repository.js';

/** Fields whose change needs workers started anew (a rolling release). */
const RELEASE_FIELDS = [
  'env',
  'templateId',
  'templateRevision',
  'gpuTypeIds',
  'gpuCount',
  'cpuFlavorIds',
  'vcpuCount',
  'networkVolumeId',
  'dataCenterIds',
] as const;

/** Endpoints: their configuration, owned by one user; workers and jobs hang off them. */
@Injectable()
export class EndpointsService {
  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly cache: EndpointCache,
    private readonly jobs: JobControlRepository,
    private readonly workers: WorkersRepository,
    private readonly changes: JobChanges,
    private readonly waiting: WaitingReasons,
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * The caller's endpoint, else 404 (another user's endpoint does not exist for the caller). From
   * the short-lived cache unless `fresh` (reads that decide a change of the endpoint itself).
   */
  async requireOwned(ownerId: string, endpointId: string, fresh = false): Promise<EndpointRow> {
    const row = fresh
      ? await this.endpoints.findOwned(ownerId, endpointId)
      : await this.cache.get(endpointId);
    if (!row || row.ownerId !== ownerId) throw notFound(endpointId);
    return row;
  }

  /** Worker routes: the endpoint, checked against the caller's user when queue-api passes it. */
  async requireForWorker(endpointId: string, ownerId?: string): Promise<EndpointRow> {
    const row = await this.cache.get(endpointId);
    if (!row || (ownerId !== undefined && row.ownerId !== ownerId)) throw notFound(endpointId);
    return row;
  }

  async create({ ownerId, endpoint }: CreateEndpointRequest): Promise<Endpoint> {
    const templateRevision = await this.checkTemplate(ownerId, endpoint.templateId);
    const min = endpoint.workersMin ?? ENDPOINT_DEFAULTS.workersMin;
    const max = endpoint.workersMax ?? ENDPOINT_DEFAULTS.workersMax;
    checkWorkerRange(min, max);
    const row = await this.endpoints.create(
      {
        id: shortId(),
        ownerId,
        name: endpoint.name ?? '',
        templateId: endpoint.templateId,
        templateRevision,
        computeType: endpoint.computeType ?? ENDPOINT_DEFAULTS.computeType,
        gpuTypeIds: endpoint.gpuTypeIds ?? [],
        gpuCount: endpoint.gpuCount ?? ENDPOINT_DEFAULTS.gpuCount,
        cpuFlavorIds: endpoint.cpuFlavorIds ?? [],
        vcpuCount: endpoint.vcpuCount ?? 2,
        dataCenterIds: endpoint.dataCenterIds ?? [],
        env: endpoint.env ?? {},
        executionTimeoutMs: endpoint.executionTimeoutMs ?? ENDPOINT_DEFAULTS.executionTimeoutMs,
        idleTimeout: endpoint.idleTimeout ?? ENDPOINT_DEFAULTS.idleTimeout,
        scalerType: endpoint.scalerType ?? ENDPOINT_DEFAULTS.scalerType,
        scalerValue: endpoint.scalerValue ?? ENDPOINT_DEFAULTS.scalerValue,
        workersMin: min,
        workersMax: max,
        networkVolumeId: endpoint.networkVolumeId ?? null,
      },
      new Date(),
    );
    this.changes.changed(row.id, ANY_JOB, { scaling: true }); // the autoscaler starts workersMin workers at once
    return toEndpoint(row);
  }

  /** The caller's endpoints, each with `waiting` when jobs are queued. */
  async list({ ownerId }: OwnedRequest): Promise<Endpoint[]> {
    return this.withWaiting(await this.endpoints.listOwned(ownerId));
  }

  async get({ ownerId, endpointId }: EndpointScopedRequest): Promise<Endpoint> {
    return (await this.withWaiting([await this.requireOwned(ownerId, endpointId)]))[0];
  }

  private async withWaiting(rows: EndpointRow[]): Promise<Endpoint[]> {
    const waiting = await this.waiting.of(rows);
    return rows.map((row) => {
      const w = waiting.get(row.id);
      return w ? { ...toEndpoint(row), waiting: w } : toEndpoint(row);
    });
  }

  /**
   * Applies the changes; a new template (or template revision) or hardware bumps `version` (rolling
   * release). Setting `templateId`, even to the same id, moves an endpoint on another user's
   * template to that template's current revision: the explicit step its owner takes to run it.
   */
  async update({ ownerId, endpointId, changes }: UpdateEndpointRequest): Promise<Endpoint> {
    const current = await this.requireOwned(ownerId, endpointId, true);
    const templateRevision =
      changes.templateId === undefined
        ? current.templateRevision
        : await this.checkTemplate(ownerId, changes.templateId);
    checkWorkerRange(
      changes.workersMin ?? current.workersMin,
      changes.workersMax ?? current.workersMax,
    );
    const data = { ...pickDefined(changes), templateRevision };
    const release = RELEASE_FIELDS.some(
      (f) =>
        f in data &&
        JSON.stringify(data[f as keyof EndpointChanges]) !== JSON.stringify(current[f]),
    );
    const row = await this.endpoints.update(endpointId, data, release);
    if (!row) throw notFound(endpointId);
    this.changes.changed(endpointId, ANY_JOB, { scaling: true });
    return toEndpoint(row);
  }

  /** Removes the endpoint: queued jobs go, running ones are cancelled, its workers are stopped. */
  async delete({ ownerId, endpointId }: EndpointScopedRequest): Promise<Ack> {
    await this.requireOwned(ownerId, endpointId, true);
    // The row first: new submissions and takes get 404 from now on.
    if (!(await this.endpoints.delete(endpointId))) throw notFound(endpointId);
    const now = new Date();
    const cancelled = await this.jobs.removeForEndpoint(endpointId, now);
    // The autoscaler stops "stopping" workers (and retries if pod-rest is away).
    await this.workers.markAllStopping(endpointId);
    this.logger.info({ endpointId, cancelled: cancelled.length }, 'endpoint deleted');
    this.changes.changed(endpointId, ANY_JOB, { scaling: true });
    return { ok: true };
  }

  /** For template-graphql: a template endpoints run on must not be deleted. */
  async templateUsage({ templateId }: TemplateUsageRequest): Promise<TemplateUsageResponse> {
    return { endpoints: await this.endpoints.countUsingTemplate(templateId) };
  }

  /**
   * `TemplateEvents.updated`: the template owner's endpoints on it roll out a new version. Other
   * users' endpoints keep the revision they run (their owner moves them on by setting templateId).
   */
  async templateUpdated(release: TemplateRelease, eventId?: string): Promise<void> {
    const { templateId } = release;
    const ids = await this.endpoints.releaseTemplate(release, eventId);
    if (ids.length)
      this.logger.info(
        { templateId, endpoints: ids },
        'template updated: rolling release of its endpoints',
      );
    for (const id of ids) this.changes.changed(id, ANY_JOB, { scaling: true });
  }

  /**
   * The template must exist for the owner (or be public); template-graphql answers. Returns the
   * revision to pin: another user's template is pinned to its current revision, so that user's
   * later changes never reach this endpoint's workers; the caller's own is followed (null).
   */
  private async checkTemplate(ownerId: string, templateId: string): Promise<number | null> {
    try {
      const template = await this.bus.request(
        TemplateRpc.get,
        { ownerId, templateId, withRevision: true },
        { timeoutMs: 5000 },
      );
      return template.owned || template.revision === undefined ? null : template.revision;
    } catch (err) {
      if (err instanceof RunplaneError && err.status === 404) {
        throw RunplaneError.badRequest(`templateId ${templateId} does not exist`, [
          { path: 'templateId', message: `template ${templateId} does not exist` },
        ]);
      }
      const status = err instanceof RunplaneError ? err.status : 500;
      this.logger.warn(
        { templateId, status, err: String(err) },
        'could not check the template of an endpoint',
      );
      if (err instanceof RunplaneError && status < 500) throw err;
      throw RunplaneError.unavailable(
        'templates cannot be checked right now (template-graphql is not answering); try again',
      );
    }
  }
}

function notFound(endpointId: string): RunplaneError {
  return RunplaneError.notFound(`endpoint ${endpointId} not found`, 'ENDPOINT_NOT_FOUND');
}

function checkWorkerRange(min: number, max: number): void {
  if (min > max) {
    throw RunplaneError.badRequest(`workersMin (${min}) must not exceed workersMax (${max})`, [
      { path: 'workersMin', message: `workersMin must not exceed workersMax (${max})` },
    ]);
  }
}

/** Fields an update may set (EndpointUpdateDto); anything else in the payload is ignored. */
const UPDATABLE = [
  'name',
  'templateId',
  'gpuTypeIds',
  'gpuCount',
  'cpuFlavorIds',
  'vcpuCount',
  'workersMin',
  'workersMax',
  'idleTimeout',
  'executionTimeoutMs',
  'scalerType',
  'scalerValue',
  'networkVolumeId',
  'dataCenterIds',
  'env',
] as const satisfies ReadonlyArray<keyof EndpointUpdateDto>;

/** The fields the update sets (undefined means "unchanged"). */
function pickDefined(changes: EndpointUpdateDto): EndpointChanges {
  return Object.fromEntries(
    UPDATABLE.filter((k) => changes[k] !== undefined).map((k) => [k, changes[k]]),
  ) as EndpointChanges;
}
