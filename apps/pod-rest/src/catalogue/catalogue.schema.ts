import { plainToInstance, Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDateString,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Min,
  MinLength,
  ValidateNested,
  validateSync,
  type ValidationError,
} from 'class-validator';

/**
 * The operator's machine and price catalogue (docs/compute.md), as read from YAML. Validated with
 * the same class-validator rules as API bodies, so a mistake is reported with the path of the
 * offending field (`gpuTypes[2].prices.secure must not be less than 0`).
 */
const price = () => (target: object, key: string) => {
  IsNumber({ allowNaN: false, allowInfinity: false }, { message: `${key} must be a number` })(
    target,
    key,
  );
  Min(0)(target, key);
};

export class GpuPrices {
  @price() secure!: number;
  @price() community!: number;
  @price() secureSpot!: number;
  @price() communitySpot!: number;
  @price() oneWeek!: number;
  @price() oneMonth!: number;
  @price() threeMonth!: number;
  @price() sixMonth!: number;
}

export class CatalogueGpuType {
  @IsString() @MinLength(1) id!: string;
  @IsString() @MinLength(1) displayName!: string;
  @IsOptional() @IsNumber() @Min(0) memoryInGb?: number;
  @IsNumber() @Min(0) ramPerGpuInGb!: number;
  @IsInt() @Min(1) vcpuPerGpu!: number;
  /** Kubernetes extended resource name of this GPU (default `nvidia.com/gpu`). */
  @IsOptional() @IsString() @MinLength(1) resource?: string;
  /** Kubernetes: node labels a Pod with this GPU must run on, e.g. `nvidia.com/gpu.product: NVIDIA-GeForce-RTX-4090`. */
  @IsOptional() @IsObject() nodeSelector?: Record<string, string>;
  /** The serverless GPU pool it belongs to (RunPod's `gpuIds` of an endpoint, e.g. `ADA_24`). */
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z0-9_]+$/, { message: 'pool must be like ADA_24' })
  pool?: string;
  /** Other names of this GPU (as nvidia-smi or node labels print them). */
  @IsOptional() @IsArray() @IsString({ each: true }) aliases?: string[];
  @IsObject() @ValidateNested() @Type(() => GpuPrices) prices!: GpuPrices;
}

export class CatalogueCpuFlavor {
  @IsString() @MinLength(1) id!: string;
  @IsString() @MinLength(1) displayName!: string;
  @price() pricePerVcpu!: number;
  @IsNumber() @Min(0) ramPerVcpuInGb!: number;
}

export class CatalogueMachine {
  @IsString() @MinLength(1) id!: string;
  @IsOptional() @IsString() location?: string;
  @IsOptional() @IsString() dataCenterId?: string;
  @IsOptional() @IsNumber() @Min(0) diskThroughputMBps?: number;
  @IsOptional() @IsNumber() @Min(0) maxDownloadSpeedMbps?: number;
  @IsOptional() @IsNumber() @Min(0) maxUploadSpeedMbps?: number;
  @IsOptional() @IsBoolean() supportPublicIp?: boolean;
  @IsOptional() @IsBoolean() secureCloud?: boolean;
  @IsOptional() @IsDateString() maintenanceStart?: string;
  @IsOptional() @IsDateString() maintenanceEnd?: string;
  @IsOptional() @IsString() maintenanceNote?: string;
  @IsOptional() @IsString() note?: string;
}

export class CatalogueNetworkVolume {
  @IsString() @MinLength(1) id!: string;
  @IsString() @MinLength(1) name!: string;
  @IsNumber() @Min(0) size!: number;
  @IsOptional() @IsString() dataCenterId?: string;
  /** Kubernetes: the PersistentVolumeClaim mounted for it (default: the id). */
  @IsOptional() @IsString() @MinLength(1) claimName?: string;
}

