import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

describe('LongPolls', () => {
  it('holds many polls at once without a listener-leak warning, and ends them all on shutdown', () => {
    // In a process of its own: Node's warnings do not reach a Jest test's `process`.
    const built = fileURLToPath(new URL('../dist/http/long-polls.js', import.meta.url));
    const script = `
      const { LongPolls } = await import(${JSON.stringify(built)});
      const warnings = [];
      process.on('warning', (w) => warnings.push(w.name));
      const polls = new LongPolls({ isDraining: false }, {});
      const held = Array.from({ length: 50 }, () => polls.hold(() => new Promise(() => {})));
      polls.onModuleDestroy();
      const ended = (await Promise.all(held)).filter((h) => h.ended && h.reason === 'draining');
      await new Promise((resolve) => setImmediate(resolve));
      console.log(JSON.stringify({ ended: ended.length, warnings }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ ended: 50, warnings: [] });
  });
});
