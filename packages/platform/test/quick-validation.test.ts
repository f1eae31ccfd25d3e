import { describe, expect, it } from '@jest/globals';
import * as contracts from '@runplane/contracts';
import { plainToInstance, Type } from 'class-transformer';
import {
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
import {
  dtos,
  LENIENT,
  payloadFor,
  random,
  rulesOf,
  STRICT,
  validPayload,
  valueFor,
  type Dto,
} from './dto-payloads.js';

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
