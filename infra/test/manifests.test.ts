import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  checkKustomizations,
  INFRA_DIR,
  KUSTOMIZATIONS,
  type CheckResult,
  type K8sObject,
} from '../src/index.js';

const SERVICES = [
  'queue-api',
  'scheduler',
  'webhook-sender',
  'pod-rest',
  'template-graphql',
  'secrets-vault',
];
type Json = Record<string, any>;

let results: Record<string, CheckResult>;
const objects = (dir: string) => results[dir].objects;
/** `/`, `/assets` and a path per section of the console's pages (packages/console/routes.json). */
const consolePaths = (): string[] => [
  '/',
  '/assets',
  ...(
    JSON.parse(
      fs.readFileSync(path.join(INFRA_DIR, '..', 'packages/console/routes.json'), 'utf8'),
    ) as { sections: string[] }
  ).sections.map((s) => `/${s}`),
];
const get = (dir: string, kind: string, name: string, namespace = 'runplane') =>
  objects(dir).find(
    (o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace,
  ) as (K8sObject & Json) | undefined;

beforeAll(async () => {
  const checked = await checkKustomizations(KUSTOMIZATIONS.map((d) => path.join(INFRA_DIR, d)));
  results = Object.fromEntries(checked.map((r) => [path.relative(INFRA_DIR, r.dir), r]));
});

describe('every kustomization renders to valid objects that follow the rules', () => {
  it.each(KUSTOMIZATIONS)('%s: no problem', (dir) => {
    expect(results[dir].objects.length).toBeGreaterThan(40);
    expect(results[dir].problems).toEqual([]);
  });
});

describe.each(KUSTOMIZATIONS)('%s', (dir) => {
  it('runs the six services from one pinned image, each with its own ServiceAccount, probes and migrations', () => {
    for (const name of SERVICES) {
      const d = get(dir, 'Deployment', name)!;
      expect(d).toBeDefined();
      const pod = d.spec.template.spec;
      const [main] = pod.containers;
      expect(main.image).toBe('runplane/runplane:0.1.0');
      expect(main.livenessProbe.httpGet.path).toBe('/healthz');
      expect(main.readinessProbe.httpGet.path).toBe('/readyz');
      expect(pod.serviceAccountName).toBe(name);
      expect(pod.initContainers[0].args).toEqual(['migrate', '--service', name]);
      expect(main.env).toContainEqual({ name: 'RUNPLANE_MIGRATE_ON_START', value: 'false' });
      // Read-only root file system, non-root, nothing but /tmp writable.
      expect(main.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
      });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      const dbEnv = main.env.find(
        (e: Json) => e.name === `DATABASE_URL_${name.replace(/-/g, '_').toUpperCase()}`,
      );
      expect(dbEnv.valueFrom.secretKeyRef).toEqual({ name: `${name}-db-app`, key: 'uri' });
      expect(get(dir, 'HorizontalPodAutoscaler', name)).toBeDefined();
      expect(get(dir, 'PodDisruptionBudget', name)).toBeDefined();
    }
  });

  it('routes the public paths like the local cluster gateway (scripts/cluster-up.mjs)', () => {
    const script = fs.readFileSync(path.join(INFRA_DIR, '..', 'scripts', 'cluster-up.mjs'), 'utf8');
    const routesSource = /const routes = \[([\s\S]*?)\n\];/.exec(script)?.[1] ?? '';
    const gateway = [
      ...[...routesSource.matchAll(/\['([^']+)', '([^']+)'\]/g)].map((m) => [
        m[1] === '/' ? '/' : m[1].replace(/\/$/, ''),
        m[2],
      ]),
      // Spread into the gateway's table from the console's own list.
      ...consolePaths()
        .slice(1)
        .map((p) => [p, 'template-graphql']),
    ];
    expect(gateway.length).toBeGreaterThan(5);
    const ingress = get(dir, 'Ingress', 'runplane')!;
    const paths = ingress.spec.rules[0].http.paths.map((p: Json) => [
      p.path,
      p.backend.service.name,
    ]);
    expect(paths.sort()).toEqual(gateway.sort());
  });

  it("routes the console's paths, and only those, to the one service that serves it (RUNPLANE_CONSOLE=true)", () => {
    const ingress = get(dir, 'Ingress', 'runplane')!;
    const paths: Json[] = ingress.spec.rules[0].http.paths;
    const root = paths.find((p) => p.path === '/')!;
    expect(root).toMatchObject({ pathType: 'Exact' }); // not a catch-all: /metrics stays unrouted
    const console = paths.filter((p) => p.backend.service.name === root.backend.service.name);
    expect(console.map((p) => p.path).filter((p) => p !== '/graphql')).toEqual(consolePaths());
    const serving = SERVICES.filter((name) =>
      get(dir, 'Deployment', name)!.spec.template.spec.containers[0].env.some(
        (e: Json) => e.name === 'RUNPLANE_CONSOLE' && e.value === 'true',
      ),
    );
    expect(serving).toEqual([root.backend.service.name]);
  });

  it('lets only pod-rest manage worker Pods and Secrets, only in the workers namespace', () => {
    const bindings = objects(dir).filter(
      (o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding',
    ) as Json[];
    expect(bindings.map((b) => [b.kind, b.metadata.namespace, b.subjects])).toEqual([
      [
        'RoleBinding',
        'runplane-workers',
        [{ kind: 'ServiceAccount', name: 'pod-rest', namespace: 'runplane' }],
      ],
    ]);
    const role = get(dir, 'Role', 'runplane-compute', 'runplane-workers')!;
    // Exactly what docs/compute.md says the Kubernetes compute provider needs.
    expect(
      Object.fromEntries(role.rules.map((r: Json) => [r.resources.join(','), [...r.verbs].sort()])),
    ).toEqual({
      pods: ['create', 'delete', 'get', 'list', 'watch'],
      'pods/log': ['get'],
      secrets: ['create', 'delete', 'patch'],
      persistentvolumeclaims: ['create', 'delete'],
    });
    expect(objects(dir).some((o) => o.kind === 'ClusterRole')).toBe(false);
    for (const name of SERVICES)
      expect(get(dir, 'Deployment', name)!.spec.template.spec.automountServiceAccountToken).toBe(
        name === 'pod-rest',
      );
  });

  it('closes the service pods by default and opens only what is needed', () => {
    const policies = objects(dir).filter((o) => o.kind === 'NetworkPolicy') as Json[];
    const deny = policies.find((p) => p.metadata.name === 'services-default-deny')!;
    expect(deny.spec).toEqual({
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/part-of': 'runplane',
          'app.kubernetes.io/component': 'service',
        },
      },
      policyTypes: ['Ingress', 'Egress'],
    });
    const internet = policies.find((p) => p.metadata.name === 'webhook-sender-to-internet')!;
    expect(internet.spec.egress[0].to[0].ipBlock).toMatchObject({
      cidr: '0.0.0.0/0',
      except: expect.arrayContaining(['10.0.0.0/8', '169.254.0.0/16']),
    });
    const fromWorkers = policies.find((p) => p.metadata.name === 'queue-api-from-workers')!;
    expect(fromWorkers.spec.ingress[0].from[0].namespaceSelector.matchLabels).toEqual({
      'kubernetes.io/metadata.name': 'runplane-workers',
    });
    // The scheduler serves no public route: it is not reachable from the ingress controller.
    const fromIngress = policies.find((p) => p.metadata.name === 'services-from-ingress')!;
    expect(fromIngress.spec.podSelector.matchExpressions[0].values.sort()).toEqual(
      SERVICES.filter((s) => s !== 'scheduler').sort(),
    );
  });
});

