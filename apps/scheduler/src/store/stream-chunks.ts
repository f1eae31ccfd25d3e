import { JOB_LIMITS } from '@runplane/contracts';

/**
 * Splitting of stream output over several chunks (as on RunPod: "One chunk is at most 1 MB; larger output
 * is split over several chunks"). The limit applies to a chunk as `/stream` returns it,
 * `{"output": <value>}` encoded as UTF-8 JSON; 1 MB is read as 1 MiB (JOB_LIMITS.streamChunkBytes).
 *
 * How a value over the limit is cut, so that a client can put it back together:
 * - a string: consecutive substrings (never inside a surrogate pair); concatenating the outputs
 *   gives the string back. This is the common case (token streams, SSE text).
 * - an array: consecutive slices; concatenating the arrays gives it back.
 * - anything else (an object, or an array element that alone exceeds the limit): its JSON text,
 *   cut as a string; concatenating those string outputs and parsing the result gives it back.
 * A value within the limit is never touched.
 */
export function splitStreamOutput(
  output: unknown,
  maxBytes: number = JOB_LIMITS.streamChunkBytes,
): unknown[] {
  if (chunkBytes(output) <= maxBytes) return [output];
  if (typeof output === 'string') return splitString(output, maxBytes - chunkBytes(''));
  if (Array.isArray(output)) return splitArray(output, maxBytes);
  return splitString(JSON.stringify(output) ?? 'null', maxBytes - chunkBytes(''));
}

/** UTF-8 bytes of `{"output": value}` as JSON. */
export function chunkBytes(output: unknown): number {
  return Buffer.byteLength(JSON.stringify({ output }));
}

function splitArray(items: unknown[], maxBytes: number): unknown[] {
  const empty = chunkBytes([]);
  const parts: unknown[] = [];
  let current: unknown[] = [];
  let size = empty;
  const flush = () => {
    if (current.length) parts.push(current);
    current = [];
    size = empty;
  };
  for (const item of items) {
    const itemBytes = Buffer.byteLength(JSON.stringify(item) ?? 'null');
    if (empty + itemBytes > maxBytes) {
      // Cannot be a slice on its own: ends the current slice and goes out as JSON text pieces.
      flush();
      parts.push(...splitString(JSON.stringify(item) ?? 'null', maxBytes - chunkBytes('')));
      continue;
    }
    const added = itemBytes + (current.length ? 1 : 0); // the comma
    if (size + added > maxBytes) flush();
    size += current.length ? itemBytes + 1 : itemBytes;
    current.push(item);
  }
  flush();
  return parts;
}

/**
 * Cuts a string into pieces whose JSON string encoding (quotes excluded) fits `budget` bytes,
 * counting escapes (`\"`, `\n`, `\u0001`) and multi-byte characters exactly as JSON.stringify
 * writes them.
 */
function splitString(text: string, budget: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  let size = 0;
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    const pair =
      code >= 0xd800 &&
      code <= 0xdbff &&
      i + 1 < text.length &&
      isLowSurrogate(text.charCodeAt(i + 1));
    const width = pair ? 2 : 1;
    const bytes = pair ? 4 : encodedBytes(code);
    if (size + bytes > budget && i > start) {
      pieces.push(text.slice(start, i));
      start = i;
      size = 0;
    }
    size += bytes;
    i += width;
  }
  if (start < text.length || pieces.length === 0) pieces.push(text.slice(start));
  return pieces;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Bytes JSON.stringify writes for one UTF-16 code unit (not part of a surrogate pair). */
function encodedBytes(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2; // \" \\
  if (code < 0x20) return [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(code) ? 2 : 6; // \n ... or \u00XX
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 6; // lone surrogate: \udXXX
  return 3;
}
