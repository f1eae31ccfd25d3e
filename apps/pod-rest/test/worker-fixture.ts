import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A tiny worker stand-in, written to a temp dir and run with this node: prints its environment
 * as one JSON line on stdout (once its SIGTERM handler is in place), a line on stderr, then
 * behaves as FIXTURE_MODE says: "wait" (default) waits until SIGTERM and exits 0; "ignore-term"
 * ignores SIGTERM; "exit" exits at once with FIXTURE_EXIT_CODE; "spawn" first starts a grandchild
 * and prints its pid.
 */
const SCRIPT = `
import { spawn } from 'node:child_process';
const mode = process.env.FIXTURE_MODE || 'wait';
// The handler first: once the env line is out the test may signal at any moment.
process.on('SIGTERM', () => {
  if (mode === 'ignore-term') { process.stdout.write('ignoring SIGTERM\\n'); return; }
  process.stdout.write('got SIGTERM\\n');
  process.exit(0);
});
if (mode === 'spawn') {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  process.stdout.write('grandchild ' + child.pid + '\\n');
}
process.stdout.write(JSON.stringify({ env: process.env, uid: process.getuid() }) + '\\n');
process.stderr.write('fixture on stderr\\n');
if (mode === 'exit') process.exit(Number(process.env.FIXTURE_EXIT_CODE || 0));
setInterval(() => {}, 1 << 30);
`;

export function writeFixture(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runplane-pod-rest-'));
  chmodSync(dir, 0o755); // workloads running as their own users read it
  const file = path.join(dir, 'fixture-worker.mjs');
  writeFileSync(file, SCRIPT);
  // Whatever the umask (a server opening a data directory in this process sets 077).
  chmodSync(file, 0o644);
  return file;
}

/** True while the process exists and is not a zombie (an orphan may wait a while to be reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true; // no procfs: trust kill(0)
  }
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
