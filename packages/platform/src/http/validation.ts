import {
  ValidationPipe,
  type ArgumentMetadata,
  type PipeTransform,
  type ValidationError,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { RunplaneError, type ErrorDetail } from '@runplane/contracts';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage } from 'class-validator';

/**
 * class-validator looks up a class's rules by walking every class it knows (an `instanceof` per
 * class, for inherited rules) at every validation: about 2 % of a busy server's CPU, more than
 * the checks themselves. The rules of a class only change while decorators run (class
 * definition), so the lookup is remembered until any rule is added.
 */
function rememberValidationRules(): void {
  type Storage = ReturnType<typeof getMetadataStorage> & { rulesRemembered?: true };
  const storage = getMetadataStorage() as Storage;
  if (storage.rulesRemembered) return;
  storage.rulesRemembered = true;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  let remembered = new Map<unknown, Map<string, ReturnType<typeof lookup>>>();
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema}\0${always}\0${strictGroups}\0${(groups ?? []).join('\0')}`;
    let byOptions = remembered.get(target);
    if (!byOptions) remembered.set(target, (byOptions = new Map()));
    let rules = byOptions.get(key);
    if (!rules) {
      rules = lookup(target, schema, always, strictGroups, groups);
      // Frozen: every caller only reads the list; one that changed it would now fail loudly.
      Object.freeze(rules);
      byOptions.set(key, rules);
    }
    return rules;
  };
  for (const method of [
    'addValidationMetadata',
    'addConstraintMetadata',
    'addValidationSchema',
  ] as const) {
    const add = storage[method].bind(storage) as (arg: never) => void;
    storage[method] = (arg: never) => {
      remembered = new Map();
      add(arg);
    };
  }
}
rememberValidationRules();

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
  const lenient = new EnvKeepingValidationPipe(pipeOptions(false));
  if (!options.rejectUnknownFields) return lenient;
  const strict = new EnvKeepingValidationPipe(pipeOptions(true));
  return {
    transform: (value: unknown, metadata: ArgumentMetadata) =>
      (metadata.type === 'body' ? strict : lenient).transform(value, metadata),
  };
}

function pipeOptions(strict: boolean): ValidationPipeOptions {
  return {
    transform: true,
    forbidUnknownValues: false,
    whitelist: strict,
    forbidNonWhitelisted: strict,
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
  };
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Per DTO class: its env map properties (checked by `IsStringMap`) and the nested DTO types
 * (`@Type`) found so far. Only keys that have one are remembered: a body's other keys are the
 * client's choice, and remembering those would let requests grow the map without bound.
 */
interface EnvMapShape {
  maps: Set<string>;
  nested: Map<string, unknown>;
}
const envMapShapes = new WeakMap<object, EnvMapShape>();

function envMapShape(type: new () => unknown): EnvMapShape {
  let shape = envMapShapes.get(type);
  if (!shape) {
    const maps = getMetadataStorage()
      .getTargetValidationMetadatas(type, '', true, false)
      .filter((m) => m.name === 'isStringMap')
      .map((m) => m.propertyName);
    shape = { maps: new Set(maps), nested: new Map() };
    envMapShapes.set(type, shape);
  }
  return shape;
}

/** The nested DTO type of a DTO's property, if it declares one. */
function nestedType(type: new () => unknown, shape: EnvMapShape, key: string): unknown {
  let nested = shape.nested.get(key);
  if (nested === undefined) {
    nested = defaultMetadataStorage.findTypeMetadata(type, key)?.typeFunction();
    if (nested !== undefined) shape.nested.set(key, nested);
  }
  return nested;
}

/** The env maps (properties checked by `IsStringMap`) found in a value, nested DTOs included. */
function envMapsIn(type: unknown, value: unknown, found: Array<[Plain, string]> = []) {
  if (typeof type !== 'function' || type === Object || !isPlain(value)) return found;
  const dto = type as new () => unknown;
  const shape = envMapShape(dto);
  for (const key of Object.keys(value)) {
    if (shape.maps.has(key)) found.push([value, key]);
    else {
      const nested = nestedType(dto, shape, key);
      if (nested !== undefined)
        for (const item of [value[key]].flat()) envMapsIn(nested, item, found);
    }
  }
  return found;
}

/**
 * Nest deletes every `constructor`, `prototype` and `__proto__` key of a body before validating
 * it (against prototype pollution). In an env map the keys are variable names, data that is
 * never merged into an object: those maps are set aside while the rest is stripped. (`__proto__`
 * never gets here: the JSON body parser refuses it.)
 */
class EnvKeepingValidationPipe extends ValidationPipe {
  private readonly envMaps = new WeakMap<object, Array<[Plain, string]>>();

  // Every value this pipe sees was parsed from text: JSON bodies (the only body parser), bus
  // payloads (JSON on the wire and in process), query strings, GraphQL arguments. Such a value
  // holds no binary value and no sparse array, so Nest's walks looking for them (about 4 % of a
  // busy `/run` intake's CPU) are skipped.
  protected override findNestedBinaryValues(): ValidationError[] {
    return [];
  }

  protected override closeArrayGaps(): void {}

  override transform(value: unknown, metadata: ArgumentMetadata) {
    const found = envMapsIn(metadata.metatype, value);
    if (found.length) this.envMaps.set(value as object, found);
    return super.transform(value, metadata);
  }

  protected override stripProtoKeys(value: unknown): void {
    const found = isPlain(value) ? (this.envMaps.get(value) ?? []) : [];
    const kept = found.map(([parent, key]) => [parent, key, parent[key]] as const);
    for (const [parent, key] of kept) delete parent[key];
    super.stripProtoKeys(value);
    for (const [parent, key, map] of kept) parent[key] = map;
    if (found.length) this.envMaps.delete(value as object);
  }
}
