import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

export const TEMPLATE_CATEGORIES = ['NVIDIA', 'AMD', 'CPU'] as const;
const PORT = /^\d{1,5}\/(http|tcp)$/;

/** Body of `POST /v1/templates/{id}/update` and `PATCH` (spec "Template update body"). */
export class TemplateUpdateDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(191) name?: string;
  @IsOptional() @IsString() @MinLength(1) imageName?: string;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) containerDiskInGb?: number;
  @IsOptional() @IsString() containerRegistryAuthId?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) dockerEntrypoint?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) dockerStartCmd?: string[];
  @IsOptional() @IsObject() env?: Record<string, string>;
  @IsOptional() @IsBoolean() isPublic?: boolean;
  @IsOptional() @IsArray() @Matches(PORT, { each: true, message: 'each port must look like "8888/http" or "22/tcp"' }) ports?: string[];
  @IsOptional() @IsString() readme?: string;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) volumeInGb?: number;
  @IsOptional() @IsString() @Matches(/^\//, { message: 'volumeMountPath must be an absolute path' }) volumeMountPath?: string;
}

/** Body of `POST /v1/templates` (reference §4.3 TemplateCreateInput: name and imageName required). */
export class TemplateCreateDto extends TemplateUpdateDto {
  @IsString() @MinLength(1) @MaxLength(191) declare name: string;
  @IsString() @MinLength(1) declare imageName: string;
  @IsOptional() @IsIn(TEMPLATE_CATEGORIES) category?: (typeof TEMPLATE_CATEGORIES)[number];
  @IsOptional() @IsBoolean() isServerless?: boolean;
}

/** A template as REST v1 returns it (spec "Template (REST)"). */
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
  readme: string;
  runtimeInMin: number;
  volumeInGb: number;
  volumeMountPath: string;
}
