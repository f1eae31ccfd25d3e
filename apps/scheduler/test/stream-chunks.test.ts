import { describe, expect, it } from '@jest/globals';
import { chunkBytes, splitStreamOutput } from '../src/store/stream-chunks.js';

const MiB = 1024 * 1024;

describe('splitStreamOutput (chunks of at most 1 MiB as {"output": ...})', () => {
  it('leaves a value within the limit alone', () => {
    expect(splitStreamOutput({ i: 1 })).toEqual([{ i: 1 }]);
    expect(splitStreamOutput('x'.repeat(1000))).toEqual(['x'.repeat(1000)]);
  });

  it('cuts a long string into pieces that concatenate back, each within the limit', () => {
    const text = 'abc'.repeat(1_000_000); // 3 MB
    const parts = splitStreamOutput(text) as string[];
    expect(parts.length).toBe(3);
    expect(parts.join('')).toBe(text);
    for (const p of parts) expect(chunkBytes(p)).toBeLessThanOrEqual(MiB);
  });

  it('counts JSON escapes and multi-byte characters, and never cuts a surrogate pair', () => {
    const text = 'é"\n\u0001😀'.repeat(200_000); // escapes and 2/4-byte characters
    const parts = splitStreamOutput(text, 10_000) as string[];
    expect(parts.join('')).toBe(text);
    parts.forEach((p, i) => {
      expect(chunkBytes(p)).toBeLessThanOrEqual(10_000);
      if (i < parts.length - 1) expect(chunkBytes(p)).toBeGreaterThan(9_000); // pieces are filled, not tiny
      expect(/^[\udc00-\udfff]/.test(p)).toBe(false); // no piece starts inside a pair
    });
  });

  it('cuts a long array into slices that concatenate back', () => {
    const items = Array.from({ length: 30_000 }, (_, i) => ({ i, text: `token ${i}` }));
    const parts = splitStreamOutput(items, 100_000) as unknown[][];
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flat()).toEqual(items);
    for (const p of parts) {
      expect(Array.isArray(p)).toBe(true);
      expect(chunkBytes(p)).toBeLessThanOrEqual(100_000);
    }
  });

  it('sends an object over the limit as its JSON text in string pieces', () => {
    const obj = { text: ['x'.repeat(30_000)], input_tokens: 3, output_tokens: 30_000 };
    const parts = splitStreamOutput(obj, 10_000) as string[];
    expect(parts.every((p) => typeof p === 'string')).toBe(true);
    expect(JSON.parse(parts.join(''))).toEqual(obj);
    for (const p of parts) expect(chunkBytes(p)).toBeLessThanOrEqual(10_000);
  });

  it('an array element over the limit goes out as JSON text between the slices', () => {
    const big = { blob: 'y'.repeat(25_000) };
    const items = [1, 2, big, 3];
    const parts = splitStreamOutput(items, 10_000);
    expect(parts[0]).toEqual([1, 2]);
    expect(parts[parts.length - 1]).toEqual([3]);
    const middle = parts.slice(1, -1) as string[];
    expect(JSON.parse(middle.join(''))).toEqual(big);
    for (const p of parts) expect(chunkBytes(p)).toBeLessThanOrEqual(10_000);
  });
});
