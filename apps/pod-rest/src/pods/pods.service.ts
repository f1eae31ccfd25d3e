import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  MAX_POD_NAME,
  PodCreateDto,
  PodUpdateDto,
  RunplaneError,
  TemplateRpc,
  splitDockerArgs,
  type Pod,
  type Principal,
  type Template,
} from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { randomBytes } from 'node:crypto';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import { sizePod } from '../catalogue/pricing.js';
import { ComputeProvider } from '../compute/compute-provider.js';
import { LocalRunPolicy } from '../compute/local-run-policy.js';
import { declaredFields } from '../http/declared-fields.js';
import { NetworkVolumesService } from '../network-volumes/network-volumes.service.js';
import { SecretEnv } from '../secrets/secret-env.js';
import { PodRestSettings } from '../settings.js';
import { statusChange } from './pod-status.js';
import { PodViews, type PodIncludes } from './pod-view.js';
import { PodsRepository, type PodChanges, type PodFilter, type PodRow } from './pods.repository.js';
import { GpuAllocator } from '../gpus/gpu-allocator.js';
import { gpusNeeded, WorkloadLifecycle } from '../workloads/workload-lifecycle.js';

/** Fields whose change alters what runs: a running Pod is restarted with them. */
const RUNTIME_FIELDS = [
  'imageName',
  'dockerEntrypoint',
  'dockerStartCmd',
  'env',
  'ports',
  'containerDiskInGb',
  'volumeInGb',
  'volumeMountPath',
  'containerRegistryAuthId',
] as const;
const DAY_MS = 86_400_000;

/**
 * Pods of users (RunPod REST v1 `/v1/pods`): created from an image or a template,
 * started, stopped, restarted, reset, updated and deleted by their owner. Each run of a Pod is one
 * workload of the compute provider, named `<podId>-<run>` so that the exit of an earlier run can
 * never be taken for the current one; WorkloadLifecycle runs it. A Pod that needs more of the
 * host's GPUs than are free waits (`gpuWaitSince`) and starts, oldest first, when enough are
 * freed. Serverless worker Pods are WorkersService's; here they are only read.
 */
