import { describe, expect, it } from '@jest/globals';
import { RunplaneError } from '@runplane/contracts';
import { jsonDepth, MAX_JSON_DEPTH, parseJsonBody } from '../src/http/json-body.js';

describe('request bodies', () => {
  it('measures nesting, ignoring brackets inside strings and escaped quotes', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[{{{\\"[[["}')).toBe(1);
    expect(jsonDepth('['.repeat(10_000), 5)).toBe(6); // stops counting past the limit
  });

  it('accepts bodies nested up to the limit and refuses deeper ones with 400', () => {
    const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toThrow(
      /nested deeper than 256 levels/,
    );
    expect(() => parseJsonBody('['.repeat(100_000) + ']'.repeat(100_000))).toThrow(RunplaneError);
  });

  it('refuses prototype-polluting keys and invalid JSON with 400; empty is no body', () => {
    for (const text of [
      '{"__proto__":{"x":1}}',
      '{"input":{"constructor":{"prototype":{"x":1}}}}',
    ]) {
      expect(() => parseJsonBody(text)).toThrow(
        expect.objectContaining({
          status: 400,
          message: expect.stringMatching(/forbidden "__proto__"/),
        }),
      );
    }
    expect(() => parseJsonBody('{"input": ')).toThrow(
      expect.objectContaining({ status: 400, message: 'request body is not valid JSON' }),
    );
    expect(parseJsonBody('  ')).toBeUndefined();
    expect(parseJsonBody('{"input":{"s":"\\u0000"}}')).toEqual({ input: { s: '\u0000' } });
  });
});
