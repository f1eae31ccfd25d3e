import * as contracts from '@runplane/contracts';
import { plainToInstance } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, validate } from 'class-validator';
import { pipeValidatorOptions } from '../src/http/validation.js';

// Payloads generated for every DTO of the contracts, the same at every run: what the tests of
// the pipe's quick paths compare against class-validator and class-transformer.

// The pipe's two sets of options: bus payloads and query strings, request bodies.
export const LENIENT = pipeValidatorOptions(false);
export const STRICT = pipeValidatorOptions(true);

export type Dto = new () => object;
export const rulesOf = (cls: Dto) =>
  getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false);

/** Every class of the contracts that declares validation rules: the DTOs of HTTP and the bus. */
export const dtos = Object.values(contracts).filter(
  (v): v is Dto =>
    typeof v === 'function' && /^class /.test(String(v)) && rulesOf(v as Dto).length > 0,
);

/** mulberry32: the same payloads at every run. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GENERAL: unknown[] = [
  '',
  'x',
  'abc',
  ' ',
  'http://example.com/hook',
  'https://10.0.0.1:8443/x',
  'ftp://x.y',
  'not a url',
  'a'.repeat(700),
  0,
  1,
  -1,
  1.5,
  100,
  60_000,
  2 ** 31,
  true,
  false,
  null,
  undefined,
  {},
  { a: 'b' },
  { a: 1 },
  [],
  ['a', 'b'],
  [1, 2],
  [{}],
  [null],
];

/** A value for a property: from what its rules name (bounds, allowed values), the general pool, or a nested object. */
export function valueFor(cls: Dto, property: string, rand: () => number, depth: number): unknown {
  const nested = defaultMetadataStorage.findTypeMetadata(cls, property)?.typeFunction() as
    Dto | undefined;
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)];
  if (nested && depth < 3 && rand() < 0.6) {
    const one = () => payloadFor(nested, rand, depth + 1);
    return rand() < 0.3 ? [one(), one()] : one();
  }
  const named: unknown[] = [];
  for (const rule of rulesOf(cls).filter((r) => r.propertyName === property))
    for (const c of rule.constraints ?? []) {
      if (typeof c === 'number') named.push(c - 1, c, c + 1);
      if (Array.isArray(c)) named.push(...c, [c[0]]);
    }
  return named.length && rand() < 0.5 ? pick(named) : pick(GENERAL);
}

export function payloadFor(cls: Dto, rand: () => number, depth = 0): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const property of new Set(rulesOf(cls).map((r) => r.propertyName)))
    if (rand() < 0.85) payload[property] = valueFor(cls, property, rand, depth);
  if (rand() < 0.1) payload.unknownField = 'x';
  return payload;
}

/** A payload class-validator accepts, found by regenerating the fields it refuses (or none). */
export async function validPayload(
  cls: Dto,
  rand: () => number,
): Promise<Record<string, unknown> | undefined> {
  const payload = payloadFor(cls, rand);
  for (let i = 0; i < 40; i++) {
    const errors = await validate(plainToInstance(cls, payload), STRICT);
    if (!errors.length) return payload;
    for (const { property } of errors)
      if (rand() < 0.3 || property === 'unknownField') delete payload[property];
      else payload[property] = valueFor(cls, property, rand, 0);
  }
  return undefined;
}
