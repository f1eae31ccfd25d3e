import { IsArray, IsString, ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * A string without NUL characters. A NUL can be neither put in a process's environment nor sent
 * to a registry, so a value holding one would only fail later, at a workload's start, in a log.
 * The message names the rule, never the value.
 */
export function HasNoNul(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'hasNoNul',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !value.includes('\u0000'),
        defaultMessage: (args) => `${args?.property} must not contain a NUL character`,
      },
    },
    options,
  );
}

/** A command line as an argv array: strings without NUL (a process cannot take one). */
export function IsArgv(): PropertyDecorator {
  return (target, property) => {
    IsArray()(target, property);
    IsString({ each: true })(target, property);
    HasNoNul({ each: true })(target, property);
  };
}
