import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { IsStringMap } from '@runplane/contracts';
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
});
