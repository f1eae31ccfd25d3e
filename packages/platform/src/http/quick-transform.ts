import * as classTransformer from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import type { Type, ValidationPipeOptions } from '@nestjs/common';

type TransformerPackage = Required<ValidationPipeOptions>['transformerPackage'];
type ClassTransformOptions = ValidationPipeOptions['transformOptions'];

/**
 * class-transformer's `plainToInstance` without its machinery, for the JSON objects (and query
 * strings) the validation pipe builds DTOs from (`transformerPackage` of Nest's ValidationPipe).
 *
 * class-transformer looks up expose, exclude, type and transform metadata for every key of every
 * object at every call, through each class's ancestors: on a busy `/run` intake that was about 4 %
 * of the server's CPU, building DTOs of a handful of keys. Here a class is checked once for the
 * metadata that changes what is built (`@Expose`/`@Exclude`, `@Transform`, discriminators, maps
 * and sets, Date and Buffer values), and a key's type is looked up once per class. Objects are
 * then built with the steps class-transformer 0.5 takes for them: `new Class()`, then every own key
 * but `__proto__` and `constructor` in order, skipping a key the prototype answers with a function
 * or a getter without setter; nested objects and arrays built the same way, typed by `@Type`
 * (String, Number and Boolean converted as it converts them) or copied as plain objects. Anything
 * else — another kind of value, options, a class with such metadata anywhere in the value — goes
 * to class-transformer whole, so the result is always the one it would have built
 * (`test/quick-transform.test.ts` compares the two over generated payloads for every DTO).
 */
export const quickTransformer: TransformerPackage = {
  plainToInstance<T>(type: Type<T>, plain: unknown, options?: ClassTransformOptions): T | T[] {
    if (options === undefined) {
      const built = buildQuickly(type, plain);
      if (built !== undefined) return built as T;
    }
    return classTransformer.plainToInstance(type, plain, options as never);
  },
  classToPlain: (object: unknown, options?: ClassTransformOptions) =>
    classTransformer.classToPlain(object, options as never),
};

/** `plain` built as an instance of `type`, or undefined where class-transformer must build it. */
export function buildQuickly(type: unknown, plain: unknown): object | undefined {
  if (typeof type !== 'function' || !isPlainObject(plain)) return undefined;
  const built = build(type, plain);
  return built === DEFER ? undefined : (built as object);
}

/** A part of the value this does not build as class-transformer would: the whole value is its. */
const DEFER = Symbol('defer');

type Constructor = new () => Record<string, unknown>;

/** Types class-transformer converts a value to as these functions do (null and undefined kept). */
const CONVERSIONS = new Map<unknown, (value: unknown) => unknown>([
  [String, String],
  [Number, Number],
  [Boolean, Boolean],
]);

/** Types it builds anew from a value (`new Date(value)`, `Buffer.from(value)`): left to it. */
const REBUILT = new Set<unknown>([Date, globalThis.Buffer]);

/**
 * A key's type as class-transformer reads it from `@Type`, and whether an array there is built as
 * a plain array (its reflected type Array or Object, or none); DEFER where it does more.
 */
type KeyType =
  | { typeFunction?: (options: classTransformer.TypeHelpOptions) => unknown; plainArray: boolean }
  | typeof DEFER;

/** A class's keys looked up so far (at most MAX_KEYS, so that bodies' keys cannot grow it). */
type KeyTypes = Map<string, KeyType>;

const MAX_KEYS = 100;
/** Per class: its key types, or null where class-transformer must build it (expose/exclude). */
const plans = new WeakMap<object, KeyTypes | null>();

function planFor(type: Constructor): KeyTypes | null {
  let plan = plans.get(type);
  if (plan === undefined) {
    const expose = defaultMetadataStorage.getExposedMetadatas(type);
    const exclude = defaultMetadataStorage.getExcludedMetadatas(type);
    plan =
      defaultMetadataStorage.getStrategy(type) === 'none' && !expose.length && !exclude.length
        ? new Map()
        : null;
    plans.set(type, plan);
  }
  return plan;
}

function keyType(type: Constructor, plan: KeyTypes, key: string): KeyType {
  let found = plan.get(key);
  if (found === undefined) {
    found = lookUpKeyType(type, key);
    if (plan.size < MAX_KEYS) plan.set(key, found);
  }
  return found;
}

function lookUpKeyType(type: Constructor, key: string): KeyType {
  const storage = defaultMetadataStorage;
  const { PLAIN_TO_CLASS } = classTransformer.TransformationType;
  if (storage.findTransformMetadatas(type, key, PLAIN_TO_CLASS).length) return DEFER;
  const metadata = storage.findTypeMetadata(type, key);
  if (!metadata) return { plainArray: true };
  const reflected = metadata.reflectedType as unknown;
  if (!metadata.typeFunction || metadata.options?.discriminator || reflected === Map) return DEFER;
  const plainArray = !reflected || reflected === Array || reflected === Object;
  return { typeFunction: metadata.typeFunction, plainArray };
}

function build(type: unknown, value: unknown): unknown {
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    for (const item of value) {
      const built = build(type, item);
      if (built === DEFER) return DEFER;
      copy.push(built);
    }
    return copy;
  }
  const convert = CONVERSIONS.get(type);
  if (convert) return value === null || value === undefined ? value : convert(value);
  if (REBUILT.has(type)) return DEFER;
  if (value === null || typeof value !== 'object') return value;
  if (!isPlainObject(value)) return DEFER;
  const typed = typeof type === 'function' && type !== Object;
  // Untyped, class-transformer would build an instance of the value's `constructor` (an own
  // `constructor` key included): only plain ones are built here.
  const own = (value as { constructor?: unknown }).constructor;
  if (!typed && own !== Object && own !== undefined) return DEFER;
  const plan = typed ? planFor(type as Constructor) : undefined;
  if (plan === null) return DEFER;
  const target = typed ? new (type as Constructor)() : ({} as Record<string, unknown>);
  const prototype = (target.constructor as { prototype?: object } | undefined)?.prototype;
  for (const key of Object.keys(value)) {
    if (key === '__proto__' || key === 'constructor') continue;
    if (prototype) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
      if ((descriptor && !descriptor.set) || target[key] instanceof Function) continue;
    }
    let nested: unknown;
    if (plan) {
      const found = keyType(type as Constructor, plan, key);
      // An array whose reflected type is a set or another class: built as an instance of it.
      if (found === DEFER || (!found.plainArray && Array.isArray(value[key]))) return DEFER;
      nested = found.typeFunction?.({ newObject: target, object: value, property: key });
    }
    const built = build(nested, value[key]);
    if (built === DEFER) return DEFER;
    target[key] = built;
  }
  return target;
}

/**
 * A JSON object, or one whose prototype chain has no constructor (Fastify's query strings: a
 * prototype of its own made with `Object.create(null)`): class-transformer builds both alike. An
 * own `constructor` key does not count here: it is skipped (see `build` for untyped objects).
 */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as { constructor?: unknown } | null;
  return prototype === null || prototype.constructor === Object || !prototype.constructor;
}
