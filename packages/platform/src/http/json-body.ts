import { RunplaneError } from '@runplane/contracts';
import secureJson from 'secure-json-parse';

/**
 * Deepest nesting of objects and arrays a request body may have. Bodies are walked recursively
 * later (validation, persistence, serialisation), and a body nested thousands of levels deep would
 * exhaust the stack there; real job inputs are nowhere near this.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Parses a request body as JSON: empty means "no body"; invalid JSON, nesting deeper than
 * MAX_JSON_DEPTH, and `__proto__` / `constructor.prototype` keys (prototype pollution) are 400s.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  const depth = jsonDepth(text, MAX_JSON_DEPTH);
  if (depth > MAX_JSON_DEPTH)
    throw RunplaneError.badRequest(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    if (err instanceof SyntaxError && /prototype/i.test(err.message)) {
      throw RunplaneError.badRequest(
        'request body has a forbidden "__proto__" or "constructor.prototype" key',
      );
    }
    throw RunplaneError.badRequest('request body is not valid JSON');
  }
}

/**
 * How deep `[` / `{` nest in a JSON text, ignoring brackets inside strings; stops counting once
 * past `limit`. One pass over the characters, no allocation.
 */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
    }
  }
  return max;
}
