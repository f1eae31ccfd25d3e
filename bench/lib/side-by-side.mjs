// Runplane measured alone or side by side with another built checkout (`--baseline <dir>`): the
// loop over modes and checkouts shared by bench/queue.mjs and bench/drain.mjs.
import path from 'node:path';
import { round } from './measure.mjs';
import { benchRoot, startServer } from './runplane.mjs';

/**
 * For each mode (and with `baseline`, each checkout) a fresh server with rate limits off,
 * `measure(server, label)` on it, then the server stopped; `rounds` times. Returns the results by
 * label (`standalone`, or `standalone (baseline)` / `standalone (current)`): with several rounds
 * the median of each figure, the rounds themselves under `rounds`. A failed run is reported with
 * the server's log tail and sets the exit code.
 *
 * The checkouts take turns going first: the second run of a pair came out faster on these
 * machines (the same code against itself: 1.10× jobs/s and 0.94× dispatch p50 for the second), so
 * a single order favours one side. Use an even number of rounds to compare checkouts.
 */
export async function sideBySide(
  { modes, baseline, apiKey, tag, profileDir, rounds = 1 },
  measure,
) {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number of at least 1, not ${rounds}`);
  const runs = {};
  for (const mode of modes) {
    for (let turn = 0; turn < rounds; turn++) {
      const checkouts = baseline
        ? [
            ['baseline', path.resolve(baseline)],
            ['current', benchRoot],
          ]
        : [['current', benchRoot]];
      if (turn % 2 === 1) checkouts.reverse();
      for (const [which, serverRoot] of checkouts) {
        const label = baseline ? `${mode} (${which})` : mode;
        const of = rounds > 1 ? ` (round ${turn + 1} of ${rounds})` : '';
        process.stderr.write(`[${tag}] ${label}${of}: starting the server\n`);
        const server = await startServer(mode, {
          apiKey,
          serverRoot,
          env: { RUNPLANE_RATE_LIMITS: 'false' },
          profileDir,
        });
        try {
          (runs[label] ??= []).push(await measure(server, label));
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
  }
  return Object.fromEntries(
    Object.entries(runs).map(([label, all]) => [
      label,
      all.length === 1 ? all[0] : { ...medians(all), rounds: all },
    ]),
  );
}

/** The median of each number found at the same place in every one of `objects` (the first's shape). */
function medians(objects) {
  const [first] = objects;
  if (typeof first === 'number') {
    const sorted = [...objects].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2);
  }
  if (!first || typeof first !== 'object' || Array.isArray(first)) return first;
  return Object.fromEntries(
    Object.keys(first).map((k) => [k, medians(objects.map((o) => o?.[k]))]),
  );
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
