#!/usr/bin/env node
// Helper of scripts/test.sh: reads the output of `turbo run ... --summarize` and prints the summary.
//
//   test-summary.mjs --build-ok <turbo log>
//       exit 0 unless a build/generate task failed in that run (or turbo did not run at all)
//   test-summary.mjs --report --skip-dir <dir> --timings <file> --step <name>=<exit code>=<turbo log> ...
//       prints skipped integration suites (loudly), e2e timings, failed tasks and, as the LAST
//       line, "<N> passed, <M> failed"; exits 1 when anything failed.
//
// Jest counts come from each task's "Tests:" summary line. M counts failed tests, test suites that
// could not run ("Test suite failed to run"), and failed tasks that account for no failed test
// (build, typecheck, a Jest that crashed), plus a turbo run that failed with no failed task.
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
// eslint-disable-next-line no-control-regex -- ANSI escapes start with ESC
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

function readLog(file) {
  try {
    return fs.readFileSync(file, 'utf8').replace(ANSI, '').replace(/\r/g, '');
  } catch {
    return '';
  }
}

/** The run summary turbo wrote (`Summary: <path>`), or undefined. The file is removed after reading. */
function turboSummary(log) {
  const match = /^\s*Summary:\s+(\S+\.json)\s*$/m.exec(log);
  if (!match) return undefined;
  try {
    return JSON.parse(fs.readFileSync(match[1], 'utf8'));
  } catch {
    return undefined;
  }
}

function removeSummary(log) {
  const match = /^\s*Summary:\s+(\S+\.json)\s*$/m.exec(log);
  if (match) fs.rmSync(match[1], { force: true });
}

function failedTasks(summary) {
  return (summary?.tasks ?? []).filter(
    (t) => t.execution && t.execution.exitCode !== 0 && t.execution.exitCode !== undefined,
  );
}

/** Jest results per turbo task id, from lines such as "@runplane/bus:test: Tests:  1 failed, 40 passed, 41 total". */
function jestResults(log) {
  const results = new Map();
  const get = (pkg) => {
    if (!results.has(pkg))
      results.set(pkg, {
        passed: 0,
        failed: 0,
        skipped: 0,
        suiteErrors: 0,
        seen: false,
        failedNames: new Set(),
      });
    return results.get(pkg);
  };
  for (const line of log.split('\n')) {
    const tests = /^(\S+):test:\s+Tests:\s+(.*\d+ total)\s*$/.exec(line);
    if (tests) {
      const r = get(tests[1]);
      r.seen = true;
      const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(tests[2])?.[1] ?? 0);
      r.passed += count('passed');
      r.failed += count('failed');
      r.skipped += count('skipped') + count('todo');
      continue;
    }
    const suiteError = /^(\S+):test:.*● Test suite failed to run/.exec(line);
    if (suiteError) {
      get(suiteError[1]).suiteErrors += 1;
      continue;
    }
    // Jest heads each failure's report with "● <describe> › <test>"; the CI log keeps only the
    // summary's tail, so the summary names them.
    const failure = /^(\S+):test:\s+● (.+\S)\s*$/.exec(line);
    if (failure && !/^Console$/.test(failure[2])) get(failure[1]).failedNames.add(failure[2]);
  }
  return results;
}

