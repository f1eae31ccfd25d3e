import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { RunplaneError, TemplateRpc, type Pod, type Template } from '@runplane/contracts';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import { machineView } from '../catalogue/machine-view.js';
import {
  adjustedCost,
  gpuObject,
  plansFor,
  podCost,
  savingsPlanView,
} from '../catalogue/pricing.js';
import { ComputeProvider, type MachineFacts } from '../compute/compute-provider.js';
import { HostGpus } from '../gpus/host-gpus.js';
import {
  NetworkVolumesService,
  type MountableVolume,
} from '../network-volumes/network-volumes.service.js';
import type { PodRow } from './pods.repository.js';

export interface PodIncludes {
  includeMachine?: boolean;
  includeNetworkVolume?: boolean;
  includeSavingsPlans?: boolean;
  includeTemplate?: boolean;
}

/** Pod rows as REST v1 returns them, priced from the catalogue. */
@Injectable()
export class PodViews {
  constructor(
    private readonly catalogue: CatalogueService,
    private readonly compute: ComputeProvider,
    private readonly bus: Bus,
    private readonly volumes: NetworkVolumesService,
    private readonly hostGpus: HostGpus,
  ) {}

  async render(row: PodRow, include: PodIncludes = {}): Promise<Pod> {
    return (await this.renderMany([row], include))[0];
  }

  async renderMany(rows: PodRow[], include: PodIncludes = {}): Promise<Pod[]> {
    const catalogue = this.catalogue.get();
    const now = new Date();
    const templates = include.includeTemplate
      ? await this.templates(rows)
      : new Map<string, Template>();
    const machines = new Map<string, Awaited<ReturnType<ComputeProvider['describeMachine']>>>();
    if (include.includeMachine) {
      for (const id of new Set(rows.map((r) => this.machineIdOf(r)).filter(Boolean)))
        machines.set(
          id,
          this.withHostGpus(id, await this.compute.describeMachine(id).catch(() => null)),
        );
    }
    const volumes = new Map<string, MountableVolume>();
    if (include.includeNetworkVolume) {
      for (const row of rows) {
        const key = `${row.ownerId}/${row.networkVolumeId}`;
        if (!row.networkVolumeId || volumes.has(key)) continue;
        const volume = await this.volumes.mountable(row.ownerId, row.networkVolumeId);
        if (volume) volumes.set(key, volume);
      }
    }
    return rows.map((row) => {
      const priced = { ...row, gpuTypeId: row.gpuTypeId ?? null };
      const machineId = this.machineIdOf(row);
      const pod: Pod = {
        id: row.id,
        name: row.name,
        adjustedCostPerHr: adjustedCost(catalogue, priced, now),
        costPerHr: podCost(catalogue, priced),
        aiApiId: row.aiApiId ?? null,
        endpointId: row.endpointId ?? null,
        slsVersion: row.slsVersion ?? null,
        consumerUserId: row.ownerId,
        containerDiskInGb: row.containerDiskInGb,
        containerRegistryAuthId: row.containerRegistryAuthId ?? null,
        cpuFlavorId: row.computeType === 'CPU' ? (row.cpuFlavorId ?? null) : null,
        desiredStatus: row.desiredStatus,
        dockerEntrypoint: row.dockerEntrypoint,
        dockerStartCmd: row.dockerStartCmd,
        env: (row.env ?? {}) as Record<string, string>,
        gpu:
          row.computeType === 'GPU' && row.gpuTypeId
            ? gpuObject(catalogue, row.gpuTypeId, row.gpuCount)
            : null,
        image: row.image,
        imageName: row.image,
        interruptible: row.interruptible,
        lastStartedAt: row.lastStartedAt?.toISOString() ?? null,
        lastStatusChange: row.lastStatusChange,
        locked: row.locked,
        machineId,
        memoryInGb: row.memoryInGb,
        portMappings: (row.portMappings ?? {}) as Record<string, number>,
        ports: row.ports,
        publicIp: row.publicIp ?? null,
        templateId: row.templateId ?? null,
        vcpuCount: row.vcpuCount,
        volumeEncrypted: row.volumeEncrypted,
        volumeInGb: row.volumeInGb,
        volumeMountPath: row.volumeMountPath ?? null,
        networkVolumeId: row.networkVolumeId ?? null,
        gpuTypeId: row.computeType === 'GPU' ? (row.gpuTypeId ?? null) : null,
        gpuCount: row.computeType === 'GPU' ? row.gpuCount : 0,
        createdAt: row.createdAt.toISOString(),
      };
      if (include.includeMachine && machineId)
        pod.machine = machineView(catalogue, machineId, machines.get(machineId) ?? null, priced);
      const volume = row.networkVolumeId && volumes.get(`${row.ownerId}/${row.networkVolumeId}`);
      if (volume)
        pod.networkVolume = {
          id: volume.id,
          name: volume.name,
          size: volume.size,
          dataCenterId: volume.dataCenterId,
        };
      if (include.includeSavingsPlans)
        pod.savingsPlans = plansFor(catalogue, priced, now).map((p) => savingsPlanView(p, row.id));
      if (include.includeTemplate && row.templateId && templates.has(row.templateId))
        pod.template = templates.get(row.templateId);
      return pod;
    });
  }

  /** This host's GPUs are those pod-rest hands out (RUNPLANE_GPUS may name others than nvidia-smi). */
  private withHostGpus(machineId: string, facts: MachineFacts | null): MachineFacts | null {
    if (!facts || !this.hostGpus.gpus.length || machineId !== this.compute.defaultMachineId())
      return facts;
    return {
      ...facts,
      gpus: this.hostGpus.gpus.map((g) => ({ name: g.name, memoryInGb: g.memoryInGb })),
    };
  }

  /** Where it runs or last ran; the local provider has one machine, so a Pod that never ran is on it too. */
  private machineIdOf(row: PodRow): string {
    return row.machineId || this.compute.defaultMachineId();
  }

  /** Templates of the rows the owner may read (their own or public); others are left out. */
  private async templates(rows: PodRow[]): Promise<Map<string, Template>> {
    const found = new Map<string, Template>();
    const wanted = new Map(rows.filter((r) => r.templateId).map((r) => [r.templateId!, r.ownerId]));
    await Promise.all(
      [...wanted].map(async ([templateId, ownerId]) => {
        try {
          found.set(templateId, await this.bus.request(TemplateRpc.get, { ownerId, templateId }));
        } catch (err) {
          if (!(err instanceof RunplaneError && err.status === 404)) throw err;
        }
      }),
    );
    return found;
  }
}
