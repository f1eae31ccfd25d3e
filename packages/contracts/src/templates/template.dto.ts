import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';
import { KeepEveryKey } from '../validation/env-map.js';
import { HasNoNul, IsArgv } from '../validation/no-nul.js';

export const TEMPLATE_CATEGORIES = ['NVIDIA', 'AMD', 'CPU'] as const;
const PORT = /^\d{1,5}\/(http|tcp)$/;

/**
 * An environment map: an object whose keys are non-empty names without `=` and whose values are
 * strings; neither holds a NUL (a process environment cannot carry one).
 */
export function IsStringMap(options?: ValidationOptions): PropertyDecorator {
  const validate = ValidateBy(
    {
      name: 'isStringMap',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.entries(value).every(
            ([k, v]) =>
              k.length > 0 &&
              !k.includes('=') &&
              typeof v === 'string' &&
              !`${k}${v}`.includes('\u0000'),
          ),
        defaultMessage: (args) => {
          const value = args?.value;
          if (typeof value !== 'object' || value === null || Array.isArray(value))
            return `${args?.property} must be an object mapping names to strings`;
          const bad = Object.entries(value).find(
            ([k, v]) =>
              k.length === 0 ||
              k.includes('=') ||
              typeof v !== 'string' ||
              `${k}${v}`.includes('\u0000'),
          );
          if (bad && typeof bad[1] !== 'string')
            return `${args?.property}.${bad[0]} must be a string`;
          return bad && bad[0].length > 0 && !bad[0].includes('=')
            ? `${args?.property} names and values must not contain a NUL character`
            : `${args?.property} names must be non-empty and must not contain "="`;
        },
      },
    },
    options,
  );
  // Names such as `constructor` or `toString` are legal env names: carried, not dropped.
  return (target, property) => {
    validate(target, property);
    KeepEveryKey()(target, property);
  };
}

/** A dashboard label of one exposed port (RunPod's `portsConfig`): `{"port": "8888", "name": "Jupyter"}`. */
export class PortLabelDto {
  @IsString()
  @Matches(/^\d{1,5}$/, { message: 'port must be a port number like "8888"' })
  port!: string;
  @IsString() @MinLength(1) @MaxLength(64) @HasNoNul() name!: string;
}

/** Body of `POST /v1/templates/{id}/update` and `PATCH`. */
export class TemplateUpdateDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(191) @HasNoNul() name?: string;
  @IsOptional() @IsString() @MinLength(1) @HasNoNul() imageName?: string;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) containerDiskInGb?: number;
  @IsOptional() @IsString() @HasNoNul() containerRegistryAuthId?: string;
  @IsOptional()
  @IsArgv()
  dockerEntrypoint?: string[];
  @IsOptional()
  @IsArgv()
  dockerStartCmd?: string[];
  @IsOptional() @IsObject() @IsStringMap() env?: Record<string, string>;
  @IsOptional() @IsBoolean() isPublic?: boolean;
  @IsOptional()
  @IsArray()
  @Matches(PORT, { each: true, message: 'each port must look like "8888/http" or "22/tcp"' })
  ports?: string[];
  /** Labels of some of `ports` (each port once); a label of a port the template does not expose is refused. */
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PortLabelDto)
  portsConfig?: PortLabelDto[];
  @IsOptional() @IsString() @HasNoNul() readme?: string;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) volumeInGb?: number;
  @IsOptional()
  @IsString()
  @Matches(/^\//, { message: 'volumeMountPath must be an absolute path' })
  @HasNoNul()
  volumeMountPath?: string;
}

/** Body of `POST /v1/templates` (RunPod's TemplateCreateInput: name and imageName required). */
export class TemplateCreateDto extends TemplateUpdateDto {
  // class-validator keeps the parent's @IsOptional() unless the child declares its own conditional
  // validation: `@ValidateIf(() => true)` replaces it, so these two are really required. The
  // child's validators replace the parent's for the property too, hence HasNoNul again.
  @ValidateIf(() => true)
  @IsDefined({ message: 'name is required' })
  @IsString()
  @MinLength(1)
  @MaxLength(191)
  @HasNoNul()
  declare name: string;
  @ValidateIf(() => true)
  @IsDefined({ message: 'imageName is required' })
  @IsString()
  @MinLength(1)
  @HasNoNul()
  declare imageName: string;
  @IsOptional() @IsIn(TEMPLATE_CATEGORIES) category?: (typeof TEMPLATE_CATEGORIES)[number];
  @IsOptional() @IsBoolean() isServerless?: boolean;
}

export interface PortLabel {
  port: string;
  name: string;
}

/** A template as REST v1 returns it. */
export interface Template {
  id: string;
  name: string;
  imageName: string;
  category: string;
  containerDiskInGb: number;
  containerRegistryAuthId?: string | null;
  dockerEntrypoint: string[];
  dockerStartCmd: string[];
  earned: number;
  env: Record<string, string>;
  isPublic: boolean;
  isRunpod: boolean;
  isServerless: boolean;
  ports: string[];
  /** Labels of exposed ports, by port number (always present in answers). */
  portsConfig?: PortLabel[];
  readme: string;
  runtimeInMin: number;
  volumeInGb: number;
  volumeMountPath: string;
}
