import { imageRef, type K8sObject } from './kustomize.js';

type Json = Record<string, unknown>;
interface Container {
  name: string;
  image?: string;
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, unknown> };
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
}
interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  serviceAccountName?: string;
  volumes?: Array<{ configMap?: { name: string } }>;
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet']);

/** The pod template of a workload (or the spec of a bare Pod / CronJob's job template). */
function podSpec(o: K8sObject): PodSpec | undefined {
  const spec = o.spec as Json | undefined;
  if (o.kind === 'Pod') return spec as PodSpec;
  if (o.kind === 'CronJob')
    return (((spec?.jobTemplate as Json)?.spec as Json)?.template as Json)?.spec as
      PodSpec | undefined;
  if (WORKLOADS.has(o.kind)) return (spec?.template as Json)?.spec as PodSpec | undefined;
  return undefined;
}

function podLabels(o: K8sObject): Record<string, string> {
  return ((((o.spec as Json)?.template as Json)?.metadata as Json)?.labels ?? {}) as Record<
    string,
    string
  >;
}

function selects(
  selector: Record<string, string> | undefined,
  labels: Record<string, string>,
): boolean {
  return (
    !!selector &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([k, v]) => labels[k] === v)
  );
}

/**
 * Runplane's deployment rules, beyond schema validity: pinned images, probes and resource requests
 * on every long-running container, and references between objects that resolve.
 */
