import { describe, expect, it } from '@jest/globals';
import * as contracts from '@runplane/contracts';
import { plainToInstance, Type } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import {
  getMetadataStorage,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  Validate,
  ValidateNested,
  validate,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { passesQuickly } from '../src/http/quick-validation.js';
import { pipeValidatorOptions } from '../src/http/validation.js';

// The pipe's two sets of options: bus payloads and query strings, request bodies.
const LENIENT = pipeValidatorOptions(false);
const STRICT = pipeValidatorOptions(true);

type Dto = new () => object;
const rulesOf = (cls: Dto) =>
  getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false);

/** Every class of the contracts that declares validation rules: the DTOs of HTTP and the bus. */
const dtos = Object.values(contracts).filter(
  (v): v is Dto =>
    typeof v === 'function' && /^class /.test(String(v)) && rulesOf(v as Dto).length > 0,
);

/** mulberry32: the same payloads at every run. */
function random(seed: number): () => number {
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
function valueFor(cls: Dto, property: string, rand: () => number, depth: number): unknown {
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

function payloadFor(cls: Dto, rand: () => number, depth = 0): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const property of new Set(rulesOf(cls).map((r) => r.propertyName)))
    if (rand() < 0.85) payload[property] = valueFor(cls, property, rand, depth);
  if (rand() < 0.1) payload.unknownField = 'x';
  return payload;
}

/** A payload class-validator accepts, found by regenerating the fields it refuses (or none). */
async function validPayload(
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

describe('passesQuickly (class-validator without its machinery, for valid objects)', () => {
  it('never calls valid what class-validator refuses, and accepts what it accepts, for every DTO of the contracts', async () => {
    expect(dtos.length).toBeGreaterThan(60);
    const rand = random(20261128);
    let valid = 0;
    let invalid = 0;
    const compare = async (cls: Dto, payload: Record<string, unknown>) => {
      for (const options of [LENIENT, STRICT]) {
        const entity = plainToInstance(cls, payload);
        const quick = passesQuickly(entity, options);
        const errors = await validate(entity, options);
        if (quick !== (errors.length === 0))
          throw new Error(
            `${cls.name} ${options.whitelist ? 'strict' : 'lenient'}: quick ${quick}, ` +
              `class-validator ${errors.length} error(s) for ${JSON.stringify(payload)}`,
          );
        if (quick) valid += 1;
        else invalid += 1;
      }
    };
    for (const cls of dtos) {
      for (let i = 0; i < 60; i++) await compare(cls, payloadFor(cls, rand));
      // Valid payloads and their one-field mutations: the cases where a missed rule would show.
      for (let i = 0; i < 20; i++) {
        const payload = await validPayload(cls, rand);
        if (!payload) continue;
        await compare(cls, payload);
        for (let m = 0; m < 3; m++) {
          const properties = [...new Set(rulesOf(cls).map((r) => r.propertyName))];
          const property = properties[Math.floor(rand() * properties.length)];
          await compare(cls, { ...payload, [property]: valueFor(cls, property, rand, 0) });
        }
      }
    }
    // Both verdicts were exercised often, so the agreement above means something.
    expect(valid).toBeGreaterThan(2_000);
    expect(invalid).toBeGreaterThan(2_000);
  });

  it('accepts the hot payloads: a /run body, its bus request, a job-take and a job-done', () => {
    const job = { input: { prompt: 'hi' }, policy: { executionTimeout: 60_000 } };
    const cases: Array<[Dto, object]> = [
      [contracts.JobRequestDto, job],
      [
        contracts.RunJobSyncRequest,
        { ownerId: 'u', endpointId: 'e', jobId: 'j', mode: 'runsync', job, waitMs: 1_000 },
      ],
      [
        contracts.TakeJobsRequest,
        {
          ownerId: 'u',
          endpointId: 'e',
          workerId: 'w',
          batchSize: 8,
          waitMs: 1_000,
          relay: 'queue-api-1',
          pollId: 'queue-api-1/7',
        },
      ],
      [
        contracts.JobDoneRequest,
        {
          ownerId: 'u',
          endpointId: 'e',
          workerId: 'w',
          jobId: 'j',
          body: { output: 1 },
          isStream: false,
        },
      ],
    ];
    for (const [cls, payload] of cases)
      expect([cls.name, passesQuickly(plainToInstance(cls, payload), STRICT)]).toEqual([
        cls.name,
        true,
      ]);
  });

  it('defers to class-validator for asynchronous rules, whitelist stripping and options it does not follow', () => {
    @ValidatorConstraint({ async: true })
    class Eventually implements ValidatorConstraintInterface {
      validate() {
        return Promise.resolve(true);
      }
    }
    class Later {
      @Validate(Eventually) name!: string;
    }
    class Inner {
      @IsInt() n!: number;
    }
    class Outer {
      @IsOptional() @IsString() label?: string;
      @ValidateNested() @Type(() => Inner) inner!: Inner;
    }
    class Needed {
      @IsDefined() value!: unknown;
    }
    expect(passesQuickly(plainToInstance(Needed, {}), LENIENT)).toBe(false);
    expect(passesQuickly(plainToInstance(Needed, { value: 0 }), LENIENT)).toBe(true);
    const outer = plainToInstance(Outer, { inner: { n: 1 } });
    expect(passesQuickly(outer, LENIENT)).toBe(true);
    expect(passesQuickly(plainToInstance(Later, { name: 'x' }), LENIENT)).toBe(false);
    expect(passesQuickly(outer, { ...LENIENT, whitelist: true })).toBe(false); // would strip
    expect(passesQuickly(outer, { ...LENIENT, groups: ['a'] })).toBe(false);
    expect(passesQuickly(outer, { ...LENIENT, forbidUnknownValues: true })).toBe(false);
    expect(passesQuickly(outer, undefined)).toBe(false);
    expect(passesQuickly(Object.create(null) as object, LENIENT)).toBe(false);
    // A nested value that is not an object, an unknown nested field under whitelist: refused.
    expect(passesQuickly(plainToInstance(Outer, { inner: 3 }), LENIENT)).toBe(false);
    expect(passesQuickly(plainToInstance(Outer, { inner: { n: 1, m: 2 } }), STRICT)).toBe(false);
    expect(passesQuickly(plainToInstance(Outer, { inner: [{ n: 1 }, undefined] }), LENIENT)).toBe(
      true,
    );
    expect(passesQuickly(plainToInstance(Outer, { inner: [{ n: 1 }, null] }), LENIENT)).toBe(false);
  });
});
