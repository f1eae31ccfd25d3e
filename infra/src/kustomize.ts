import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as it comes out of a manifest. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/**
 * Renders a kustomization offline: the subset of kustomize that Runplane's manifests use, so the
 * check runs inside `npm test` without a kustomize binary (none is packaged for npm or Debian
 * bookworm's kubectl is 1.20). Where `kubectl kustomize` exists, a test renders every overlay with
 * both and requires the same objects, so this cannot silently drift from the real thing.
 *
 * Supported: `resources` (files and directories), `images` (newName, newTag, digest) and
 * `patches` with RFC 6902 JSON patches and a `target` (kind, name, namespace, group, version).
 * Anything else is refused loudly rather than ignored.
 */
export function renderKustomization(dir: string): K8sObject[] {
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization']
    .map((f) => path.join(dir, f))
    .find((f) => fs.existsSync(f));
  if (!file) throw new Error(`${dir}: no kustomization.yaml`);
  const k = (parseYamlFile(file)[0] ?? {}) as Record<string, unknown>;
  const unsupported = Object.keys(k).filter((key) => !SUPPORTED_FIELDS.has(key));
  if (unsupported.length) {
    throw new Error(
      `${file}: ${unsupported.join(', ')} not supported by the offline renderer (infra/src/kustomize.ts); use resources, images and JSON patches`,
    );
  }

  const objects: K8sObject[] = [];
  for (const entry of (k.resources as string[] | undefined) ?? []) {
    const target = path.resolve(dir, entry);
    const loaded = fs.statSync(target).isDirectory()
      ? renderKustomization(target)
      : loadObjects(target);
    for (const object of loaded) {
      const clash = objects.find((o) => objectId(o) === objectId(object));
      if (clash)
        throw new Error(`${file}: ${objectId(object)} is defined twice (again in ${entry})`);
      objects.push(object);
    }
  }

  for (const [i, patch] of ((k.patches as PatchEntry[] | undefined) ?? []).entries()) {
    const ops = parsePatch(dir, patch, `${file} patches[${i}]`);
    const matching = objects.filter((o) => matchesTarget(o, patch.target ?? {}));
    if (!matching.length) throw new Error(`${file} patches[${i}]: the target matches no object`);
    for (const object of matching) {
      const patched = applyJsonPatch(
        object,
        ops,
        `${file} patches[${i}] on ${objectId(object)}`,
      ) as K8sObject;
      objects[objects.indexOf(object)] = patched;
    }
  }

  for (const image of (k.images as ImageEntry[] | undefined) ?? []) {
    for (const object of objects) setImages(object, image);
  }
  return objects;
}

const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'images', 'patches']);

interface PatchEntry {
  path?: string;
  patch?: string;
  target?: { kind?: string; name?: string; namespace?: string; group?: string; version?: string };
}

