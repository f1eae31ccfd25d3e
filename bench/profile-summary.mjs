#!/usr/bin/env node
// Where the CPU time of a --cpu-prof profile went (the profiles `--profile-dir` writes), by package
// and by function, self time only — a text view of what Chrome DevTools' bottom-up tab shows.
// With --inclusive, by function with the time of everything it called (each sample counted once
// per function on its stack), for the functions whose name or place matches the pattern ('.' for
// all): how much a layer costs with what runs under it.
//
//   node bench/profile-summary.mjs <file.cpuprofile> [--top 25] [--inclusive <regexp>]
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, inclusive: { type: 'string' } },
});
if (positionals.length !== 1) {
  console.error(
    'usage: node bench/profile-summary.mjs <file.cpuprofile> [--top 25] [--inclusive <regexp>]',
  );
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(positionals[0], 'utf8'));

/** A package-level name for where a function lives. */
function area({ url, functionName }) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  if (url.startsWith('wasm:')) return 'wasm';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/);
  if (pkg) return pkg[1];
  const own = url.match(/\/(apps|packages)\/([^/]+)\//);
  if (own) return own[1] === 'apps' ? `apps/${own[2]}` : `@runplane/${own[2]}`;
  return url.replace(/^file:\/\//, '');
}

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
profile.samples.forEach((id, i) =>
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)),
);
const functionName = (callFrame) =>
  `${callFrame.functionName || '(anonymous)'} ${area(callFrame)}${callFrame.url && !callFrame.url.startsWith('node:') ? `:${callFrame.lineNumber + 1}` : ''}`;
const byArea = new Map();
const byFunction = new Map();
let total = 0;
let idle = 0;
for (const [id, us] of self) {
  const { callFrame } = nodes.get(id);
  if (callFrame.functionName === '(idle)') {
    idle += us;
    continue;
  }
  total += us;
  const a = area(callFrame);
  byArea.set(a, (byArea.get(a) ?? 0) + us);
  const fn = functionName(callFrame);
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
}

/** Inclusive time by function: each node's self time counted once for every function above it. */
function inclusiveTimes(pattern) {
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const times = new Map();
  for (const [id, us] of self) {
    if (nodes.get(id).callFrame.functionName === '(idle)') continue;
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at))
      seen.add(functionName(nodes.get(at).callFrame));
    for (const fn of seen) if (pattern.test(fn)) times.set(fn, (times.get(fn) ?? 0) + us);
  }
  return times;
}
const top = Number(values.top);
const rows = (m) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({
      name,
      'self ms': Math.round(us / 1000),
      '%': Math.round((1000 * us) / total) / 10,
    }));
console.log(
  `${positionals[0]}: ${Math.round(total / 1000)} ms on CPU, ${Math.round(idle / 1000)} ms idle`,
);
if (values.inclusive !== undefined) {
  console.table(
    rows(inclusiveTimes(new RegExp(values.inclusive))).map(({ name, ...r }) => ({
      name,
      'inclusive ms': r['self ms'],
      '%': r['%'],
    })),
  );
} else {
  console.table(rows(byArea));
  console.table(rows(byFunction));
}
