import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { RunplaneMetrics } from '@runplane/platform';
import { INFRA_DIR } from '../src/index.js';

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
  datasource?: { uid: string };
}
const dashboard = JSON.parse(
  fs.readFileSync(path.join(INFRA_DIR, 'grafana', 'runplane-dashboard.json'), 'utf8'),
) as { uid: string; panels: Panel[]; templating: { list: Array<{ name: string }> } };
const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'by',
  'without',
  'rate',
  'increase',
  'histogram_quantile',
  'le',
  'on',
  'ignoring',
  'bool',
  'and',
  'or',
  'unless',
]);

describe('Grafana dashboard', () => {
  it('queries only metrics Runplane exposes (a renamed metric breaks this test, not the dashboard)', async () => {
    const exposed = new Set(
      (await new RunplaneMetrics().registry.getMetricsAsJSON()).map((m) => m.name),
    );
    const queries = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(queries.length).toBeGreaterThan(15);
    const used = new Set(
      queries
        .flatMap(
          (q) =>
            q
              .replace(/\{[^}]*\}/g, '')
              .replace(/\[[^\]]*\]/g, '')
              .replace(/"[^"]*"/g, '')
              .match(/[a-z_][a-z0-9_]*/g) ?? [],
        )
        .filter(
          (w) =>
            !PROMQL_WORDS.has(w) &&
            !/^(endpoint|status|state|route|subject|group|kind|outcome|result|status_code|job|instance)$/.test(
              w,
            ),
        ),
    );
    const missing = [...used].filter(
      (name) => !exposed.has(name) && !exposed.has(name.replace(/_(bucket|count|sum)$/, '')),
    );
    expect(missing).toEqual([]);
    // Every Runplane metric is on the dashboard.
    const runplane = [...exposed].filter((n) => n.startsWith('runplane_'));
    expect(
      runplane.filter(
        (n) => ![...used].some((u) => u === n || u.replace(/_(bucket|count|sum)$/, '') === n),
      ),
    ).toEqual([]);
  });

  it('takes its data source as a variable, so it imports into any Grafana', () => {
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(
      expect.arrayContaining(['datasource', 'job', 'endpoint']),
    );
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row'))
      expect(panel.datasource?.uid).toBe('${datasource}');
  });
});
