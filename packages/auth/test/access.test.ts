import { describe, expect, it } from '@jest/globals';
import type { Principal } from '@runplane/contracts';
import { extractApiKey, generateApiKey, hashApiKey, isAllowed } from '../src/index.js';

const who = (scope: Principal['scope'], endpointId?: string): Principal => ({
  userId: 'u',
  keyId: 'k',
  scope,
  endpointId,
});

describe('extractApiKey', () => {
  it('accepts Bearer, the bare key (RunPod docs and worker SDK) and, where allowed, the query key', () => {
    expect(extractApiKey('Bearer abc')).toBe('abc');
    expect(extractApiKey('bearer   abc ')).toBe('abc');
    expect(extractApiKey('abc')).toBe('abc');
    expect(extractApiKey(undefined, 'q')).toBe('q');
    expect(extractApiKey('Bearer h', 'q')).toBe('h');
    expect(extractApiKey(undefined, '')).toBeUndefined();
    expect(extractApiKey('Bearer ')).toBeUndefined();
  });
});

describe('keys', () => {
  it('are 256-bit random and hashed with SHA-256 hex', () => {
    const a = generateApiKey();
    expect(a).toMatch(/^rpk_[A-Za-z0-9_-]{43}$/);
    expect(generateApiKey()).not.toBe(a);
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

describe('isAllowed (API key scopes)', () => {
  it.each([
    ['admin', 'admin', true],
    ['readwrite', 'admin', false],
    ['readonly', 'admin', false],
    ['admin', 'write', true],
    ['readwrite', 'write', true],
    ['readonly', 'write', false],
    ['readonly', 'read', true],
    ['readwrite', 'read', true],
    ['worker', 'read', false],
    ['worker', 'write', false],
    ['worker', 'admin', false],
  ] as const)('%s key on a %s route → %s', (scope, access, expected) => {
    expect(isAllowed(who(scope), access)).toBe(expected);
  });

  it("lets a worker key use only its own endpoint's worker routes", () => {
    expect(isAllowed(who('worker', 'ep1'), 'worker', 'ep1')).toBe(true);
    expect(isAllowed(who('worker', 'ep1'), 'worker', 'ep2')).toBe(false);
    expect(isAllowed(who('worker', 'ep1'), 'worker', undefined)).toBe(false);
    expect(isAllowed(who('readwrite'), 'worker', 'any')).toBe(true);
    expect(isAllowed(who('readonly'), 'worker', 'any')).toBe(false);
  });
});
