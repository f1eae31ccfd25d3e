import {
  ValidationPipe,
  type ArgumentMetadata,
  type PipeTransform,
  type ValidationError,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { KEPT_AS_SENT, RunplaneError, type ErrorDetail } from '@runplane/contracts';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, type ValidatorOptions } from 'class-validator';
import { quickTransformer } from './quick-transform.js';
import { passesQuickly } from './quick-validation.js';
import './validation-rules.js';

/** Flattens class-validator's nested errors into `details[{path: "policy.ttl", message}]`. */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.entries(e.constraints ?? {}).map(([constraint, message]) =>
      problem({ path, message }, constraint),
    );
    return [...own, ...flattenValidationErrors(e.children ?? [], path)];
  });
}

/** The message of a failed check; a field the DTO does not declare is named as unknown. */
function problem(detail: ErrorDetail, constraint: string): ErrorDetail {
  return constraint === 'whitelistValidation'
    ? { path: detail.path, message: `unknown field "${detail.path}"` }
    : detail;
}

/**
 * Validates DTOs of HTTP bodies and bus payloads alike; a failure is a 400 RunplaneError whose
 * message names the first problem and whose details list them all. With `rejectUnknownFields`,
 * a request body (nested objects included) may carry only the fields its DTO declares: a
 * misspelt or foreign field is a 400 `unknown field "..."` instead of being dropped unseen.
 * Query strings and bus payloads are never strict (clients send flags we ignore).
 */
export function createValidationPipe(
  options: { rejectUnknownFields?: boolean } = {},
): PipeTransform {
  const lenient = new DataKeepingValidationPipe(pipeOptions(false));
  if (!options.rejectUnknownFields) return lenient;
  const strict = new DataKeepingValidationPipe(pipeOptions(true));
  return {
    transform: (value: unknown, metadata: ArgumentMetadata) =>
      (metadata.type === 'body' ? strict : lenient).transform(value, metadata),
  };
}

/** What the pipe asks class-validator for: bodies strict, query strings and bus payloads not. */
export function pipeValidatorOptions(strict: boolean): ValidatorOptions {
  return {
    forbidUnknownValues: false,
    whitelist: strict,
    forbidNonWhitelisted: strict,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  };
}

function pipeOptions(strict: boolean): ValidationPipeOptions {
  return {
    transform: true,
    transformerPackage: quickTransformer,
    ...pipeValidatorOptions(strict),
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
  };
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Rules that mark a property as data: an env map (`IsStringMap`) or a user's payload (`KeptAsSent`). */
const DATA_RULES = new Set(['isStringMap', KEPT_AS_SENT]);

/**
 * Per DTO class: its data properties and the nested DTO types (`@Type`) found so far. Only keys
 * that have one are remembered: a body's other keys are the client's choice, and remembering
 * those would let requests grow the map without bound.
 */
interface DataShape {
  data: Set<string>;
  nested: Map<string, unknown>;
}
const dataShapes = new WeakMap<object, DataShape>();

function dataShape(type: new () => unknown): DataShape {
  let shape = dataShapes.get(type);
  if (!shape) {
    const data = getMetadataStorage()
      .getTargetValidationMetadatas(type, '', true, false)
      .filter((m) => DATA_RULES.has(m.name ?? ''))
      .map((m) => m.propertyName);
    shape = { data: new Set(data), nested: new Map() };
    dataShapes.set(type, shape);
  }
  return shape;
}

/** The nested DTO type of a DTO's property, if it declares one. */
function nestedType(type: new () => unknown, shape: DataShape, key: string): unknown {
  let nested = shape.nested.get(key);
  if (nested === undefined) {
    nested = defaultMetadataStorage.findTypeMetadata(type, key)?.typeFunction();
    if (nested !== undefined) shape.nested.set(key, nested);
  }
  return nested;
}

/** A data property's value in a body, where it sits there and its path from the body's root. */
interface DataField {
  parent: Plain;
  key: string;
  path: Array<string | number>;
  value: unknown;
}

/** The data properties of a value, nested DTOs (and arrays of them) included. */
function dataFieldsIn(
  type: unknown,
  value: unknown,
  path: Array<string | number> = [],
  found: DataField[] = [],
): DataField[] {
  if (typeof type !== 'function' || type === Object || !isPlain(value)) return found;
  const dto = type as new () => unknown;
  const shape = dataShape(dto);
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (shape.data.has(key)) found.push({ parent: value, key, path: [...path, key], value: item });
    else {
      const nested = nestedType(dto, shape, key);
      if (nested === undefined) continue;
      if (Array.isArray(item))
        item.forEach((each, i) => dataFieldsIn(nested, each, [...path, key, i], found));
      else dataFieldsIn(nested, item, [...path, key], found);
    }
  }
  return found;
}

/** Puts a data value back at its path in the built DTO (whose nested DTOs mirror the body's). */
function restore(entity: unknown, { path, value }: DataField): void {
  let at = entity as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) {
    const next = at[step];
    if (typeof next !== 'object' || next === null) return;
    at = next as Record<string | number, unknown>;
  }
  at[path[path.length - 1]] = value;
}

/**
 * Data properties — env maps, whose keys are variable names, and payloads marked `KeptAsSent` —
 * skip Nest's prototype guard and class-transformer: the guard deletes every `constructor` and
 * `prototype` key of a body (against prototype pollution; `__proto__` never gets here, the JSON
 * body parser refuses it), and class-transformer copies a plain object key by key, dropping every
 * key that shadows an Object.prototype member — in data those are ordinary keys, and walking a
 * large payload twice cost more than parsing it. They are set aside before the two walks and put
 * back (on the body and on the built DTO) before validation, so their own rules still check them.
 */
class DataKeepingValidationPipe extends ValidationPipe {
  private readonly dataFields = new WeakMap<object, DataField[]>();
  /**
   * The fields set aside by the last `stripProtoKeys`. Nest's `transform` calls `stripProtoKeys`
   * and then `validate` with nothing awaited in between, so they are the ones of that `validate`.
   */
  private setAside: DataField[] = [];

  // Every value this pipe sees was parsed from text: JSON bodies (the only body parser), bus
  // payloads (JSON on the wire and in process), query strings, GraphQL arguments. Such a value
  // holds no binary value and no sparse array, so Nest's walks looking for them (about 4 % of a
  // busy `/run` intake's CPU) are skipped.
  protected override findNestedBinaryValues(): ValidationError[] {
    return [];
  }

  protected override closeArrayGaps(): void {}

  override transform(value: unknown, metadata: ArgumentMetadata) {
    const found = dataFieldsIn(metadata.metatype, value);
    if (found.length) this.dataFields.set(value as object, found);
    return super.transform(value, metadata);
  }

  protected override stripProtoKeys(value: unknown): void {
    const found = isPlain(value) ? (this.dataFields.get(value) ?? []) : [];
    if (found.length) this.dataFields.delete(value as object);
    for (const { parent, key } of found) delete parent[key];
    super.stripProtoKeys(value);
    this.setAside = found;
  }

  protected override validate(object: object, options?: ValidatorOptions) {
    const found = this.setAside;
    this.setAside = [];
    for (const field of found) {
      field.parent[field.key] = field.value; // the body as it came, for whoever reads it later
      restore(object, field);
    }
    // A valid object needs no error list: class-validator is asked only when a check fails.
    if (passesQuickly(object, options)) return [];
    return super.validate(object, options);
  }
}
