import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { BadRequestException, NotFoundException } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { JobRequestDto, RunplaneError } from '@runplane/contracts';
import { flattenValidationErrors, toRunplaneError } from '../src/index.js';

describe('toRunplaneError (the error model)', () => {
  it('keeps RunplaneErrors', () => {
    const e = RunplaneError.conflict('busy');
    expect(toRunplaneError(e)).toEqual({ error: e, unexpected: false });
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400],
  ])('maps Fastify %s to %i', (code, status) => {
    const err = Object.assign(new Error('x'), { code });
    expect(toRunplaneError(err).error.status).toBe(status);
  });

  it('maps Nest HTTP exceptions and names unknown routes', () => {
    expect(toRunplaneError(new BadRequestException('bad')).error.toBody()).toMatchObject({
      status: 400,
      error: 'bad',
    });
    expect(toRunplaneError(new NotFoundException('Cannot GET /x')).error.message).toBe(
      'no route GET /x',
    );
  });

  it('hides the message of unexpected errors', () => {
    const { error, unexpected } = toRunplaneError(new Error('db password is hunter2'));
    expect(unexpected).toBe(true);
    expect(error.status).toBe(500);
    expect(error.message).not.toContain('hunter2');
  });
});

describe('flattenValidationErrors', () => {
  it('gives dotted paths for nested fields', () => {
    const errors = validateSync(plainToInstance(JobRequestDto, { input: {}, policy: { ttl: 1 } }));
    expect(flattenValidationErrors(errors)).toEqual([
      { path: 'policy.ttl', message: expect.stringContaining('policy.ttl') },
    ]);
  });
});
