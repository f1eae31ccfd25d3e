import { describe, expect, it } from '@jest/globals';
import { GroupCommit } from '../src/group-commit.js';

/** A `run` that records its batches and finishes when told to. */
function recorder<I>(fail?: (items: I[]) => boolean) {
  const batches: I[][] = [];
  const gates: Array<() => void> = [];
  const run = async (items: I[]) => {
    batches.push(items);
    await new Promise<void>((release) => gates.push(release));
    if (fail?.(items)) throw new Error(`refused ${JSON.stringify(items)}`);
    return items.map((i) => `done ${String(i)}`);
  };
  const releaseAll = async () => {
    for (let n = 0; n < 20; n++) {
      await new Promise((r) => setImmediate(r));
      gates.splice(0).forEach((g) => g());
    }
  };
  return { batches, run, releaseAll };
}

describe('GroupCommit', () => {
  it('runs calls of one tick together, and calls made while a batch is in flight as the next batch', async () => {
    const r = recorder<number>();
    const g = new GroupCommit(r.run, { concurrency: 1 });
    const first = [g.call(1), g.call(2)];
    await new Promise((res) => setImmediate(res));
    const second = [g.call(3), g.call(4), g.call(5)];
    await new Promise((res) => setImmediate(res));
    expect(r.batches).toEqual([[1, 2]]); // 3..5 wait: a call never joins a running batch
    await r.releaseAll();
    expect(await Promise.all([...first, ...second])).toEqual([
      'done 1',
      'done 2',
      'done 3',
      'done 4',
      'done 5',
    ]);
    expect(r.batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it('keeps up to `concurrency` batches in flight and bounds their size', async () => {
    const r = recorder<number>();
    const g = new GroupCommit(r.run, { concurrency: 2, maxBatch: 2 });
    const calls = [1, 2, 3, 4, 5].map((i) => g.call(i));
    await new Promise((res) => setImmediate(res));
    expect(r.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await r.releaseAll();
    await Promise.all(calls);
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("a failing batch is run again item by item: only the bad item's call fails", async () => {
    const r = recorder<number>((items) => items.includes(2));
    const g = new GroupCommit(r.run, { concurrency: 1 });
    const calls = [1, 2, 3].map((i) =>
      g.call(i).then(
        (v) => v,
        (e: Error) => e.message,
      ),
    );
    await r.releaseAll();
    expect(await Promise.all(calls)).toEqual(['done 1', 'refused [2]', 'done 3']);
    expect(r.batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('a wrong number of results fails the calls instead of mixing them up', async () => {
    const g = new GroupCommit(async (items: number[]) => items.slice(1), { concurrency: 1 });
    const outcomes = await Promise.allSettled([g.call(1), g.call(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });
});
