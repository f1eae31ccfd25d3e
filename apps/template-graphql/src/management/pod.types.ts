import { Field, Float, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { EnvironmentVariableInput } from '../graphql/graphql.types.js';

// Pods as RunPod's GraphQL API shows them (`pod`, `myself { pods }`, the Pod mutations). Like the
// rest of the schema, every argument and input field is nullable; the resolvers check what is
// required. Input fields that mean nothing here are accepted and documented as such.

export enum CloudTypeEnum {
  ALL = 'ALL',
  SECURE = 'SECURE',
  COMMUNITY = 'COMMUNITY',
}
registerEnumType(CloudTypeEnum, {
  name: 'CloudTypeEnum',
  description: 'ALL and SECURE: secure prices; COMMUNITY: community prices.',
});

export enum PodStatus {
  CREATED = 'CREATED',
  RUNNING = 'RUNNING',
  RESTARTING = 'RESTARTING',
  EXITED = 'EXITED',
  PAUSED = 'PAUSED',
  DEAD = 'DEAD',
  TERMINATED = 'TERMINATED',
}
registerEnumType(PodStatus, {
  name: 'PodStatus',
  description: 'Runplane answers RUNNING, EXITED (stopped) or TERMINATED.',
});

@ObjectType('NetworkVolume')
export class NetworkVolumeGql {
  @Field(() => String) id!: string;
  @Field(() => String) name!: string;
  @Field(() => Int, { description: 'GB.' }) size!: number;
  @Field(() => String) dataCenterId!: string;
}

@ObjectType('PodMachineInfo', { description: 'Where the Pod runs (the host or Kubernetes node).' })
export class PodMachineInfo {
  @Field(() => String, { description: 'The Pod id (RunPod: the SSH proxy user).' })
  podHostId!: string;
  @Field(() => String, { nullable: true }) gpuTypeId!: string | null;
  @Field(() => String, { nullable: true }) gpuDisplayName!: string | null;
  @Field(() => String) location!: string;
  @Field(() => String) dataCenterId!: string;
  @Field(() => Boolean) secureCloud!: boolean;
  @Field(() => Boolean) supportPublicIp!: boolean;
  @Field(() => Int) cpuCount!: number;
  @Field(() => String) cpuTypeId!: string;
  @Field(() => Int) gpuAvailable!: number;
  @Field(() => Float) costPerHr!: number;
  @Field(() => Float) currentPricePerGpu!: number;
  @Field(() => Int, { nullable: true }) diskMBps!: number | null;
  @Field(() => Int, { nullable: true }) maxDownloadSpeedMbps!: number | null;
  @Field(() => Int, { nullable: true }) maxUploadSpeedMbps!: number | null;
  @Field(() => String, { nullable: true }) maintenanceStart!: string | null;
  @Field(() => String, { nullable: true }) maintenanceEnd!: string | null;
  @Field(() => String, { nullable: true }) maintenanceNote!: string | null;
  @Field(() => String) note!: string;
}

@ObjectType('PodRuntimePorts')
export class PodRuntimePorts {
  @Field(() => String, { nullable: true, description: 'The address clients reach it at.' })
  ip!: string | null;
  @Field(() => Boolean) isIpPublic!: boolean;
  @Field(() => Int) privatePort!: number;
  @Field(() => Int) publicPort!: number;
  @Field(() => String, { description: '"http" or "tcp".' }) type!: string;
}

@ObjectType('PodRuntimeGpus')
export class PodRuntimeGpus {
  @Field(() => String) id!: string;
  @Field(() => Float, { nullable: true, description: 'Not measured: null.' })
  gpuUtilPercent!: number | null;
  @Field(() => Float, { nullable: true, description: 'Not measured: null.' })
  memoryUtilPercent!: number | null;
}

@ObjectType('PodRuntimeContainer')
export class PodRuntimeContainer {
  @Field(() => Float, { nullable: true, description: 'Not measured: null.' })
  cpuPercent!: number | null;
  @Field(() => Float, { nullable: true, description: 'Not measured: null.' })
  memoryPercent!: number | null;
}

@ObjectType('PodRuntime', { description: 'Present while the Pod runs; null otherwise.' })
export class PodRuntime {
  @Field(() => Int) uptimeInSeconds!: number;
  @Field(() => [PodRuntimePorts]) ports!: PodRuntimePorts[];
  @Field(() => [PodRuntimeGpus]) gpus!: PodRuntimeGpus[];
  @Field(() => PodRuntimeContainer) container!: PodRuntimeContainer;
}

@ObjectType('Pod', { description: 'A Pod: the same Pod as REST /v1/pods/{id}.' })
export class PodGql {
  @Field(() => String) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) imageName!: string;
  @Field(() => PodStatus) desiredStatus!: PodStatus;
  @Field(() => Float) costPerHr!: number;
  @Field(() => Float) adjustedCostPerHr!: number;
  @Field(() => Int) containerDiskInGb!: number;
  @Field(() => Int) volumeInGb!: number;
  @Field(() => String, { nullable: true }) volumeMountPath!: string | null;
  @Field(() => Int) gpuCount!: number;
  @Field(() => Int, { description: 'GB, rounded.' }) memoryInGb!: number;
  @Field(() => Int) vcpuCount!: number;
  @Field(() => String, { description: 'Comma-separated "<port>/<http|tcp>" items.' })
  ports!: string;
  @Field(() => [String], {
    description: '"KEY=value" items, as written (secret references stay references).',
  })
  env!: string[];
  @Field(() => String, { description: 'The start command as one shell-quoted string.' })
  dockerArgs!: string;
  @Field(() => String, { nullable: true, description: 'Always null.' }) dockerId!: string | null;
  @Field(() => String, { description: 'RESERVED, or INTERRUPTABLE for interruptible Pods.' })
  podType!: string;
  @Field(() => Int, { nullable: true, description: 'Always null (see ports).' }) port!:
    number | null;
  @Field(() => Int, { description: 'Seconds since its last start while it runs; 0 otherwise.' })
  uptimeSeconds!: number;
  @Field(() => String) lastStatusChange!: string;
  @Field(() => String, { nullable: true }) lastStartedAt!: string | null;
  @Field(() => String) createdAt!: string;
  @Field(() => String) machineId!: string;
  @Field(() => PodMachineInfo, { nullable: true }) machine?: PodMachineInfo | null;
  @Field(() => PodRuntime, { nullable: true }) runtime!: PodRuntime | null;
  @Field(() => String, { nullable: true }) templateId!: string | null;
  @Field(() => String, { nullable: true }) networkVolumeId!: string | null;
  @Field(() => NetworkVolumeGql, { nullable: true }) networkVolume?: NetworkVolumeGql | null;
  @Field(() => String, { nullable: true }) endpointId!: string | null;
  @Field(() => String, { nullable: true }) aiApiId!: string | null;
  @Field(() => Int, { nullable: true }) slsVersion!: number | null;
  @Field(() => String, { nullable: true }) cpuFlavorId!: string | null;
  @Field(() => String, { nullable: true }) containerRegistryAuthId!: string | null;
  @Field(() => String) consumerUserId!: string;
  @Field(() => Boolean) locked!: boolean;
  @Field(() => Boolean) interruptible!: boolean;
  @Field(() => Boolean) volumeEncrypted!: boolean;
}

