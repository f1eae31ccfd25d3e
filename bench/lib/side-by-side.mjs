// Runplane measured alone or side by side with another built checkout (`--baseline <dir>`): the
// loop over modes and checkouts shared by bench/queue.mjs and bench/drain.mjs.
import path from 'node:path';
import { round } from './measure.mjs';
import { benchRoot, startServer } from './runplane.mjs';

/**
 * For each mode (and with `baseline`, each checkout: the other one first) a fresh server with
 * rate limits off, `measure(server, label)` on it, then the server stopped. Returns the results
 * by label (`standalone`, or `standalone (baseline)` / `standalone (current)`); a failed run is
 * reported with the server's log tail and sets the exit code.
 */
export async function sideBySide({ modes, baseline, apiKey, tag, profileDir }, measure) {
  const results = {};
  for (const mode of modes) {
    const runs = baseline
      ? [
          ['baseline', path.resolve(baseline)],
          ['current', benchRoot],
        ]
      : [['current', benchRoot]];
    for (const [which, serverRoot] of runs) {
      const label = baseline ? `${mode} (${which})` : mode;
      process.stderr.write(`[${tag}] ${label}: starting the server\n`);
      const server = await startServer(mode, {
        apiKey,
        serverRoot,
        env: { RUNPLANE_RATE_LIMITS: 'false' },
        profileDir,
      });
      try {
        results[label] = await measure(server, label);
      } catch (err) {
        process.stderr.write(
          `[${tag}] ${label} failed: ${err.stack}\n--- server log tail ---\n${server.log().slice(-3000)}\n`,
        );
        process.exitCode = 1;
      } finally {
        await server.stop();
      }
    }
  }
  return results;
}

/**
 * Table rows: one per result (its `cells`), then with `baseline` one current/baseline ratio row
 * per mode that has both.
 */
export function tableRows(results, { modes, baseline }, cells) {
  const rows = Object.entries(results).map(([mode, r]) => ({ mode, ...cells(r) }));
  for (const mode of baseline ? modes : []) {
    const [b, c] = [results[`${mode} (baseline)`], results[`${mode} (current)`]];
    if (!b || !c) continue;
    const [cb, cc] = [cells(b), cells(c)];
    rows.push({
      mode: `${mode}: current/baseline`,
      ...Object.fromEntries(Object.keys(cc).map((k) => [k, round(cc[k] / cb[k])])),
    });
  }
  return rows;
}