function option(name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

if (args[0] === '--build-ok') {
  const summary = turboSummary(readLog(args[1]));
  if (!summary) process.exit(1);
  const broken = failedTasks(summary).filter((t) => t.task === 'build' || t.task === 'generate');
  process.exit(broken.length ? 1 : 0);
}

if (args[0] !== '--report') {
  process.stderr.write(
    'usage: test-summary.mjs --build-ok <log> | --report --skip-dir <dir> --timings <file> --step <name>=<rc>=<log> ...\n',
  );
  process.exit(2);
}

const steps = args
  .flatMap((a, i) => (a === '--step' ? [args[i + 1]] : []))
  .map((s) => {
    const [name, rc, ...file] = s.split('=');
    return { name, rc: Number(rc), file: file.join('=') };
  });

let passed = 0;
let failed = 0;
let skipped = 0;
const problems = [];
const perPackage = [];
const countedTasks = new Set();

for (const step of steps) {
  const log = readLog(step.file);
  // The lint step is ESLint then Prettier's check: its exit code is its whole result.
  if (step.name === 'lint') {
    if (step.rc !== 0) {
      failed += 1;
      problems.push(
        'lint: `npm run lint` failed (ESLint or Prettier; see "lint" above, `npm run format` fixes formatting)',
      );
    }
    continue;
  }
  // The doc test is a plain script with its own last line: "doc-test: N passed, M failed".
  const docTest = /doc-test: (\d+) passed, (\d+) failed/.exec(log);
  if (docTest) {
    const [ok, bad] = [Number(docTest[1]), Number(docTest[2])];
    passed += ok;
    failed += bad;
    perPackage.push(
      `${'doc-test (README, examples)'.padEnd(28)} ${String(ok).padStart(4)} passed ${String(bad).padStart(3)} failed`,
    );
    if (bad || step.rc !== 0)
      problems.push(
        `${step.name}: ${bad} command(s) of the README or examples failed (see "FAIL" above)`,
      );
    if (step.rc !== 0 && !bad) failed += 1;
    continue;
  }
  const summary = turboSummary(log);
  removeSummary(log);
  const jest = jestResults(log);
  let failuresHere = 0;
  for (const [pkg, r] of jest) {
    failuresHere += r.failed + r.suiteErrors;
    passed += r.passed;
    failed += r.failed + r.suiteErrors;
    skipped += r.skipped;
    perPackage.push(
      `${pkg.padEnd(28)} ${String(r.passed).padStart(4)} passed ${String(r.failed).padStart(3)} failed${r.skipped ? ` ${r.skipped} skipped` : ''}${r.suiteErrors ? ` ${r.suiteErrors} suite(s) failed to run` : ''}`,
    );
    if (r.failed || r.suiteErrors) {
      const names = [...r.failedNames]
        .slice(0, 10)
        .map((name) => `\n    ✕ ${name}`)
        .join('');
      problems.push(
        `${pkg}#test: ${r.failed} failed test(s)${r.suiteErrors ? `, ${r.suiteErrors} suite(s) failed to run` : ''}${names}`,
      );
    }
  }
  const failedHere = failedTasks(summary);
  for (const t of failedHere) {
    const r = jest.get(t.package);
    const accounted =
      (t.task === 'test' && r && (r.failed || r.suiteErrors)) || countedTasks.has(t.taskId);
    countedTasks.add(t.taskId); // a build that failed in one step is tried again (and fails) in the next
    if (!accounted) {
      failed += 1;
      problems.push(
        `${t.taskId}: exit code ${t.execution.exitCode}${t.task === 'test' ? ' (no failed test reported: Jest itself failed?)' : ''}`,
      );
    }
  }
  if (step.rc !== 0 && failedHere.length === 0 && failuresHere === 0) {
    failed += 1;
    problems.push(
      `${step.name}: turbo exited with ${step.rc}${summary ? '' : ' before running tasks (or was not run)'}`,
    );
  }
}

// Integration suites that skipped themselves because NATS or PostgreSQL was not reachable.
const skipDir = option('--skip-dir');
const skips = new Set();
if (skipDir && fs.existsSync(skipDir)) {
  for (const f of fs.readdirSync(skipDir).sort()) {
    for (const line of fs.readFileSync(path.join(skipDir, f), 'utf8').split('\n'))
      if (line.trim()) skips.add(line.trim());
  }
}

const out = [];
if (perPackage.length)
  out.push('Jest results per package:', ...perPackage.map((l) => `  ${l}`), '');

const timingsFile = option('--timings');
if (timingsFile && fs.existsSync(timingsFile)) {
  const timings = fs.readFileSync(timingsFile, 'utf8').trim();
  if (timings) out.push('E2E timings:', ...timings.split('\n').map((l) => `  ${l}`), '');
}

if (skips.size) {
  const bar = '!'.repeat(100);
  out.push(bar, `!!! ${skips.size} INTEGRATION SUITE(S) SKIPPED — their tests did NOT run:`);
  for (const s of skips) out.push(`!!!   - ${s}`);
  out.push(
    '!!! Start the missing services (PostgreSQL 127.0.0.1:5432, NATS with JetStream 127.0.0.1:4222),',
    '!!! or set RUNPLANE_REQUIRE_INTEGRATION=1 to make skips fail (CI does).',
    bar,
    '',
  );
} else {
  out.push('No integration suite was skipped.', '');
}

if (problems.length) {
  out.push('FAILED:', ...problems.map((p) => `  - ${p}`), '');
} else {
  out.push(`All tasks succeeded${skipped ? ` (${skipped} test(s) skipped or todo)` : ''}.`, '');
}

out.push(`${passed} passed, ${failed} failed`);
process.stdout.write(`${out.join('\n')}\n`);
process.exit(failed > 0 || steps.some((s) => s.rc !== 0) ? 1 : 0);