@Injectable()
export class PodsService implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Actions per Pod run one after another on this instance (start while a stop is under way...). */
  private readonly locks = new Map<string, Promise<unknown>>();
  /** The pass starting waiting Pods, and whether GPUs were freed while it ran (another pass). */
  private resuming?: Promise<void>;
  private resumeAgain = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly pods: PodsRepository,
    private readonly compute: ComputeProvider,
    private readonly bus: Bus,
    private readonly secretEnv: SecretEnv,
    private readonly catalogue: CatalogueService,
    private readonly settings: PodRestSettings,
    private readonly views: PodViews,
    private readonly volumes: NetworkVolumesService,
    private readonly runPolicy: LocalRunPolicy,
    private readonly lifecycle: WorkloadLifecycle,
    private readonly gpus: GpuAllocator,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.unsubscribe = lifecycle.onGpusFreed(() => this.resumeWaiting());
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.pods.purgeDeleted(new Date(Date.now() - DAY_MS));
    // Pods that waited for GPUs when the server stopped wait on, once the runs lost meanwhile
    // have given theirs back.
    void this.lifecycle.reconciled.then(() => this.resumeWaiting());
  }

  async onApplicationShutdown(): Promise<void> {
    this.unsubscribe();
    await this.resuming;
  }

  // ---- reads ---------------------------------------------------------------------------------

  async get(
    principal: Principal,
    podId: string,
    include: PodIncludes & { includeWorkers?: boolean },
  ): Promise<Pod> {
    const row = await this.pods.findVisible(
      principal.userId,
      podId,
      include.includeWorkers ?? false,
    );
    if (!row) throw podNotFound(podId);
    return this.views.render(row, include);
  }

  async list(principal: Principal, filter: PodFilter, include: PodIncludes): Promise<Pod[]> {
    return this.views.renderMany(await this.pods.list(principal.userId, filter), include);
  }

  // ---- writes --------------------------------------------------------------------------------

  async create(principal: Principal, input: PodCreateDto): Promise<Pod> {
    const body = declaredFields(PodCreateDto, input, []);
    if (body.dockerStartCmd && body.dockerArgs) {
      throw RunplaneError.badRequest('give dockerStartCmd or dockerArgs, not both', [
        { path: 'dockerArgs', message: 'dockerStartCmd is given too' },
      ]);
    }
    await this.runPolicy.assertMayRun(principal.userId);
    const template = body.templateId ? await this.template(principal, body.templateId) : undefined;
    const image = body.imageName ?? template?.imageName;
    if (!image) {
      throw RunplaneError.badRequest(
        'a Pod needs an image: give imageName, or a templateId whose image it runs',
        [{ path: 'imageName', message: 'imageName or templateId is required' }],
      );
    }
    const catalogue = this.catalogue.get();
    if (
      body.networkVolumeId &&
      !(await this.volumes.mountable(principal.userId, body.networkVolumeId))
    ) {
      throw RunplaneError.badRequest(`network volume ${body.networkVolumeId} does not exist`, [
        { path: 'networkVolumeId', message: 'unknown network volume' },
      ]);
    }
    const hardware = sizePod(catalogue, body);
    this.assertGpusExist(gpusNeeded(hardware));
    const env = { ...(template?.env ?? {}), ...(body.env ?? {}) };
    await this.secretEnv.resolve(principal.userId, env); // an unknown secret is a 400 now, not a failed start later
    const entrypoint = body.dockerEntrypoint ?? template?.dockerEntrypoint ?? [];
    const command =
      body.dockerStartCmd ?? startCommand(body.dockerArgs) ?? template?.dockerStartCmd ?? [];
    this.checkRunnable(entrypoint, command, image);

    const now = new Date();
    const id = podId();
    const row = await this.pods.insert({
      id,
      ownerId: principal.userId,
      name: body.name ?? `pod-${id}`.slice(0, MAX_POD_NAME),
      image,
      templateId: template?.id,
      gpuTypeId: hardware.gpuTypeId ?? undefined,
      dockerEntrypoint: entrypoint,
      dockerStartCmd: command,
      ports: body.ports ?? template?.ports ?? [],
      containerDiskInGb: body.containerDiskInGb ?? template?.containerDiskInGb ?? 50,
      volumeInGb: body.volumeInGb ?? template?.volumeInGb ?? 20,
      volumeMountPath: body.volumeMountPath ?? (template?.volumeMountPath || '/workspace'),
      // The template's env with the Pod's own on top, as written: secret references stay references.
      env,
      lastStatusChange: statusChange.podStarting(now),
      desiredStatus: 'RUNNING',
      computeType: hardware.computeType,
      cloudType: body.cloudType ?? 'SECURE',
      gpuCount: hardware.gpuCount,
      cpuFlavorId: hardware.cpuFlavorId,
      vcpuCount: hardware.vcpuCount,
      memoryInGb: hardware.memoryInGb,
      interruptible: body.interruptible ?? false,
      locked: body.locked ?? false,
      volumeEncrypted: body.volumeEncrypted ?? false,
      globalNetworking: body.globalNetworking ?? false,
      containerRegistryAuthId:
        body.containerRegistryAuthId ?? template?.containerRegistryAuthId ?? undefined,
      networkVolumeId: body.networkVolumeId,
    });
    if (!row) throw new RunplaneError(500, 'could not allocate a Pod id');
    this.logger.info(
      { podId: id, ownerId: principal.userId, templateId: template?.id, image },
      'pod created',
    );
    return this.views.render(await this.exclusive(id, () => this.launch(row)));
  }

  async update(principal: Principal, podId: string, input: PodUpdateDto): Promise<Pod> {
    return this.exclusive(podId, async () => {
      const pod = await this.owned(principal, podId);
      const body = declaredFields(PodUpdateDto, input, ['containerRegistryAuthId']);
      const changes: PodChanges = {
        name: body.name,
        image: body.imageName,
        dockerEntrypoint: body.dockerEntrypoint,
        dockerStartCmd: body.dockerStartCmd,
        env: body.env,
        ports: body.ports,
        containerDiskInGb: body.containerDiskInGb,
        volumeInGb: body.volumeInGb,
        volumeMountPath: body.volumeMountPath,
        containerRegistryAuthId: body.containerRegistryAuthId,
        locked: body.locked,
        globalNetworking: body.globalNetworking,
      };
      for (const k of Object.keys(changes) as Array<keyof PodChanges>)
        if (changes[k] === undefined) delete changes[k];
      const restart =
        RUNTIME_FIELDS.some((f) => body[f] !== undefined) && (await this.isRunning(pod));
      if (restart && pod.locked && body.locked !== false)
        throw podLocked(pod.id, 'changed while it runs (the change restarts it)');
      this.checkRunnable(
        changes.dockerEntrypoint ?? pod.dockerEntrypoint,
        changes.dockerStartCmd ?? pod.dockerStartCmd,
        changes.image ?? pod.image,
      );
      if (changes.env) await this.secretEnv.resolve(pod.ownerId, changes.env);
      await this.pods.update(pod.id, changes);
      let row = await this.pods.reload(pod.id);
      // PodUpdateInput "potentially triggering a reset": the new settings take effect at once.
      if (restart) {
        await this.halt(row, 'user');
        row = await this.launch(await this.pods.reload(pod.id));
      }
      return this.views.render(row);
    });
  }

  async delete(principal: Principal, podId: string): Promise<void> {
    await this.exclusive(podId, async () => {
      const pod = await this.owned(principal, podId);
      const now = new Date();
      await this.pods.update(pod.id, {
        desiredStatus: 'TERMINATED',
        deletedAt: now,
        lastStatusChange: statusChange.podTerminated(now),
        gpuWaitSince: null,
      });
      await this.halt(pod, 'deletion');
      await this.compute
        .deleteVolume(pod.id)
        .catch((err) =>
          this.logger.error(
            { podId: pod.id, err: String(err) },
            'could not delete the volume of a deleted pod',
          ),
        );
      this.logger.info({ podId: pod.id }, 'pod deleted');
    });
  }

  async start(principal: Principal, podId: string): Promise<Pod> {
    return this.exclusive(podId, async () => {
      const pod = await this.owned(principal, podId);
      if (await this.isRunning(pod)) return this.views.render(pod);
      return this.views.render(await this.launch(pod));
    });
  }

  async stop(principal: Principal, podId: string): Promise<Pod> {
    return this.exclusive(podId, async () => {
      const pod = await this.owned(principal, podId);
      if (pod.locked) throw podLocked(pod.id, 'stopped');
      const now = new Date();
      if (pod.gpuWaitSince)
        await this.pods.update(pod.id, {
          desiredStatus: 'EXITED',
          gpuWaitSince: null,
          lastStatusChange: statusChange.podStoppedWaiting(now),
        });
      else if (pod.desiredStatus !== 'EXITED')
        await this.pods.update(pod.id, {
          desiredStatus: 'EXITED',
          lastStatusChange: statusChange.podStopping(now),
        });
      await this.halt(pod, 'user');
      return this.views.render(await this.pods.reload(pod.id));
    });
  }

  /** Restart: the workload is stopped and a new one started from the Pod's settings. */
  async restart(principal: Principal, podId: string): Promise<Pod> {
    return this.exclusive(podId, async () => {
      const pod = await this.owned(principal, podId);
      await this.halt(pod, 'user');
      return this.views.render(await this.launch(await this.pods.reload(pod.id)));
    });
  }

  /** Reset: like restart, a fresh workload (container disk wiped), but refused while the Pod is locked. */
  async reset(principal: Principal, podId: string): Promise<Pod> {
    return this.exclusive(podId, async () => {
      const pod = await this.owned(principal, podId);
      if (pod.locked) throw podLocked(pod.id, 'reset');
      await this.halt(pod, 'user');
      return this.views.render(await this.launch(await this.pods.reload(pod.id)));
    });
  }

  // ---- workloads -----------------------------------------------------------------------------

  /**
   * Starts a new run of the Pod (`<podId>-<run>`). A start that fails leaves the Pod EXITED saying
   * why, and the caller gets the Pod (RunPod answers a Pod whatever its state), except for the
   * refusals of checkRunnable, the local run policy and a GPU count the host can never give. Too
   * few free GPUs: the Pod waits for them (RUNNING, `Waiting for GPUs (...)`).
   */
  private async launch(pod: PodRow): Promise<PodRow> {
    await this.runPolicy.assertMayRun(pod.ownerId);
    const now = new Date();
    if (this.compute.kind === 'local' && !this.settings.localPodProcesses) {
      await this.pods.update(pod.id, {
        desiredStatus: 'EXITED',
        lastStatusChange: statusChange.podNotStarted(
          'this server does not run Pod processes: RUNPLANE_LOCAL_POD_PROCESSES=false',
          now,
        ),
        exitedAt: now,
      });
      return this.pods.reload(pod.id);
    }
    this.assertGpusExist(gpusNeeded(pod));
    const outcome = await this.lifecycle.start(pod, {
      ref: `${pod.id}-${pod.runs + 1}`,
      extraEnv: { RUNPOD_POD_ID: pod.id },
      persistentVolume: true,
      labels: {
        podId: pod.id,
        ownerId: pod.ownerId,
        ...(pod.templateId ? { templateId: pod.templateId } : {}),
      },
    });
    if (!outcome.started && outcome.cause === 'gpus') {
      await this.pods.update(pod.id, {
        desiredStatus: 'RUNNING',
        gpuWaitSince: pod.gpuWaitSince ?? now,
        lastStatusChange: statusChange.podWaitingForGpus(outcome.shortage, now),
      });
      if (!pod.gpuWaitSince)
        this.logger.info({ podId: pod.id, ...outcome.shortage }, 'pod waits for GPUs');
    }
    return this.pods.reload(pod.id);
  }

  /**
   * Starts the Pods waiting for GPUs, oldest first, each as far as the free GPUs go (a later Pod
   * that needs fewer may start before an earlier one that needs more). One pass at a time; GPUs
   * freed during a pass run another.
   */
  private resumeWaiting(): void {
    if (this.resuming) {
      this.resumeAgain = true;
      return;
    }
    this.resuming = (async () => {
      do {
        this.resumeAgain = false;
        for (const waiting of await this.pods.waitingForGpus()) {
          await this.exclusive(waiting.id, async () => {
            const pod = await this.pods.reload(waiting.id);
            if (!pod.gpuWaitSince || pod.desiredStatus !== 'RUNNING' || pod.deletedAt) return;
            if (await this.gpus.shortage(gpusNeeded(pod))) return; // still too few: waits on
            await this.launch(pod);
          }).catch((err) =>
            this.logger.error(
              { podId: waiting.id, err: String(err) },
              'could not start a pod that waited for GPUs',
            ),
          );
        }
      } while (this.resumeAgain);
    })().finally(() => (this.resuming = undefined));
  }

  /** Stops the Pod's current workload, if any, and waits for its end. */
  private halt(pod: PodRow, by: 'user' | 'deletion'): Promise<void> {
    return this.lifecycle.stop(pod, by);
  }

  private isRunning(pod: PodRow): Promise<boolean> {
    return this.lifecycle.isRunning(pod);
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** A Pod that needs more GPUs than this host has would wait for ever: refused instead. */
  private assertGpusExist(needed: number): void {
    if (!this.gpus.enabled || needed <= this.gpus.total) return;
    throw new RunplaneError(
      400,
      `this machine has ${this.gpus.total} GPU${this.gpus.total === 1 ? '' : 's'}; a Pod with gpuCount ${needed} can never run here`,
      [{ path: 'gpuCount', message: `must be at most ${this.gpus.total} on this machine` }],
      'NOT_ENOUGH_GPUS',
    );
  }

  /** The local provider runs commands and pulls nothing: a Pod without one cannot run here. */
  private checkRunnable(entrypoint: string[], command: string[], image: string): void {
    if (
      this.compute.kind !== 'local' ||
      !this.settings.localPodProcesses ||
      entrypoint.length + command.length > 0
    )
      return;
    throw new RunplaneError(
      400,
      `nothing to run for image "${image}": the local compute provider runs dockerEntrypoint + dockerStartCmd and does not pull images; ` +
        'set dockerStartCmd (e.g. ["node", "/abs/path/app.mjs"]), or use a template that has one',
      [{ path: 'dockerStartCmd', message: 'must not be empty to run Pods locally' }],
      'POD_COMMAND_MISSING',
    );
  }

  /** The owner's Pod that they manage: another user's, a deleted or an unknown one is 404; a worker Pod is the autoscaler's. */
  private async owned(principal: Principal, podId: string): Promise<PodRow> {
    const pod = await this.pods.findVisible(principal.userId, podId);
    if (!pod) throw podNotFound(podId);
    if (pod.endpointId) {
      throw RunplaneError.conflict(
        `pod ${podId} is a serverless worker of endpoint ${pod.endpointId}: its autoscaler starts and stops it (change the endpoint instead)`,
        'POD_IS_WORKER',
      );
    }
    return pod;
  }

  private async template(principal: Principal, templateId: string): Promise<Template> {
    try {
      return await this.bus.request(TemplateRpc.get, { ownerId: principal.userId, templateId });
    } catch (err) {
      if (err instanceof RunplaneError && err.status === 404) {
        throw new RunplaneError(
          400,
          `template ${templateId} not found`,
          [{ path: 'templateId', message: 'unknown template' }],
          'TEMPLATE_NOT_FOUND',
        );
      }
      throw err;
    }
  }

  private exclusive<T>(podId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(podId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    const tail = next.catch(() => undefined);
    this.locks.set(podId, tail);
    void tail.then(() => {
      if (this.locks.get(podId) === tail) this.locks.delete(podId);
    });
    return next;
  }
}

/** `dockerArgs` (one shell-quoted string) as the start command; "" or absent: not given. */
function startCommand(dockerArgs: string | undefined): string[] | undefined {
  return dockerArgs ? splitDockerArgs(dockerArgs) : undefined;
}

function podNotFound(podId: string): RunplaneError {
  return RunplaneError.notFound(`pod ${podId} not found`, 'POD_NOT_FOUND');
}

function podLocked(podId: string, what: string): RunplaneError {
  return RunplaneError.conflict(
    `pod ${podId} is locked and cannot be ${what}: unlock it first (PATCH /v1/pods/${podId} {"locked": false})`,
    'POD_LOCKED',
  );
}

/** RunPod-style id: 14 lowercase letters and digits (also a valid Kubernetes name). */
function podId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let id = '';
  while (id.length < 14) {
    for (const b of randomBytes(16)) if (b < 252 && id.length < 14) id += alphabet[b % 36];
  }
  return id;
}
