import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { RunplaneError, type ErrorDetail } from '@runplane/contracts';

/** Flattens class-validator's nested errors into `details[{path: "policy.ttl", message}]`. */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ path, message }));
    return [...own, ...flattenValidationErrors(e.children ?? [], path)];
  });
}

/**
 * Validates DTOs of HTTP bodies and bus payloads alike; a failure is a 400 RunplaneError whose
 * message names the first problem and whose details list them all.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    forbidUnknownValues: false,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const details = flattenValidationErrors(errors);
      const message = details.length
        ? details
            .map((d) => d.message)
            .slice(0, 3)
            .join('; ')
        : 'invalid request';
      return RunplaneError.badRequest(message, details);
    },
  });
}
