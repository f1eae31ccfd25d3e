import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { objectId, renderKustomization, type K8sObject } from './kustomize.js';
import { policyProblems } from './policy.js';
import { SchemaValidator } from './schema.js';

export {
  applyJsonPatch,
  imageRef,
  loadObjects,
  objectId,
  renderKustomization,
  type K8sObject,
} from './kustomize.js';
export { policyProblems } from './policy.js';
export { SchemaValidator } from './schema.js';

/** `infra/` of this checkout. */
export const INFRA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Every kustomization users apply: the base alone and each overlay. */
export const KUSTOMIZATIONS = ['k8s/base', 'k8s/overlays/dev', 'k8s/overlays/prod'];

export interface CheckResult {
  dir: string;
  objects: K8sObject[];
  /** "Kind/namespace/name: message", one per problem; empty when everything is valid. */
  problems: string[];
}

let validator: SchemaValidator | undefined;

/**
 * Renders kustomizations and checks every object: schema, unknown fields, Runplane's rules. All
 * are rendered first and validated together (the field index is built once: ~3 s).
 */
export async function checkKustomizations(dirs: string[]): Promise<CheckResult[]> {
  const rendered = dirs.map((dir) => ({ dir, objects: renderKustomization(dir) }));
  const schema = await (validator ??= new SchemaValidator()).validate(
    rendered.flatMap((r) => r.objects),
  );
  return rendered.map(({ dir, objects }) => {
    const policy = policyProblems(objects);
    const problems = objects.flatMap((o) =>
      [...schema.get(o)!, ...policy.get(o)!].map((p) => `${objectId(o)}: ${p}`),
    );
    return { dir, objects, problems };
  });
}

export async function checkKustomization(dir: string): Promise<CheckResult> {
  return (await checkKustomizations([dir]))[0];
}
