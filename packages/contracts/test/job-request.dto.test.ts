import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { JobRequestDto, RunplaneError } from '../src/index.js';

const errorsOf = (body: unknown) =>
  validateSync(plainToInstance(JobRequestDto, body as object)).flatMap((e) => [
    e.property,
    ...(e.children ?? []).map((c) => `${e.property}.${c.property}`),
  ]);

describe('JobRequestDto (spec "Job request body" and "Policy object")', () => {
  it('accepts the documented fields', () => {
    expect(
      errorsOf({
        input: { prompt: 'x' },
        webhook: 'https://example.com/hook',
        policy: { executionTimeout: 5000, ttl: 10_000, lowPriority: true },
        s3Config: { accessId: 'a', accessSecret: 'b', bucketName: 'c', endpointUrl: 'https://s3' },
      }),
    ).toEqual([]);
  });

  it('requires input to be an object', () => {
    expect(errorsOf({})).toContain('input');
    expect(errorsOf({ input: [1] })).toContain('input');
    expect(errorsOf({ input: 'x' })).toContain('input');
  });

  it.each([
    [{ executionTimeout: 4999 }, 'policy.executionTimeout'],
    [{ executionTimeout: 7 * 24 * 3600_000 + 1 }, 'policy.executionTimeout'],
    [{ executionTimeout: 5000.5 }, 'policy.executionTimeout'],
    [{ ttl: 9999 }, 'policy.ttl'],
    [{ ttl: 7 * 24 * 3600_000 + 1 }, 'policy.ttl'],
    [{ lowPriority: 'yes' }, 'policy.lowPriority'],
  ])('rejects policy %j at %s', (policy, path) => {
    expect(errorsOf({ input: {}, policy })).toContain(path);
  });

  it('accepts the policy bounds themselves', () => {
    expect(
      errorsOf({
        input: {},
        policy: { executionTimeout: 7 * 24 * 3600_000, ttl: 7 * 24 * 3600_000 },
      }),
    ).toEqual([]);
  });

  it('rejects a webhook that is not an http(s) URL', () => {
    expect(errorsOf({ input: {}, webhook: 'ftp://x/y' })).toContain('webhook');
    expect(errorsOf({ input: {}, webhook: 5 })).toContain('webhook');
  });
});

describe('RunplaneError', () => {
  it('renders the contract error body and survives a round trip as JSON', () => {
    const err = RunplaneError.badRequest('policy.ttl is too small', [
      { path: 'policy.ttl', message: 'too small' },
    ]);
    const body = JSON.parse(JSON.stringify(err.toBody()));
    expect(body).toEqual({
      error: 'policy.ttl is too small',
      message: 'policy.ttl is too small',
      status: 400,
      code: 'BAD_REQUEST',
      details: [{ path: 'policy.ttl', message: 'too small' }],
    });
    const back = RunplaneError.fromBody(body);
    expect(back).toBeInstanceOf(RunplaneError);
    expect([back.status, back.message, back.code, back.details]).toEqual([
      400,
      'policy.ttl is too small',
      'BAD_REQUEST',
      body.details,
    ]);
  });
});