/** Fields both Pod-creating mutations take. */
@InputType({ isAbstract: true })
class PodDeployInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'Required unless templateId gives one.' })
  imageName?: string | null;
  @Field(() => String, { nullable: true }) templateId?: string | null;
  @Field(() => CloudTypeEnum, { nullable: true }) cloudType?: CloudTypeEnum | null;
  @Field(() => Int, { nullable: true }) containerDiskInGb?: number | null;
  @Field(() => Int, { nullable: true }) volumeInGb?: number | null;
  @Field(() => String, { nullable: true }) volumeMountPath?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'The start command as one string; "" for the template\'s or image\'s.',
  })
  dockerArgs?: string | null;
  @Field(() => String, { nullable: true, description: 'Comma-separated "<port>/<http|tcp>".' })
  ports?: string | null;
  @Field(() => [EnvironmentVariableInput], { nullable: 'itemsAndList' })
  env?: Array<EnvironmentVariableInput | null> | null;
  @Field(() => String, { nullable: true }) networkVolumeId?: string | null;
  @Field(() => String, { nullable: true, description: 'A placement preference (no effect).' })
  dataCenterId?: string | null;
  @Field(() => String, { nullable: true, description: 'A placement preference (no effect).' })
  countryCode?: string | null;
  @Field(() => String, { nullable: true }) containerRegistryAuthId?: string | null;
  @Field(() => Boolean, {
    nullable: true,
    description: 'No effect: Runplane starts no SSH server.',
  })
  startSsh?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'No effect: Runplane starts no Jupyter.' })
  startJupyter?: boolean | null;
  @Field(() => Boolean, { nullable: true }) supportPublicIp?: boolean | null;
  @Field(() => Int, { nullable: true, description: 'Mbps; a placement preference (no effect).' })
  minDownload?: number | null;
  @Field(() => Int, { nullable: true, description: 'Mbps; a placement preference (no effect).' })
  minUpload?: number | null;
  @Field(() => Float, { nullable: true, description: 'No effect: prices come from the catalogue.' })
  deployCost?: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'No effect: Pods are not stopped automatically.',
  })
  stopAfter?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'No effect: Pods are not terminated automatically.',
  })
  terminateAfter?: string | null;
}

