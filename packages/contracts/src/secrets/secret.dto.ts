import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { HasNoNul } from '../validation/no-nul.js';

/**
 * Secret names: what may follow `RUNPOD_SECRET_` in a template env reference, so
 * every secret can be referenced.
 */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
/** Largest secret value accepted (it ends up in a worker's environment). */
export const SECRET_VALUE_MAX_BYTES = 64 * 1024;

/** GraphQL `SecretCreateInput` {name, value, description}. */
export class SecretCreateDto {
  @IsString({ message: 'name must be a string' })
  @Matches(SECRET_NAME_PATTERN, {
    message:
      'name must be 1 to 128 letters, digits, "_", "." or "-" (it is referenced as {{ RUNPOD_SECRET_<name> }})',
  })
  name!: string;

  // Deliberately no message mentioning the value: validation messages are returned and logged.
  @IsString({ message: 'value must be a string' })
  @MaxLength(SECRET_VALUE_MAX_BYTES, {
    message: `value must be at most ${SECRET_VALUE_MAX_BYTES} characters`,
  })
  @HasNoNul()
  value!: string;

  @IsOptional() @IsString() @MaxLength(1000) description?: string | null;
}

/** A secret as every API shows it: never its value (values are write-only). */
export interface Secret {
  id: string;
  name: string;
  description: string | null;
  /** ISO timestamps. */
  createdAt: string;
  updatedAt: string;
}
