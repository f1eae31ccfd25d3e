import { flattenValidationErrors } from '@runplane/platform';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync } from 'class-validator';
import { invalid } from './template-shape.js';

/**
 * A GraphQL input checked by the REST DTO's own rules (one rule, two doors): the DTO, or
 * BAD_USER_INPUT naming every problem. Values are never part of the messages.
 */
export function validatedInput<T extends object>(
  dto: ClassConstructor<T>,
  plain: Record<string, unknown>,
): T {
  for (const k of Object.keys(plain))
    if (plain[k] === undefined || plain[k] === null) delete plain[k];
  const instance = plainToInstance(dto, plain);
  const errors = validateSync(instance, {
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
    stopAtFirstError: true, // one message per field
  });
  if (errors.length) throw invalid(flattenValidationErrors(errors));
  return instance;
}