@InputType('PodFindAndDeployOnDemandInput', {
  description: 'A GPU Pod (or a CPU Pod with computeType CPU).',
})
export class PodFindAndDeployOnDemandInput extends PodDeployInput {
  @Field(() => String, {
    nullable: true,
    description: "Default: the catalogue's default GPU type.",
  })
  gpuTypeId?: string | null;
  @Field(() => [String], {
    nullable: 'itemsAndList',
    description: 'More GPU types, in order of preference.',
  })
  gpuTypeIdList?: Array<string | null> | null;
  @Field(() => Int, { nullable: true }) gpuCount?: number | null;
  @Field(() => Int, { nullable: true, description: 'At least this many vCPUs in all.' })
  minVcpuCount?: number | null;
  @Field(() => Int, { nullable: true, description: 'At least this much memory (GB) in all.' })
  minMemoryInGb?: number | null;
  @Field(() => Int, { nullable: true, description: 'No effect.' }) minDisk?: number | null;
  @Field(() => [String], { nullable: 'itemsAndList', description: 'Recorded (no effect).' })
  allowedCudaVersions?: Array<string | null> | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) minCudaVersion?:
    string | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) cudaVersion?: string | null;
  @Field(() => String, { nullable: true, description: 'GPU (default) or CPU.' })
  computeType?: string | null;
  @Field(() => [String], {
    nullable: 'itemsAndList',
    description: 'CPU Pods: "<flavor>-<vcpus>-<memory>", e.g. cpu3c-2-4.',
  })
  instanceIds?: Array<string | null> | null;
  @Field(() => [String], { nullable: 'itemsAndList', description: 'No effect.' })
  compliance?: Array<string | null> | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) aiApiId?: string | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) volumeKey?: string | null;
  @Field(() => Int, { nullable: true, description: 'No effect (see ports).' }) port?: number | null;
}

@InputType('deployCpuPodInput', { description: 'A CPU Pod.' })
export class DeployCpuPodInput extends PodDeployInput {
  @Field(() => String, {
    nullable: true,
    description:
      '"<flavor>-<vcpus>-<memory>", e.g. cpu3c-2-4; default: the catalogue\'s default flavor, 2 vCPUs.',
  })
  instanceId?: string | null;
}

@InputType('PodFilter')
export class PodFilter {
  @Field(() => String, { nullable: true }) podId?: string | null;
}

@InputType('PodStopInput')
export class PodStopInput {
  @Field(() => String, { nullable: true }) podId?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'No effect.' }) incrementVersion?:
    boolean | null;
}

@InputType('PodResumeInput')
export class PodResumeInput {
  @Field(() => String, { nullable: true }) podId?: string | null;
  @Field(() => Int, { nullable: true, description: 'No effect: the Pod keeps its GPUs.' })
  gpuCount?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'No effect.' }) syncMachine?: boolean | null;
  @Field(() => String, { nullable: true, description: 'No effect.' }) computeType?: string | null;
}

@InputType('PodBidResumeInput')
export class PodBidResumeInput {
  @Field(() => String, { nullable: true }) podId?: string | null;
  @Field(() => Float, { nullable: true, description: 'No effect: resumed at its catalogue price.' })
  bidPerGpu?: number | null;
  @Field(() => Int, { nullable: true, description: 'No effect.' }) gpuCount?: number | null;
}

@InputType('PodTerminateInput')
export class PodTerminateInput {
  @Field(() => String, { nullable: true }) podId?: string | null;
}
