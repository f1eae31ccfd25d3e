import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { SKIP_DIR } from '@runplane/test-support';
import { parseAllDocuments } from 'yaml';
import {
  INFRA_DIR,
  KUSTOMIZATIONS,
  objectId,
  renderKustomization,
  type K8sObject,
} from '../src/index.js';

/** The real kustomize (built into kubectl), when this machine has it. */
function kubectlKustomize(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    const why = 'infra kustomize parity: kubectl (with its built-in kustomize) is not installed';
    if (process.env.RUNPLANE_REQUIRE_INTEGRATION === '1')
      throw new Error(`${why} (RUNPLANE_REQUIRE_INTEGRATION=1)`);
    fs.mkdirSync(SKIP_DIR, { recursive: true });
    fs.appendFileSync(path.join(SKIP_DIR, `${process.pid}.txt`), `${why}\n`);
    process.stderr.write(`\n!!! SKIPPED — ${why}\n\n`);
    return false;
  }
}

const available = kubectlKustomize();
const byId = (objects: K8sObject[]) => Object.fromEntries(objects.map((o) => [objectId(o), o]));

// The offline renderer must produce exactly what `kubectl apply -k` would apply (it also catches
// YAML that only a YAML 1.2 parser accepts, which kustomize's parser refuses).
describe('the offline renderer matches kubectl kustomize', () => {
  (available ? it.each(KUSTOMIZATIONS) : it.skip.each(KUSTOMIZATIONS))('%s', (dir) => {
    const output = execFileSync('kubectl', ['kustomize', path.join(INFRA_DIR, dir)], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const theirs = parseAllDocuments(output).map((d) => d.toJS() as K8sObject);
    expect(byId(renderKustomization(path.join(INFRA_DIR, dir)))).toEqual(byId(theirs));
  });
});
