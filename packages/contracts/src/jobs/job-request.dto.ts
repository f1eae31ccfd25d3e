import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { KeptAsSent } from '../validation/kept-as-sent.js';
import { JOB_LIMITS } from './limits.js';

/** Execution policy of one job. */
export class JobPolicyDto {
  @IsOptional()
  @IsInt({ message: 'policy.executionTimeout must be an integer number of milliseconds' })
  @Min(JOB_LIMITS.executionTimeout.min, {
    message: 'policy.executionTimeout must be at least 5000 ms (5 s)',
  })
  @Max(JOB_LIMITS.executionTimeout.max, {
    message: 'policy.executionTimeout must be at most 604800000 ms (7 days)',
  })
  executionTimeout?: number;

  @IsOptional()
  @IsBoolean({ message: 'policy.lowPriority must be a boolean' })
  lowPriority?: boolean;

  @IsOptional()
  @IsInt({ message: 'policy.ttl must be an integer number of milliseconds' })
  @Min(JOB_LIMITS.ttl.min, { message: 'policy.ttl must be at least 10000 ms (10 s)' })
  @Max(JOB_LIMITS.ttl.max, { message: 'policy.ttl must be at most 604800000 ms (7 days)' })
  ttl?: number;
}

/** Object-storage settings handed to the worker untouched. */
export class S3ConfigDto {
  @IsOptional() @IsString() accessId?: string;
  @IsOptional() @IsString() accessSecret?: string;
  @IsOptional() @IsString() bucketName?: string;
  @IsOptional() @IsString() endpointUrl?: string;
  @IsOptional() @IsString() objectPath?: string;
}

/** Body of `POST /run` and `POST /runsync`. */
export class JobRequestDto {
  @IsObject({ message: 'input is required and must be a JSON object' })
  @KeptAsSent()
  input!: Record<string, unknown>;

  @IsOptional()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'webhook must be an http(s) URL' },
  )
  webhook?: string;

  @IsOptional()
  @IsObject({ message: 'policy must be an object' })
  @ValidateNested()
  @Type(() => JobPolicyDto)
  policy?: JobPolicyDto;

  @IsOptional()
  @IsObject({ message: 's3Config must be an object' })
  @ValidateNested()
  @Type(() => S3ConfigDto)
  s3Config?: S3ConfigDto;
}