interface ImageEntry {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

export interface JsonPatchOp {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

/** `Kind/namespace/name`: what kustomize considers one object. */
export function objectId(o: K8sObject): string {
  return `${o.kind}/${o.metadata?.namespace ?? '~'}/${o.metadata?.name}`;
}

export function loadObjects(file: string): K8sObject[] {
  return parseYamlFile(file)
    .filter((d): d is K8sObject => d !== null && d !== undefined)
    .map((d, i) => {
      if (typeof d !== 'object' || !('kind' in d) || !('apiVersion' in d))
        throw new Error(`${file}: document ${i + 1} is not a Kubernetes object`);
      return d;
    });
}

function parseYamlFile(file: string): unknown[] {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
  return docs.map((doc, i) => {
    if (doc.errors.length)
      throw new Error(`${file}: YAML document ${i + 1}: ${doc.errors[0].message}`);
    return doc.toJS();
  });
}

function parsePatch(dir: string, entry: PatchEntry, where: string): JsonPatchOp[] {
  const text =
    entry.patch ??
    (entry.path ? fs.readFileSync(path.resolve(dir, entry.path), 'utf8') : undefined);
  if (text === undefined) throw new Error(`${where}: needs patch or path`);
  const parsed = parseAllDocuments(text)[0]?.toJS();
  if (!Array.isArray(parsed))
    throw new Error(
      `${where}: only JSON 6902 patches (a list of operations) are supported offline`,
    );
  if (!entry.target) throw new Error(`${where}: a JSON 6902 patch needs a target`);
  return parsed as JsonPatchOp[];
}

function matchesTarget(o: K8sObject, t: NonNullable<PatchEntry['target']>): boolean {
  // As in kustomize, name and namespace are regular expressions that must match the whole value.
  const full = (pattern: string | undefined, value: string | undefined) =>
    pattern === undefined || new RegExp(`^(?:${pattern})$`).test(value ?? '');
  const [group, version] = o.apiVersion.includes('/')
    ? o.apiVersion.split('/')
    : ['', o.apiVersion];
  return (
    (t.kind === undefined || t.kind === o.kind) &&
    (t.group === undefined || t.group === group) &&
    (t.version === undefined || t.version === version) &&
    full(t.name, o.metadata?.name) &&
    full(t.namespace, o.metadata?.namespace)
  );
}

/** RFC 6902 add / remove / replace / test on a copy of `doc`. */
export function applyJsonPatch(doc: unknown, ops: JsonPatchOp[], where: string): unknown {
  const root = structuredClone(doc);
  for (const op of ops) {
    const tokens = op.path
      .split('/')
      .slice(1)
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (op.path !== '' && !op.path.startsWith('/'))
      throw new Error(`${where}: bad path "${op.path}"`);
    const last = tokens.pop();
    if (last === undefined)
      throw new Error(`${where}: ${op.op} of the whole document is not supported`);
    let parent: unknown = root;
    for (const token of tokens) {
      parent = Array.isArray(parent)
        ? parent[Number(token)]
        : (parent as Record<string, unknown> | undefined)?.[token];
      if (parent === undefined || parent === null || typeof parent !== 'object')
        throw new Error(`${where}: path ${op.path} does not exist`);
    }
    const container = parent as Record<string, unknown> | unknown[];
    const exists = Array.isArray(container)
      ? Number(last) < container.length
      : Object.hasOwn(container, last);
    switch (op.op) {
      case 'add':
        if (Array.isArray(container))
          container.splice(
            last === '-' ? container.length : Number(last),
            0,
            structuredClone(op.value),
          );
        else container[last] = structuredClone(op.value);
        break;
      case 'replace':
        if (!exists) throw new Error(`${where}: replace of missing ${op.path}`);
        if (Array.isArray(container)) container[Number(last)] = structuredClone(op.value);
        else container[last] = structuredClone(op.value);
        break;
      case 'remove':
        if (!exists) throw new Error(`${where}: remove of missing ${op.path}`);
        if (Array.isArray(container)) container.splice(Number(last), 1);
        else delete container[last];
        break;
      case 'test': {
        const value = Array.isArray(container) ? container[Number(last)] : container[last];
        if (JSON.stringify(value) !== JSON.stringify(op.value))
          throw new Error(`${where}: test failed at ${op.path}`);
        break;
      }
      default:
        throw new Error(`${where}: operation "${op.op}" is not supported offline`);
    }
  }
  return root;
}

/** kustomize's images transformer: every container and init container whose image is `name`. */
function setImages(node: unknown, image: ImageEntry): void {
  if (Array.isArray(node)) {
    for (const item of node) setImages(item, image);
    return;
  }
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      for (const c of value as Array<{ image?: string }>) {
        if (typeof c.image !== 'string' || imageName(c.image) !== image.name) continue;
        const { tag, digest } = imageRef(c.image);
        const name = image.newName ?? image.name;
        if (image.digest) c.image = `${name}@${image.digest}`;
        else if (image.newTag) c.image = `${name}:${image.newTag}`;
        else c.image = `${name}${digest ? `@${digest}` : tag ? `:${tag}` : ''}`;
      }
    }
    setImages(value, image);
  }
}

/** Splits `registry:5000/repo/name:tag@sha256:…` into name, tag and digest. */
export function imageRef(image: string): { name: string; tag?: string; digest?: string } {
  const [beforeDigest, digest] = image.split('@');
  const slash = beforeDigest.lastIndexOf('/');
  const colon = beforeDigest.lastIndexOf(':');
  const hasTag = colon > slash;
  return {
    name: hasTag ? beforeDigest.slice(0, colon) : beforeDigest,
    tag: hasTag ? beforeDigest.slice(colon + 1) : undefined,
    digest,
  };
}

function imageName(image: string): string {
  return imageRef(image).name;
}
