import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  PodSignals,
  RunplaneError,
  TemplateRpc,
  type Ack,
  type StartWorkerRequest,
  type StartWorkerResponse,
  type StopWorkerRequest,
  type Template,
} from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import type { Catalogue } from '../catalogue/catalogue.schema.js';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import { sizePod } from '../catalogue/pricing.js';
import { ComputeProvider } from '../compute/compute-provider.js';
import { LocalRunPolicy } from '../compute/local-run-policy.js';
import { statusChange } from '../pods/pod-status.js';
import { PodsRepository, type PodRow } from '../pods/pods.repository.js';
import { GpuAllocator } from '../gpus/gpu-allocator.js';
import { gpusNeeded, WorkloadLifecycle } from '../workloads/workload-lifecycle.js';

const MAX_POD_NAME = 191;
/**
 * When workers lost to a restart of pod-rest are reported, after start-up: the scheduler's bus
 * handlers subscribe only once every service has started (in standalone mode, in this process), and
 * a scheduler restarting too hears the second report. It acts on the first it hears.
 */
const LOST_REPORT_DELAYS_MS = [1000, 10_000];
const LOST_ON_RESTART = 'its process did not survive a restart of pod-rest';

/**
 * Serverless workers as Pods: the scheduler decides when a worker starts and stops; this service
 * keeps the Pod record, has WorkloadLifecycle run the workload, and tells the scheduler about a
 * worker that ended by itself.
 */
@Injectable()
export class WorkersService implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Starts in progress by worker id: a retried request joins the first, a stop waits for it. */
  private readonly starting = new Map<string, Promise<StartWorkerResponse>>();
  private readonly unsubscribe: () => void;
  private readonly reports: NodeJS.Timeout[] = [];

  constructor(
    private readonly pods: PodsRepository,
    private readonly compute: ComputeProvider,
    private readonly bus: Bus,
    private readonly catalogue: CatalogueService,
    private readonly runPolicy: LocalRunPolicy,
    private readonly lifecycle: WorkloadLifecycle,
    private readonly gpus: GpuAllocator,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    // Ended by itself (crash, exit): the scheduler counts it at once (crash-loop back-off).
    this.unsubscribe = lifecycle.onExitRecorded((pod, status, by) => {
      if (by === 'itself') this.tellExited(pod, status.exitCode, { reason: status.reason });
    });
  }

  /**
   * Workers whose process did not survive pod-rest's restart (local processes end with it) are
   * told as exited too, so that the scheduler replaces them at once rather than after 3 missed
   * pings; missed pings still catch them if both reports are lost.
   */
  onApplicationBootstrap(): void {
    void this.lifecycle.reconciled.then((lost) => {
      const workers = lost.filter((pod) => pod.endpointId);
      if (!workers.length) return;
      this.logger.warn(
        { workers: workers.map((pod) => pod.id) },
        'serverless workers did not survive the restart; telling the scheduler',
      );
      for (const delay of LOST_REPORT_DELAYS_MS) {
        const timer = setTimeout(() => {
          for (const pod of workers)
            this.tellExited(pod, null, { reason: LOST_ON_RESTART, hostRestarted: true });
        }, delay);
        timer.unref();
        this.reports.push(timer);
      }
    });
  }

  // After beforeApplicationShutdown, whose exits are recorded (and are none of the scheduler's business).
  onApplicationShutdown(): void {
    this.unsubscribe();
    this.reports.forEach((timer) => clearTimeout(timer));
  }

  /** Best effort (a signal): the scheduler's missed pings are the fallback. */
  private tellExited(
    pod: PodRow,
    exitCode: number | null,
    { reason, hostRestarted = false }: { reason?: string; hostRestarted?: boolean } = {},
  ): void {
    if (!pod.endpointId) return;
    void this.bus
      .signal(PodSignals.workerExited, {
        endpointId: pod.endpointId,
        workerId: pod.id,
        exitCode,
        ...(reason ? { reason } : {}),
        ...(hostRestarted ? { hostRestarted } : {}),
      })
      .catch(() => undefined);
  }

  startWorker(request: StartWorkerRequest): Promise<StartWorkerResponse> {
    const inFlight = this.starting.get(request.workerId);
    if (inFlight) return inFlight;
    const start = this.start(request).finally(() => this.starting.delete(request.workerId));
    this.starting.set(request.workerId, start);
    return start;
  }

  async stopWorker(request: StopWorkerRequest): Promise<Ack> {
    await this.starting.get(request.workerId)?.catch(() => undefined);
    const pod = await this.pods.findOwned(request.ownerId, request.workerId);
    if (!pod) throw RunplaneError.notFound(`pod ${request.workerId} not found`, 'POD_NOT_FOUND');
    if (pod.desiredStatus !== 'TERMINATED') {
      // A worker that already ended keeps the story of its exit; it just will not run again.
      await this.pods.update(
        pod.id,
        pod.exitedAt
          ? { desiredStatus: 'TERMINATED' }
          : { desiredStatus: 'TERMINATED', lastStatusChange: statusChange.terminated(new Date()) },
      );
    }
    // Acknowledged once the stop is under way: with the SIGKILL grace (10 s) it may outlast the
    // caller's request timeout. The exit is recorded on the Pod when it happens.
    this.lifecycle
      .stop(pod, 'scheduler')
      .catch((err) =>
        this.logger.error({ podId: pod.id, err: String(err) }, 'stopping a worker failed'),
      );
    return { ok: true };
  }

  private async start(request: StartWorkerRequest): Promise<StartWorkerResponse> {
    const existing = await this.pods.findById(request.workerId);
    if (existing) return this.alreadyStarted(existing, request);
    await this.runPolicy.assertMayRun(request.ownerId);

    // The endpoint's pinned revision when it runs another user's template: never that user's newer code.
    const template = await this.bus.request(TemplateRpc.get, {
      ownerId: request.ownerId,
      templateId: request.templateId,
      revision: request.templateRevision,
    });
    if (
      template.dockerEntrypoint.length + template.dockerStartCmd.length === 0 &&
      this.compute.kind === 'local'
    ) {
      throw new RunplaneError(
        400,
        `template ${template.id} has no dockerEntrypoint and no dockerStartCmd: the local compute provider runs that command ` +
          `and does not pull the image "${template.imageName}"`,
        [{ path: 'dockerStartCmd', message: 'must not be empty to run workers locally' }],
        'WORKER_COMMAND_MISSING',
      );
    }

    const now = new Date();
    const newPod = podFromTemplate(request, template, now, this.catalogue.get());
    // Too few free GPUs on this host: nothing is recorded; the scheduler tries again (or, when
    // the host has fewer GPUs than a worker needs, tells the endpoint's owner it never can).
    const shortage = await this.gpus.shortage(gpusNeeded(newPod));
    if (shortage) return { gpuShortage: shortage };
    const pod = await this.pods.insert(newPod);
    if (!pod) return this.alreadyStarted(await this.pods.findById(request.workerId), request);

    // Worker protocol variables win over the template's.
    const outcome = await this.lifecycle.start(pod, {
      ref: pod.id,
      extraEnv: request.env,
      labels: {
        endpointId: request.endpointId,
        templateId: template.id,
        slsVersion: String(request.slsVersion),
        ownerId: request.ownerId,
      },
    });
    if (!outcome.started) {
      if (outcome.cause === 'gpus') {
        // Taken by another start since the look above: this worker never ran.
        const at = new Date();
        await this.pods.update(pod.id, {
          desiredStatus: 'EXITED',
          lastStatusChange: statusChange.startFailed('its GPUs were given to another workload', at),
          exitedAt: at,
        });
        return { gpuShortage: outcome.shortage };
      }
      if (outcome.cause === 'provider')
        throw new RunplaneError(400, outcome.reason, undefined, 'WORKER_START_FAILED');
      throw outcome.error; // the vault's answer (an unknown secret: 400 SECRET_NOT_FOUND), or the failure
    }
    return { podId: pod.id };
  }

  /** A repeated start of a worker that runs is answered as the first one was; anything else is a conflict. */
  private async alreadyStarted(
    pod: PodRow | null,
    request: StartWorkerRequest,
  ): Promise<StartWorkerResponse> {
    if (
      pod &&
      pod.ownerId === request.ownerId &&
      pod.endpointId === request.endpointId &&
      pod.computeRef
    ) {
      const status = await this.compute.status(pod.computeRef);
      if (status && (status.state === 'running' || status.state === 'pending'))
        return { podId: pod.id };
    }
    throw RunplaneError.conflict(
      `worker id ${request.workerId} is already used by another pod`,
      'POD_EXISTS',
    );
  }
}

