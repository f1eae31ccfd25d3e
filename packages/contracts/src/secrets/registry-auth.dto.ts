import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { HasNoNul } from '../validation/no-nul.js';

/** Registry auth names: unique per user, shown in lists (RunPod's own rule is just "a name"). */
export const REGISTRY_AUTH_NAME_PATTERN = /^[A-Za-z0-9_.:@/ -]{1,128}$/;
/** Largest username or password accepted (registry tokens such as ECR's are a few KiB). */
export const REGISTRY_CREDENTIAL_MAX_CHARS = 16 * 1024;

/** A registry's username and password: GraphQL `updateRegistryAuth(input: {id, username, password})`. */
export class ContainerRegistryCredentialsDto {
  // Messages never mention the value: validation messages are returned and logged.
  @IsString({ message: 'username must be a string' })
  @IsNotEmpty({ message: 'username must not be empty' })
  @MaxLength(REGISTRY_CREDENTIAL_MAX_CHARS, {
    message: `username must be at most ${REGISTRY_CREDENTIAL_MAX_CHARS} characters`,
  })
  @HasNoNul()
  username!: string;

  @IsString({ message: 'password must be a string' })
  @IsNotEmpty({ message: 'password must not be empty' })
  @MaxLength(REGISTRY_CREDENTIAL_MAX_CHARS, {
    message: `password must be at most ${REGISTRY_CREDENTIAL_MAX_CHARS} characters`,
  })
  @HasNoNul()
  password!: string;
}

/**
 * Credentials for a private container registry: REST `POST /v1/containerregistryauth` and GraphQL
 * `saveRegistryAuth(input: {name, username, password})`. Stored sealed, never returned.
 */
export class ContainerRegistryAuthCreateDto extends ContainerRegistryCredentialsDto {
  @IsString({ message: 'name must be a string' })
  @Matches(REGISTRY_AUTH_NAME_PATTERN, {
    message: 'name must be 1 to 128 letters, digits, spaces or "_", ".", ":", "@", "/", "-"',
  })
  name!: string;
}

/** A container registry auth as every API shows it: never its username or password. */
export interface ContainerRegistryAuth {
  id: string;
  name: string;
}
