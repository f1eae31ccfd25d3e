import { describe, expect, it } from '@jest/globals';
import { secretNamesIn, substituteSecrets } from '../src/secrets/secret-references.js';

describe('secret references in template env', () => {
  it('finds {{ RUNPOD_SECRET_<name> }} with or without spaces, whole value or part of it', () => {
    const env = {
      A: '{{ RUNPOD_SECRET_token }}',
      B: '{{RUNPOD_SECRET_token}}',
      C: 'Bearer {{  RUNPOD_SECRET_api.key-2 }}!',
      D: 'plain',
      E: '{{ RUNPOD_SECRET_ }}',
    };
    expect(secretNamesIn(env)).toEqual(['api.key-2', 'token']);
    expect(substituteSecrets(env, { token: 't$&1', 'api.key-2': 'k' })).toEqual({
      A: 't$&1',
      B: 't$&1',
      C: 'Bearer k!',
      D: 'plain',
      E: '{{ RUNPOD_SECRET_ }}',
    });
  });

  it('leaves references to names it was not given as written', () => {
    expect(
      substituteSecrets({ A: 'x {{ RUNPOD_SECRET_a }} {{ RUNPOD_SECRET_b }}' }, { a: '1' }),
    ).toEqual({ A: 'x 1 {{ RUNPOD_SECRET_b }}' });
    expect(secretNamesIn({})).toEqual([]);
  });
});
