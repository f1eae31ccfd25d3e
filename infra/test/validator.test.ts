import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { applyJsonPatch, checkKustomization, imageRef } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('the validator fails on broken manifests (test of the test)', () => {
  it('reports every defect of the broken fixture, and nothing for the good object', async () => {
    const { problems } = await checkKustomization(path.join(here, 'fixtures', 'broken'));
    expect(problems.sort()).toEqual([
      'Deployment/broken/latest-image: container app: image example/app:latest uses the tag "latest"',
      'Deployment/broken/no-probes: container app: no livenessProbe',
      'Deployment/broken/no-probes: container app: no readinessProbe',
      'Deployment/broken/no-requests: container app: no cpu request',
      'Deployment/broken/no-requests: container app: no memory request',
      'Deployment/broken/unknown-field: container app: no readinessProbe',
      'Deployment/broken/unknown-field: schema: unknown field spec.template.spec.containers[0].readinessprobe',
      'Deployment/broken/untagged-image: container app: image registry.example.com:5000/app is not pinned (no tag or digest)',
      'Deployment/broken/wrong-types: schema: data/spec must have required property selector, data/spec/replicas must be integer',
      'Ingress/broken/dangling: path /: Service missing does not exist',
      'Mystery/broken/unknown-kind: schema: no schema known for example.com/v1 Mystery',
      'Service/broken/orphan: its selector matches no workload',
    ]);
  });
});

describe('offline kustomize subset', () => {
  it('applies JSON patches and refuses what it cannot do', () => {
    const doc = { a: { list: [1, 2], x: 1 } };
    expect(
      applyJsonPatch(
        doc,
        [
          { op: 'add', path: '/a/list/-', value: 3 },
          { op: 'replace', path: '/a/x', value: 2 },
          { op: 'add', path: '/a/y~1z', value: true },
        ],
        't',
      ),
    ).toEqual({ a: { list: [1, 2, 3], x: 2, 'y/z': true } });
    expect(applyJsonPatch(doc, [{ op: 'remove', path: '/a/list/0' }], 't')).toEqual({
      a: { list: [2], x: 1 },
    });
    expect(doc).toEqual({ a: { list: [1, 2], x: 1 } });
    expect(() =>
      applyJsonPatch(doc, [{ op: 'replace', path: '/a/missing', value: 1 }], 't'),
    ).toThrow(/replace of missing/);
    expect(() => applyJsonPatch(doc, [{ op: 'move', path: '/a/x', from: '/a/list' }], 't')).toThrow(
      /not supported/,
    );
  });

  it('splits image references', () => {
    expect(imageRef('registry:5000/org/app:1.2@sha256:ab')).toEqual({
      name: 'registry:5000/org/app',
      tag: '1.2',
      digest: 'sha256:ab',
    });
    expect(imageRef('registry:5000/org/app')).toEqual({
      name: 'registry:5000/org/app',
      tag: undefined,
      digest: undefined,
    });
  });
});
