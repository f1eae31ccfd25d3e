#!/usr/bin/env node
// Offline Kubernetes manifests tool (infra/src): render a kustomization, or check them all.
//   runplane-k8s render <dir>        print the rendered objects as YAML (kubectl apply -f -)
//   runplane-k8s check [<dir>...]    render and validate (default: base and every overlay)
import path from 'node:path';
import { stringify } from 'yaml';
import {
  checkKustomizations,
  INFRA_DIR,
  KUSTOMIZATIONS,
  renderKustomization,
} from '../dist/index.js';

const [command, ...dirs] = process.argv.slice(2);
if (command === 'render' && dirs.length === 1) {
  process.stdout.write(
    renderKustomization(path.resolve(dirs[0]))
      .map((o) => stringify(o, { aliasDuplicateObjects: false }))
      .join('---\n'),
  );
} else if (command === 'check') {
  let failed = false;
  const targets = dirs.length
    ? dirs.map((d) => path.resolve(d))
    : KUSTOMIZATIONS.map((d) => path.join(INFRA_DIR, d));
  for (const { dir, objects, problems } of await checkKustomizations(targets)) {
    process.stdout.write(
      `${path.relative(process.cwd(), dir) || '.'}: ${objects.length} objects, ${problems.length} problems\n`,
    );
    for (const p of problems) process.stdout.write(`  - ${p}\n`);
    failed ||= problems.length > 0;
  }
  process.exit(failed ? 1 : 0);
} else {
  process.stderr.write('usage: runplane-k8s render <dir> | runplane-k8s check [<dir>...]\n');
  process.exit(2);
}
