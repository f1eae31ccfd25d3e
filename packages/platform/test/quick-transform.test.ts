import { describe, expect, it } from '@jest/globals';
import * as contracts from '@runplane/contracts';
import { Exclude, Expose, plainToInstance, Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { buildQuickly, quickTransformer } from '../src/http/quick-transform.js';
import { dtos, payloadFor, random, validPayload, type Dto } from './dto-payloads.js';

/** The first place where two built values differ: prototypes, keys and their order, values. */
function difference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (typeof a !== typeof b || (a === null) !== (b === null)) return `${path}: ${a} vs ${b}`;
  if (typeof a !== 'object' || a === null) return Object.is(a, b) ? undefined : `${path}: values`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: prototypes`;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b as object);
  if (keysA.join('\u0000') !== keysB.join('\u0000')) return `${path}: keys ${keysA} vs ${keysB}`;
  for (const key of keysA) {
    const found = difference(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${path}.${key}`,
    );
    if (found) return found;
  }
  return undefined;
}

/** Keys class-transformer treats apart: skipped, or shadowed by the prototype (JSON, as sent). */
const AWKWARD =
  '{"__proto__": {"polluted": true}, "constructor": 1, "prototype": {"x": 1}, ' +
  '"toString": "x", "hasOwnProperty": 2, "valueOf": {}, "nested": [{"toString": 1, "a": [1, {}]}]}';

/** `payload` with AWKWARD's keys added, parsed from JSON as a body is (`__proto__` an own key). */
function withAwkwardKeys(payload: object): Record<string, unknown> {
  const text = JSON.stringify(payload);
  return JSON.parse(text === '{}' ? AWKWARD : `${text.slice(0, -1)},${AWKWARD.slice(1)}`);
}