export function policyProblems(objects: K8sObject[]): Map<K8sObject, string[]> {
  const problems = new Map<K8sObject, string[]>(objects.map((o) => [o, []]));
  const add = (o: K8sObject, message: string) => problems.get(o)!.push(message);
  const find = (kind: string, namespace: string | undefined, name: string) =>
    objects.find(
      (o) =>
        o.kind === kind &&
        o.metadata.name === name &&
        (o.metadata.namespace ?? 'default') === (namespace ?? 'default'),
    );
  const workloads = objects.filter((o) => WORKLOADS.has(o.kind));

  for (const o of objects) {
    const pod = podSpec(o);
    // Images: a tag or digest, never `latest` (an unpinned image changes under a running deployment).
    const images: Array<[string, string | undefined]> = [
      ...(pod?.containers ?? []).map(
        (c) => [`container ${c.name}`, c.image] as [string, string | undefined],
      ),
      ...(pod?.initContainers ?? []).map(
        (c) => [`init container ${c.name}`, c.image] as [string, string | undefined],
      ),
    ];
    if (o.kind === 'Cluster' && o.apiVersion.startsWith('postgresql.cnpg.io/'))
      images.push(['imageName', (o.spec as Json)?.imageName as string | undefined]);
    for (const [what, image] of images) {
      if (!image) {
        add(o, `${what}: no image`);
        continue;
      }
      const { tag, digest } = imageRef(image);
      if (!tag && !digest) add(o, `${what}: image ${image} is not pinned (no tag or digest)`);
      else if (tag === 'latest' && !digest) add(o, `${what}: image ${image} uses the tag "latest"`);
    }

    if (pod && (o.kind === 'Deployment' || o.kind === 'StatefulSet' || o.kind === 'DaemonSet')) {
      for (const c of pod.containers ?? []) {
        if (!c.livenessProbe) add(o, `container ${c.name}: no livenessProbe`);
        if (!c.readinessProbe) add(o, `container ${c.name}: no readinessProbe`);
      }
    }
    if (pod) {
      for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
        const requests = c.resources?.requests ?? {};
        for (const r of ['cpu', 'memory'])
          if (requests[r] === undefined) add(o, `container ${c.name}: no ${r} request`);
      }
      if (
        pod.serviceAccountName &&
        !find('ServiceAccount', o.metadata.namespace, pod.serviceAccountName)
      ) {
        add(o, `serviceAccountName ${pod.serviceAccountName} does not exist`);
      }
      const configMaps = [
        ...[...(pod.containers ?? []), ...(pod.initContainers ?? [])].flatMap((c) =>
          (
            ((c as unknown as Json).envFrom as
              Array<{ configMapRef?: { name: string } }> | undefined) ?? []
          ).map((e) => e.configMapRef?.name),
        ),
        ...(pod.volumes ?? []).map((v) => v.configMap?.name),
      ].filter((n): n is string => !!n);
      for (const name of new Set(configMaps))
        if (!find('ConfigMap', o.metadata.namespace, name))
          add(o, `ConfigMap ${name} does not exist`);
    }

    // Runplane's services: migrations in an init container of the same service, never at start.
    if (
      o.kind === 'Deployment' &&
      o.metadata.labels?.['app.kubernetes.io/component'] === 'service'
    ) {
      const name = o.metadata.name;
      const main = pod?.containers?.find((c) => c.name === name);
      if (!main || main.args?.join(' ') !== `start --service ${name}`)
        add(o, `container ${name} must run "runplane start --service ${name}"`);
      if (main?.env?.find((e) => e.name === 'RUNPLANE_MIGRATE_ON_START')?.value !== 'false')
        add(
          o,
          `container ${name} must set RUNPLANE_MIGRATE_ON_START=false (the init container migrates)`,
        );
      if (!pod?.initContainers?.some((c) => c.args?.join(' ') === `migrate --service ${name}`))
        add(o, `no init container runs "runplane migrate --service ${name}"`);
      if (main?.image && !pod?.initContainers?.every((c) => c.image === main.image))
        add(o, 'the migrate init container must use the same image as the service');
      for (const kind of [
        'Service',
        'PodDisruptionBudget',
        'HorizontalPodAutoscaler',
        'ServiceAccount',
      ]) {
        if (!find(kind, o.metadata.namespace, name)) add(o, `no ${kind} ${name}`);
      }
    }

    if (o.kind === 'Service') {
      const selector = (o.spec as Json)?.selector as Record<string, string> | undefined;
      if (
        selector &&
        !workloads.some(
          (w) => w.metadata.namespace === o.metadata.namespace && selects(selector, podLabels(w)),
        )
      )
        add(o, 'its selector matches no workload');
    }
    if (o.kind === 'PodDisruptionBudget') {
      const selector = ((o.spec as Json)?.selector as Json)?.matchLabels as
        Record<string, string> | undefined;
      if (
        !workloads.some(
          (w) => w.metadata.namespace === o.metadata.namespace && selects(selector, podLabels(w)),
        )
      )
        add(o, 'its selector matches no workload');
    }
    if (o.kind === 'HorizontalPodAutoscaler') {
      const ref = (o.spec as Json)?.scaleTargetRef as { kind: string; name: string };
      if (!find(ref.kind, o.metadata.namespace, ref.name))
        add(o, `scaleTargetRef ${ref.kind}/${ref.name} does not exist`);
    }
    if (o.kind === 'Ingress') {
      const rules =
        ((o.spec as Json)?.rules as Array<{
          http?: {
            paths: Array<{
              path: string;
              backend: { service: { name: string; port: { name?: string; number?: number } } };
            }>;
          };
        }>) ?? [];
      for (const p of rules.flatMap((r) => r.http?.paths ?? [])) {
        const service = find('Service', o.metadata.namespace, p.backend.service.name);
        const ports =
          ((service?.spec as Json)?.ports as Array<{ name?: string; port: number }>) ?? [];
        if (!service) add(o, `path ${p.path}: Service ${p.backend.service.name} does not exist`);
        else if (
          !ports.some((sp) =>
            p.backend.service.port.name
              ? sp.name === p.backend.service.port.name
              : sp.port === p.backend.service.port.number,
          )
        )
          add(o, `path ${p.path}: Service ${p.backend.service.name} has no such port`);
      }
    }
    if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') {
      const role = o.roleRef as { kind: string; name: string };
      if (!find(role.kind, role.kind === 'Role' ? o.metadata.namespace : undefined, role.name))
        add(o, `roleRef ${role.kind}/${role.name} does not exist`);
      for (const s of (o.subjects as Array<{ kind: string; name: string; namespace?: string }>) ??
        []) {
        if (s.kind === 'ServiceAccount' && !find('ServiceAccount', s.namespace, s.name))
          add(o, `subject ServiceAccount ${s.namespace}/${s.name} does not exist`);
      }
    }
    if (o.metadata.namespace && !find('Namespace', undefined, o.metadata.namespace))
      add(o, `namespace ${o.metadata.namespace} is not part of the manifests`);
  }
  return problems;
}