describe('overlays', () => {
  it('dev: one NATS with JetStream and one PostgreSQL StatefulSet holding every service database', () => {
    const nats = get('k8s/overlays/dev', 'StatefulSet', 'nats')!;
    expect(nats.spec.replicas).toBe(1);
    expect(get('k8s/overlays/dev', 'ConfigMap', 'nats-config')!.data['nats.conf']).toContain(
      'jetstream',
    );
    expect(get('k8s/overlays/dev', 'StatefulSet', 'postgres')!.spec.replicas).toBe(1);
    for (const name of SERVICES) {
      expect(get('k8s/overlays/dev', 'Secret', `${name}-db-app`)!.stringData.uri).toBe(
        `postgresql://postgres@postgres.runplane.svc:5432/runplane_${name.replace(/-/g, '_')}`,
      );
    }
  });

  it('prod: a three-server JetStream cluster with replicated streams, a CloudNativePG cluster per service, traces to a collector', () => {
    const nats = get('k8s/overlays/prod', 'StatefulSet', 'nats')!;
    expect(nats.spec.replicas).toBe(3);
    const conf = get('k8s/overlays/prod', 'ConfigMap', 'nats-config')!.data['nats.conf'];
    expect(conf).toMatch(/cluster \{[\s\S]*nats-2\.nats-cluster/);
    const config = get('k8s/overlays/prod', 'ConfigMap', 'runplane-config')!.data;
    expect(config.RUNPLANE_NATS_REPLICAS).toBe('3');
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^http:\/\/otel-collector\./);
    for (const name of SERVICES) {
      const cluster = get('k8s/overlays/prod', 'Cluster', `${name}-db`)!;
      expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
      expect(cluster.spec.instances).toBe(3);
    }
    expect(get('k8s/overlays/prod', 'Ingress', 'runplane')!.spec.tls[0].secretName).toBe(
      'runplane-tls',
    );
    expect(get('k8s/overlays/prod', 'ServiceMonitor', 'runplane')).toBeDefined();
  });
});