describe('buildQuickly (class-transformer without its machinery, for plain JSON objects)', () => {
  it('builds what class-transformer builds, for every DTO of the contracts and generated payloads', async () => {
    const rand = random(20261129);
    let quick = 0;
    const compare = (cls: Dto, payload: Record<string, unknown>) => {
      const expected = plainToInstance(cls, payload);
      const built = buildQuickly(cls, payload);
      if (built === undefined) return;
      quick += 1;
      const found = difference(built, expected);
      if (found) throw new Error(`${cls.name}: ${found} for ${JSON.stringify(payload)}`);
    };
    for (const cls of dtos) {
      for (let i = 0; i < 40; i++) {
        const payload = payloadFor(cls, rand);
        compare(cls, payload);
        // With keys that a copy key by key must skip or keep as class-transformer does.
        compare(cls, withAwkwardKeys(payload));
      }
      for (let i = 0; i < 10; i++) {
        const payload = await validPayload(cls, rand);
        if (payload) compare(cls, payload);
      }
    }
    // Most were built here; class-transformer built those with an env map (`KeepEveryKey` is a
    // @Transform) or an array where a single nested DTO is declared.
    expect(quick).toBeGreaterThan(dtos.length * 50);
  });

  it('builds the hot payloads here: a /run body and its bus request, a job-take, a job-done', () => {
    const job = { input: { prompt: 'hi' }, policy: { executionTimeout: 60_000 } };
    const cases: Array<[Dto, Record<string, unknown>]> = [
      [contracts.JobRequestDto, job],
      [
        contracts.RunJobSyncRequest,
        { ownerId: 'u', endpointId: 'e', jobId: 'j', mode: 'runsync', job, waitMs: 1_000 },
      ],
      [
        contracts.TakeJobsRequest,
        { ownerId: 'u', endpointId: 'e', workerId: 'w', batchSize: 8, waitMs: 1_000 },
      ],
      [
        contracts.JobDoneRequest,
        { ownerId: 'u', endpointId: 'e', workerId: 'w', jobId: 'j', body: { output: 1 } },
      ],
    ];
    for (const [cls, payload] of cases) {
      const built = buildQuickly(cls, payload);
      expect([cls.name, built instanceof cls]).toEqual([cls.name, true]);
      expect(difference(built, plainToInstance(cls, payload))).toBeUndefined();
    }
  });

  it('leaves to class-transformer whatever its metadata changes, and gives the same result', () => {
    class Inner {
      @IsInt() n!: number;
    }
    class Transformed {
      @Transform(({ value }) => String(value).trim()) @IsString() name!: string;
    }
    class Exposed {
      @Expose({ name: 'display_name' }) displayName?: string;
    }
    @Exclude()
    class ExcludedAll {
      @Expose() kept?: string;
      dropped?: string;
    }
    class WithMap {
      @Type(() => Inner) byName!: Map<string, Inner>;
    }
    class WithSet {
      @Type(() => Inner) items!: Set<Inner>;
    }
    class Parent {
      @Transform(({ value }) => Number(value)) level!: number;
    }
    class Child extends Parent {
      @IsOptional() @IsString() label?: string;
    }
    class Dated {
      @Type(() => Date) at!: Date;
    }
    const cases: Array<[Dto, Record<string, unknown>]> = [
      [Dated, { at: '2026-11-29T00:00:00Z' }],
      [Transformed, { name: '  x  ' }],
      [Exposed, { display_name: 'A' }],
      [ExcludedAll, { kept: 'k', dropped: 'd' }],
      [WithMap, { byName: { a: { n: 1 } } }],
      [WithSet, { items: [{ n: 1 }] }],
      [Child, { level: '3', label: 'x' }],
    ];
    for (const [cls, payload] of cases) {
      expect([cls.name, buildQuickly(cls, payload)]).toEqual([cls.name, undefined]);
      const expected = plainToInstance(cls, payload);
      const viaPackage = quickTransformer.plainToInstance(cls, payload);
      expect([cls.name, difference(viaPackage, expected)]).toEqual([cls.name, undefined]);
    }
    // Values that are not plain objects, and any options, go to class-transformer too.
    expect(buildQuickly(Inner, [{ n: 1 }])).toBeUndefined();
    expect(buildQuickly(Inner, 'x')).toBeUndefined();
    expect(buildQuickly(Inner, new Map([['n', 1]]))).toBeUndefined();
    // An own `constructor` key: skipped on a DTO, but class-transformer would build a nested
    // untyped object from it.
    const withConstructor = { constructor: 1, n: 1 };
    const built = buildQuickly(Inner, withConstructor);
    expect(built).toBeInstanceOf(Inner);
    expect(difference(built, plainToInstance(Inner, withConstructor))).toBeUndefined();
    expect(buildQuickly(Inner, { n: 1, meta: { constructor: 1 } })).toBeUndefined();
    const excluded = quickTransformer.plainToInstance(
      Inner,
      { n: 1, m: 2 },
      { excludeExtraneousValues: true },
    );
    expect(excluded).toEqual(
      plainToInstance(Inner, { n: 1, m: 2 }, { excludeExtraneousValues: true }),
    );
  });

  it('converts to String, Number and Boolean as class-transformer does, and builds query strings', () => {
    class Converted {
      @Type(() => Number) count?: number;
      @Type(() => String) label?: string;
      @Type(() => Boolean) flag?: boolean;
      @Type(() => Number) list?: number[];
    }
    class Holder {
      @ValidateNested() @Type(() => Converted) converted!: Converted;
      @IsOptional() @IsString() label?: string;
    }
    // Fastify's query strings: objects whose prototype is an object without prototype.
    function QueryString() {}
    QueryString.prototype = Object.create(null) as object;
    const query = Object.assign(new (QueryString as unknown as new () => object)(), {
      count: '60000',
      flag: '',
    });
    const cases: Array<[Dto, object]> = [
      [Converted, { count: '7', label: 5, flag: 'false', list: ['1', 'x', null] }],
      [Converted, { count: null, label: null, flag: 0, list: [] }],
      [Converted, { count: { a: 1 }, label: { a: 1 }, flag: {} }],
      [Converted, query],
      [Holder, { converted: { count: '2', list: ['3'] }, label: 'x' }],
      [contracts.JobRequestDto, Object.assign(Object.create(null) as object, { input: {} })],
    ];
    for (const [cls, payload] of cases) {
      const built = buildQuickly(cls, payload);
      expect([cls.name, built === undefined]).toEqual([cls.name, false]);
      expect([cls.name, difference(built, plainToInstance(cls, payload))]).toEqual([
        cls.name,
        undefined,
      ]);
    }
  });

  it('copies what it builds: nothing of the plain value is shared with the instance', () => {
    class Inner {
      @IsInt() n!: number;
    }
    class Outer {
      @ValidateNested() @Type(() => Inner) inner!: Inner[];
      @IsOptional() meta?: object;
    }
    const plain = { inner: [{ n: 1 }], meta: { deep: { list: [1, 2] } } };
    const built = buildQuickly(Outer, plain) as Outer & { meta: { deep: object } };
    expect(built.inner[0]).toBeInstanceOf(Inner);
    expect(built.inner).not.toBe(plain.inner);
    expect(built.meta.deep).not.toBe(plain.meta.deep);
    expect(difference(built, plainToInstance(Outer, plain))).toBeUndefined();
  });
});