export class CatalogueSavingsPlan {
  @IsString() @MinLength(1) id!: string;
  /** The user whose Pods it covers. */
  @IsString() @MinLength(1) userId!: string;
  /** Only this Pod of the user (optional). */
  @IsOptional() @IsString() @MinLength(1) podId?: string;
  @IsString() @MinLength(1) gpuTypeId!: string;
  /** Per GPU and hour. */
  @price() costPerHr!: number;
  @IsDateString() startTime!: string;
  @IsDateString() endTime!: string;
}

export class CatalogueDefaults {
  @IsString() @MinLength(1) gpuTypeId!: string;
  @IsString() @MinLength(1) cpuFlavorId!: string;
  @IsString() dataCenterId = 'LOCAL-1';
  @IsString() location = 'Local';
}

export class Catalogue {
  @IsIn([1], { message: 'version must be 1' }) version!: number;
  @IsObject() @ValidateNested() @Type(() => CatalogueDefaults) defaults!: CatalogueDefaults;
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CatalogueGpuType)
  gpuTypes!: CatalogueGpuType[];
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CatalogueCpuFlavor)
  cpuFlavors!: CatalogueCpuFlavor[];
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CatalogueMachine)
  machines: CatalogueMachine[] = [];
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CatalogueNetworkVolume)
  networkVolumes: CatalogueNetworkVolume[] = [];
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CatalogueSavingsPlan)
  savingsPlans: CatalogueSavingsPlan[] = [];
}

/** Validates a parsed YAML document; returns the catalogue or the list of problems (path: message). */
export function validateCatalogue(
  raw: unknown,
): { catalogue: Catalogue; problems: [] } | { catalogue?: undefined; problems: string[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return {
      problems: ['the document must be a mapping (version, defaults, gpuTypes, cpuFlavors, ...)'],
    };
  const catalogue = plainToInstance(Catalogue, raw, { exposeDefaultValues: true });
  const problems = flatten(
    validateSync(catalogue, { forbidUnknownValues: false, whitelist: false }),
  );
  if (problems.length) return { problems };

  const unique = (list: Array<{ id: string }>, what: string) => {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (seen.has(item.id)) problems.push(`${what}[${i}].id: "${item.id}" is listed twice`);
      seen.add(item.id);
    });
    return seen;
  };
  const gpus = unique(catalogue.gpuTypes, 'gpuTypes');
  const flavors = unique(catalogue.cpuFlavors, 'cpuFlavors');
  unique(catalogue.machines, 'machines');
  unique(catalogue.networkVolumes, 'networkVolumes');
  unique(catalogue.savingsPlans, 'savingsPlans');
  if (!gpus.has(catalogue.defaults.gpuTypeId))
    problems.push(`defaults.gpuTypeId: "${catalogue.defaults.gpuTypeId}" is not one of gpuTypes`);
  if (!flavors.has(catalogue.defaults.cpuFlavorId))
    problems.push(
      `defaults.cpuFlavorId: "${catalogue.defaults.cpuFlavorId}" is not one of cpuFlavors`,
    );
  catalogue.savingsPlans.forEach((plan, i) => {
    if (!gpus.has(plan.gpuTypeId))
      problems.push(`savingsPlans[${i}].gpuTypeId: "${plan.gpuTypeId}" is not one of gpuTypes`);
    if (Date.parse(plan.endTime) <= Date.parse(plan.startTime))
      problems.push(`savingsPlans[${i}].endTime must be after startTime`);
  });
  catalogue.machines.forEach((m, i) => {
    if (
      m.maintenanceStart &&
      m.maintenanceEnd &&
      Date.parse(m.maintenanceEnd) < Date.parse(m.maintenanceStart)
    ) {
      problems.push(`machines[${i}].maintenanceEnd must not be before maintenanceStart`);
    }
  });
  return problems.length ? { problems } : { catalogue, problems: [] };
}

/** `gpuTypes[2].prices.secure: secure must not be less than 0`, one line per failed constraint. */
function flatten(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = /^\d+$/.test(e.property)
      ? `${prefix}[${e.property}]`
      : prefix
        ? `${prefix}.${e.property}`
        : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m}`);
    return [...own, ...flatten(e.children ?? [], path)];
  });
}
