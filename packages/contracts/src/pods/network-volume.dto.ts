import {
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { HasNoNul } from '../validation/no-nul.js';

/** Network volume sizes in GB (RunPod REST v1 NetworkVolumeCreateInput). */
export const NETWORK_VOLUME_SIZE = { min: 1, max: 4000 } as const;

/** Body of `PATCH /v1/networkvolumes/{id}` and `POST .../update`: a new name, a larger size. */
export class NetworkVolumeUpdateDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(191) @HasNoNul() name?: string;
  @IsOptional()
  @IsInt()
  @Min(NETWORK_VOLUME_SIZE.min)
  @Max(NETWORK_VOLUME_SIZE.max)
  size?: number;
}

/** Body of `POST /v1/networkvolumes`: all three fields are required. */
export class NetworkVolumeCreateDto {
  @IsDefined({ message: 'name is required' })
  @IsString()
  @MinLength(1)
  @MaxLength(191)
  @HasNoNul()
  name!: string;
  @IsDefined({ message: 'size is required' })
  @IsInt()
  @Min(NETWORK_VOLUME_SIZE.min)
  @Max(NETWORK_VOLUME_SIZE.max)
  size!: number;
  @IsDefined({ message: 'dataCenterId is required' })
  @IsString()
  @MinLength(1)
  dataCenterId!: string;
}

/** A network volume as REST v1 returns it: storage of one user that Pods mount by its id. */
export interface NetworkVolume {
  id: string;
  name: string;
  /** GB. */
  size: number;
  dataCenterId: string;
}
