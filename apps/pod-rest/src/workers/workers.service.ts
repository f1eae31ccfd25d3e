import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
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
import {
  ComputeProvider,
  WorkloadStartError,
  type WorkloadStatus,
} from '../compute/compute-provider.js';
import { LocalRunPolicy } from '../compute/local-run-policy.js';
import { LogCollector } from '../logs/log-collector.js';
import { statusChange } from '../pods/pod-status.js';
import { PodsRepository, type PodRow } from '../pods/pods.repository.js';
import { workloadSpec } from '../pods/workload-spec.js';
import { SecretEnv } from '../secrets/secret-env.js';

const MAX_POD_NAME = 191;

/**
 * Serverless workers as Pods: the scheduler decides when a worker starts and
 * stops; this service keeps the Pod record and has the compute provider run the workload.
 */
@Injectable()
export class WorkersService
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  /** Starts in progress by worker id: a retried request joins the first, a stop waits for it. */
  private readonly starting = new Map<string, Promise<StartWorkerResponse>>();
  /** Pod updates after exits, awaited before the database closes. */
  private readonly exitWrites = new Set<Promise<void>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly pods: PodsRepository,
    private readonly compute: ComputeProvider,
    private readonly bus: Bus,
    private readonly secretEnv: SecretEnv,
    private readonly catalogue: CatalogueService,
    private readonly runPolicy: LocalRunPolicy,
    private readonly logs: LogCollector,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.unsubscribe = compute.onExit((status) => {
      const write = this.recordExit(status)
        .catch((err) =>
          this.logger.error(
            { podId: status.ref, err: String(err) },
            'could not record the exit of a worker',
          ),
        )
        .finally(() => this.exitWrites.delete(write));
      this.exitWrites.add(write);
    });
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
    if (pod.computeRef) {
      this.compute
        .stop(pod.computeRef)
        .catch((err) =>
          this.logger.error({ podId: pod.id, err: String(err) }, 'stopping a worker failed'),
        );
    }
    return { ok: true };
  }

  /** Pods recorded as running whose workload is gone (the server restarted under them) are exited. */
  async onApplicationBootstrap(): Promise<void> {
    for (const pod of await this.pods.findRunningWithWorkload()) {
      if (await this.compute.status(pod.computeRef!)) continue;
      const now = new Date();
      await this.pods.update(pod.id, {
        desiredStatus: 'EXITED',
        lastStatusChange: statusChange.lostOnRestart(now),
        exitedAt: now,
      });
    }
  }

  /**
   * Server shutdown: local workers are stopped while HTTP, the bus and the database still work, so
   * they can post the jobs they finish in their grace period and their exits are recorded.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.compute.releaseAll();
    await Promise.all([...this.exitWrites]);
  }

  // Not onModuleDestroy: that runs before beforeApplicationShutdown, whose exits must be recorded.
  onApplicationShutdown(): void {
    this.unsubscribe();
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
    const pod = await this.pods.insert(
      podFromTemplate(request, template, now, this.catalogue.get()),
    );
    if (!pod) return this.alreadyStarted(await this.pods.findById(request.workerId), request);

    let templateEnv: Record<string, string>;
    try {
      templateEnv = await this.secretEnv.resolve(request.ownerId, template.env);
    } catch (err) {
      // The Pod says why it never ran (an unknown secret, or the vault not answering).
      const known = err instanceof RunplaneError;
      const reason =
        known && err.status < 500
          ? err.message
          : `its secrets could not be resolved: ${known ? err.message : 'internal error'}`;
      await this.pods.update(pod.id, {
        desiredStatus: 'EXITED',
        lastStatusChange: statusChange.startFailed(reason, new Date()),
        exitedAt: new Date(),
      });
      throw err;
    }

    let handle;
    try {
      // Worker protocol variables win over the template's; secrets are resolved
      // here only, for the workload itself.
      const spec = workloadSpec(pod, {
        ref: pod.id,
        resolvedEnv: templateEnv,
        extraEnv: request.env,
        catalogue: this.catalogue.get(),
        labels: {
          endpointId: request.endpointId,
          templateId: template.id,
          slsVersion: String(request.slsVersion),
          ownerId: request.ownerId,
        },
      });
      this.logs.expect(pod.id, spec, pod.env as Record<string, string>);
      handle = await this.compute.start(spec);
    } catch (err) {
      const reason = err instanceof WorkloadStartError ? err.message : 'internal error';
      await this.pods.update(pod.id, {
        desiredStatus: 'EXITED',
        lastStatusChange: statusChange.startFailed(reason, new Date()),
        exitedAt: new Date(),
      });
      if (err instanceof WorkloadStartError)
        throw new RunplaneError(400, err.message, undefined, 'WORKER_START_FAILED');
      throw err;
    }
    await this.pods.update(pod.id, {
      computeRef: handle.ref,
      lastStartedAt: handle.startedAt,
      lastStatusChange: statusChange.started(handle.startedAt),
      machineId: handle.machineId ?? '',
      publicIp: handle.publicIp ?? null,
      portMappings: handle.portMappings ?? {},
    });
    this.logger.info(
      { podId: pod.id, endpointId: request.endpointId, slsVersion: request.slsVersion },
      'worker started',
    );
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

  private async recordExit(status: WorkloadStatus): Promise<void> {
    // The start may still be writing its own update; the exit must land after it.
    await this.starting.get(status.ref)?.catch(() => undefined);
    const pod = await this.pods.findById(status.ref);
    if (!pod?.endpointId) return; // not a worker: PodsService records the exits of Pods
    const terminated = pod.desiredStatus === 'TERMINATED';
    const at = status.exitedAt ?? new Date();
    await this.pods.update(pod.id, {
      desiredStatus: terminated ? 'TERMINATED' : 'EXITED',
      exitedAt: at,
      exitCode: status.exitCode,
      lastStatusChange: statusChange.exited({ ...status, terminated }, at),
      publicIp: null,
      portMappings: {},
    });
    // Ended by itself (crash, exit): the scheduler counts it at once (crash-loop back-off).
    if (!terminated && !status.stopRequested) {
      await this.bus
        .signal(PodSignals.workerExited, {
          endpointId: pod.endpointId,
          workerId: pod.id,
          exitCode: status.exitCode,
        })
        .catch(() => undefined);
    }
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
    env: template.env ?? {},
    lastStatusChange: statusChange.started(now),
    lastStartedAt: now,
  };
}