function podFromTemplate(
  request: StartWorkerRequest,
  template: Template,
  now: Date,
  catalogue: Catalogue,
) {
  // Sized and priced like the endpoint's hardware; an endpoint may name any RunPod GPU (not strict).
  const hardware = sizePod(
    catalogue,
    {
      computeType: request.computeType,
      gpuTypeIds: request.gpuTypeId ? [request.gpuTypeId] : undefined,
      gpuCount: request.gpuCount,
      vcpuCount: request.vcpuCount,
      cpuFlavorIds: request.cpuFlavorId ? [request.cpuFlavorId] : undefined,
    },
    false,
  );
  return {
    id: request.workerId,
    ownerId: request.ownerId,
    name: `worker-${request.workerId}`.slice(0, MAX_POD_NAME),
    image: template.imageName,
    templateId: template.id,
    endpointId: request.endpointId,
    aiApiId: request.endpointId,
    slsVersion: request.slsVersion,
    gpuTypeId: hardware.gpuTypeId ?? undefined,
    computeType: hardware.computeType,
    gpuCount: hardware.gpuCount,
    cpuFlavorId: hardware.cpuFlavorId,
    vcpuCount: hardware.vcpuCount,
    memoryInGb: hardware.memoryInGb,
    dockerEntrypoint: template.dockerEntrypoint,
    dockerStartCmd: template.dockerStartCmd,
    ports: template.ports ?? [],
    containerDiskInGb: template.containerDiskInGb ?? 0,
    volumeInGb: template.volumeInGb ?? 0,
    volumeMountPath: template.volumeMountPath || undefined,
    // The endpoint's variables over the template's: both resolved and kept apart from secrets alike.
    env: { ...(template.env ?? {}), ...(request.endpointEnv ?? {}) },
    // The provider that pulls the image (docker) asks the vault for these credentials.
    containerRegistryAuthId: template.containerRegistryAuthId ?? undefined,
    lastStatusChange: statusChange.started(now),
    lastStartedAt: now,
  };
}
