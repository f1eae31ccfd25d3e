import { Transform } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';
import { POD_COMPUTE_TYPES, POD_DESIRED_STATUSES } from '@runplane/contracts';
import { QueryFlag } from '../http/query-flags.js';

/** `?a=x&a=y`, `?a[]=x` or `?a=x,y` → a list. */
const QueryList = () =>
  Transform(({ value }) => {
    const list = (Array.isArray(value) ? value : [value]).flatMap((v) =>
      typeof v === 'string' ? v.split(',') : [v],
    );
    return list.every((v) => typeof v === 'string')
      ? list.map((v: string) => v.trim()).filter(Boolean)
      : value;
  });
/** The last value of a repeated `?a=` (a scalar filter given twice). */
const QueryScalar = () =>
  Transform(({ value }) => (Array.isArray(value) ? value[value.length - 1] : value));

/** Include flags of `GET /v1/pods/{id}` (all default false). */
export class PodGetQuery {
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeMachine must be true or false' })
  includeMachine?: boolean;
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeNetworkVolume must be true or false' })
  includeNetworkVolume?: boolean;
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeSavingsPlans must be true or false' })
  includeSavingsPlans?: boolean;
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeTemplate must be true or false' })
  includeTemplate?: boolean;
  /** Serverless worker Pods are returned only with it. */
  @IsOptional()
  @QueryFlag()
  @IsBoolean({ message: 'includeWorkers must be true or false' })
  includeWorkers?: boolean;
}

/** Filters of `GET /v1/pods`, besides the include flags. */
export class PodListQuery extends PodGetQuery {
  @IsOptional() @QueryScalar() @IsIn(POD_COMPUTE_TYPES) computeType?: 'GPU' | 'CPU';
  @IsOptional() @QueryList() @IsArray() @IsString({ each: true }) cpuFlavorId?: string[];
  @IsOptional() @QueryList() @IsArray() @IsString({ each: true }) dataCenterId?: string[];
  @IsOptional()
  @QueryScalar()
  @IsIn(POD_DESIRED_STATUSES)
  desiredStatus?: (typeof POD_DESIRED_STATUSES)[number];
  @IsOptional() @QueryScalar() @IsString() endpointId?: string;
  @IsOptional() @QueryList() @IsArray() @IsString({ each: true }) gpuTypeId?: string[];
  @IsOptional() @QueryScalar() @IsString() id?: string;
  @IsOptional() @QueryScalar() @IsString() imageName?: string;
  @IsOptional() @QueryScalar() @IsString() name?: string;
  @IsOptional() @QueryScalar() @IsString() networkVolumeId?: string;
  @IsOptional() @QueryScalar() @IsString() templateId?: string;
}
