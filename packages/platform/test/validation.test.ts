import { IsInt, IsObject, IsString, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import {
  IsStringMap,
  JobRequestDto,
  KeptAsSent,
  StartWorkerRequest,
  SubmitJobRequest,
} from '@runplane/contracts';
import { createValidationPipe } from '../src/http/validation.js';

const body = { type: 'body' as const };

class Inner {
  @IsInt()
  @Min(1)
  count!: number;
}

class Outer {
  @IsString()
  name!: string;

  @ValidateNested()
  @Type(() => Inner)
  inner!: Inner;
}

class WithEnv {
  @IsStringMap()
  env!: Record<string, string>;

  @ValidateNested()
  @Type(() => Inner)
  inner!: Inner;
}

class Item {
  @IsObject() @KeptAsSent() payload!: Record<string, unknown>;
}

class WithItems {
  @ValidateNested({ each: true })
  @Type(() => Item)
  items!: Item[];
}

/** Keys that Nest's prototype guard or class-transformer's copy would drop from a plain object. */
const awkward = () => ({
  constructor: 'c',
  prototype: { constructor: [1] },
  toString: 's',
  valueOf: 2,
  hasOwnProperty: null,
  __defineGetter__: 'g',
  nested: { constructor: { a: 1 }, isPrototypeOf: true },
});

describe('createValidationPipe', () => {
  const pipe = createValidationPipe({ rejectUnknownFields: true });
  const check = (metatype: unknown, value: unknown) =>
    Promise.resolve()
      .then(() => pipe.transform(value, { ...body, metatype } as never))
      .then(
        () => 'ok',
        (err: { message: string }) => err.message,
      );

  it('applies the same rules every time, nested and inherited ones included', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await check(Outer, { name: 'a', inner: { count: 2 } })).toBe('ok');
      expect(await check(Outer, { name: 'a', inner: { count: 0 } })).toBe(
        'count must not be less than 1',
      );
      expect(await check(Outer, { name: 'a', inner: { count: 2 }, extra: 1 })).toBe(
        'unknown field "extra"',
      );
    }
  });

  it('sees rules of classes defined after earlier validations', async () => {
    expect(await check(Outer, { name: 'a', inner: { count: 2 } })).toBe('ok');
    class Later extends Outer {
      @IsString()
      label!: string;
    }
    expect(await check(Later, { name: 'a', inner: { count: 2 }, label: 3 })).toBe(
      'label must be a string',
    );
    expect(await check(Later, { name: 7, inner: { count: 2 }, label: 'x' })).toBe(
      'name must be a string',
    );
  });

  it('keeps env maps whole, keys Nest strips elsewhere included, every time', async () => {
    for (let i = 0; i < 2; i++) {
      const value = { env: { constructor: 'c', prototype: 'p', A: 'a' }, inner: { count: 1 } };
      const out = (await pipe.transform(value, { ...body, metatype: WithEnv } as never)) as WithEnv;
      expect(out.env).toEqual({ constructor: 'c', prototype: 'p', A: 'a' });
      expect(await check(WithEnv, { env: { A: 1 }, inner: { count: 1 } })).toMatch(/env/);
    }
  });

  it('hands payloads kept as sent on untouched: the same object, every key, nested DTOs and arrays too', async () => {
    const lenient = createValidationPipe();
    for (let i = 0; i < 2; i++) {
      const job = { input: awkward() };
      const out = (await pipe.transform(job, {
        ...body,
        metatype: JobRequestDto,
      } as never)) as JobRequestDto;
      expect(out).toBeInstanceOf(JobRequestDto);
      expect(out.input).toBe(job.input);
      expect(out.input).toEqual(awkward());

      const request = {
        ownerId: 'u',
        endpointId: 'e',
        jobId: 'j',
        mode: 'run',
        job: { input: awkward() },
      };
      const submit = (await lenient.transform(request, {
        ...body,
        metatype: SubmitJobRequest,
      } as never)) as SubmitJobRequest;
      expect(submit.job).toBeInstanceOf(JobRequestDto);
      expect(submit.job.input).toEqual(awkward());

      const items = { items: [{ payload: awkward() }, { payload: { n: 1 } }] };
      const many = (await pipe.transform(items, {
        ...body,
        metatype: WithItems,
      } as never)) as WithItems;
      expect(many.items.map((item) => item.payload)).toEqual([awkward(), { n: 1 }]);
      expect(many.items[0]).toBeInstanceOf(Item);
    }
  });

  it("concurrent calls each get their own payloads back, failing ones in between (no request's data lands on another's)", async () => {
    // The pipe carries the payloads it set aside from Nest's prototype guard to validation; this
    // holds only while Nest runs the two with nothing awaited in between, which this checks.
    const calls = Array.from({ length: 60 }, (_, i) => ({
      input: i % 3 === 2 ? 'not an object' : { n: i, constructor: `c${i}` },
    }));
    const outcomes = await Promise.allSettled(
      calls.map((job) => pipe.transform(job, { ...body, metatype: JobRequestDto } as never)),
    );
    outcomes.forEach((outcome, i) => {
      if (i % 3 === 2) expect(outcome.status).toBe('rejected');
      else
        expect(outcome).toEqual({
          status: 'fulfilled',
          value: expect.objectContaining({ input: { n: i, constructor: `c${i}` } }),
        });
    });
  });

  it('still checks payloads kept as sent by their own rules, and the rest of the body as before', async () => {
    expect(await check(JobRequestDto, { input: ['a'] })).toBe(
      'input is required and must be a JSON object',
    );
    expect(await check(JobRequestDto, { input: 'text' })).toBe(
      'input is required and must be a JSON object',
    );
    expect(await check(JobRequestDto, {})).toBe('input is required and must be a JSON object');
    expect(await check(JobRequestDto, { input: {}, inptu: {} })).toBe('unknown field "inptu"');
    expect(await check(JobRequestDto, { input: {}, policy: { ttl: 1 } })).toMatch(/policy.ttl/);
    expect(await check(WithItems, { items: [{ payload: {} }, { payload: 3 }] })).toMatch(
      /payload must be an object/,
    );
    // Outside the payload, the prototype guard still applies.
    const out = (await pipe.transform(
      { input: { constructor: 'kept' }, policy: { constructor: 'x' } },
      { ...body, metatype: JobRequestDto } as never,
    )) as JobRequestDto;
    expect(out.input).toEqual({ constructor: 'kept' });
    expect(Object.keys(out.policy ?? {})).toEqual([]);
  });

  it("keeps every variable of a worker's env on the bus to pod-rest", async () => {
    const env = () => ({ RUNPOD_ENDPOINT_ID: 'e', constructor: 'c', toString: 't', A: 'a' });
    const start = (await createValidationPipe().transform(
      {
        ownerId: 'u',
        workerId: 'w',
        endpointId: 'e',
        templateId: 't',
        slsVersion: 1,
        env: env(),
        endpointEnv: env(),
      },
      { ...body, metatype: StartWorkerRequest } as never,
    )) as StartWorkerRequest;
    expect(start.env).toEqual(env());
    expect(start.endpointEnv).toEqual(env());
  });
});
