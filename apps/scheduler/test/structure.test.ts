import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The scheduler's layout rules, checked on its sources: `store/` is the only home of SQL and of
 * the job state machine's rules, features sit on top of it, and nothing imports in a circle.
 */
const SRC = fileURLToPath(new URL('../src', import.meta.url));
const FEATURES = ['endpoints', 'jobs', 'workers', 'timers', 'autoscaler'];
const MAX_LINES = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sources(SRC);
const rel = (file: string) => path.relative(SRC, file);
const imports = new Map(
  files.map((file) => {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/from\s+'(\.{1,2}\/[^']+)\.js'/g)]
      .map((m) => path.resolve(path.dirname(file), `${m[1]}.ts`))
      .filter((target) => files.includes(target));
    return [file, targets];
  }),
);

function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of imports.get(file) ?? []) {
      if (state.get(next) === 'open') found.push(stack.slice(stack.indexOf(next)).map(rel));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return found;
}

describe('scheduler layout', () => {
  it('has no import loop', () => {
    expect(cycles()).toEqual([]);
  });

  it('keeps every repository in store/, and store/ never imports a feature', () => {
    const misplaced = files.filter(
      (f) => f.endsWith('.repository.ts') && !rel(f).startsWith('store/'),
    );
    expect(misplaced.map(rel)).toEqual([]);
    const upward = files
      .filter((f) => rel(f).startsWith('store/'))
      .flatMap((f) => (imports.get(f) ?? []).map((t) => `${rel(f)} -> ${rel(t)}`))
      .filter((edge) =>
        FEATURES.some((feature) => edge.split(' -> ')[1].startsWith(`${feature}/`)),
      );
    expect(upward).toEqual([]);
  });

  it('runs SQL only in store/', () => {
    const sql = files.filter(
      (f) =>
        !rel(f).startsWith('store/') &&
        /\$queryRaw|\$executeRaw|Prisma\.sql/.test(readFileSync(f, 'utf8')),
    );
    expect(sql.map(rel)).toEqual([]);
  });

  it(`keeps files under ${MAX_LINES} lines`, () => {
    const long = files
      .map((f) => ({ file: rel(f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('sees the imports it checks (a broken scan would pass everything)', () => {
    const edges = [...imports.values()].reduce((n, targets) => n + targets.length, 0);
    expect(files.length).toBeGreaterThan(30);
    expect(edges).toBeGreaterThan(100);
  });
});
