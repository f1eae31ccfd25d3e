import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * A small stand-in for the Kubernetes API server (there is no cluster here): the core/v1 routes the
 * provider uses, over real HTTP, with bearer-token auth. It records every request so tests can
 * check exactly what was sent, keeps Pods, Secrets and PersistentVolumeClaims, and plays watch
 * events back to open watches (`emit`). A DELETE of a Pod behaves like the kubelet: the Pod gets
 * a deletionTimestamp, then is gone (DELETED event) shortly after.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: any;
}

type Obj = Record<string, any>;

export class FakeKubernetes {
  readonly token = `token-${randomUUID()}`;
  readonly requests: RecordedRequest[] = [];
  readonly pods = new Map<string, Obj>();
  readonly secrets = new Map<string, Obj>();
  readonly claims = new Map<string, Obj>();
  readonly nodes = new Map<string, Obj>();
  /** Answer for POST pods: a status code and message to refuse with, once. */
  refuseNextPod?: { code: number; message: string };
  /** Node reads answer 403 (RBAC without `get nodes`). */
  forbidNodes = false;
  /** Delay between a Pod DELETE and its DELETED event (graceful termination). */
  deleteDelayMs = 50;
  logs = new Map<string, string>();
  private rv = 100;
  private readonly watches = new Set<http.ServerResponse>();
  private server?: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.dropWatches();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }

  /** A kubeconfig pointing at this server. */
  kubeconfig(dir: string): string {
    const file = path.join(dir, `kubeconfig-${randomUUID()}.yaml`);
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: fake',
        'clusters:',
        `- name: fake`,
        `  cluster: {server: "${this.url}", insecure-skip-tls-verify: true}`,
        'users:',
        `- name: tester`,
        `  user: {token: "${this.token}"}`,
        'contexts:',
        `- name: fake`,
        `  context: {cluster: fake, user: tester}`,
      ].join('\n'),
    );
    return file;
  }

  watchCount(): number {
    return this.watches.size;
  }

  /** Ends every open watch (the API server does so every few minutes). */
  dropWatches(): void {
    for (const w of this.watches) w.end();
    this.watches.clear();
  }

  /** Changes a stored Pod and tells the watches (`MODIFIED`). */
  update(name: string, change: (pod: Obj) => void): Obj {
    const pod = this.pods.get(name);
    if (!pod) throw new Error(`no pod ${name}`);
    change(pod);
    pod.metadata.resourceVersion = String(++this.rv);
    this.emit('MODIFIED', pod);
    return pod;
  }

  /** Scheduled and running on `node` with `ip`. */
  run(name: string, node = 'node-1', ip = '10.1.2.3'): Obj {
    return this.update(name, (p) => {
      p.spec.nodeName = node;
      p.status = {
        phase: 'Running',
        podIP: ip,
        hostIP: '192.0.2.10',
        startTime: new Date().toISOString(),
        containerStatuses: [
          {
            name: 'main',
            ready: true,
            restartCount: 0,
            image: p.spec.containers[0].image,
            imageID: '',
            state: { running: { startedAt: new Date().toISOString() } },
          },
        ],
      };
    });
  }

  emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Obj): void {
    const line = `${JSON.stringify({ type, object })}\n`;
    for (const w of this.watches) w.write(line);
  }

  requestsTo(method: string, prefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(prefix));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* raw */
    }
    this.requests.push({
      method: req.method!,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
    });

    const send = (code: number, obj: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    const status = (code: number, reason: string, message: string) =>
      send(code, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason,
        code,
      });
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return status(401, 'Unauthorized', 'Unauthorized');

    const m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?([a-z]+)(?:\/([^/]+))?(?:\/([a-z]+))?$/.exec(
      url.pathname,
    );
    if (!m) return status(404, 'NotFound', `no route ${url.pathname}`);
    const [, namespace, kind, name, sub] = m;
    const store =
      kind === 'pods'
        ? this.pods
        : kind === 'secrets'
          ? this.secrets
          : kind === 'persistentvolumeclaims'
            ? this.claims
            : kind === 'nodes'
              ? this.nodes
              : undefined;
    if (!store) return status(404, 'NotFound', `unknown kind ${kind}`);

    if (kind === 'nodes') {
      if (this.forbidNodes)
        return status(403, 'Forbidden', 'nodes is forbidden: cannot get resource "nodes"');
      const node = this.nodes.get(name);
      return node ? send(200, node) : status(404, 'NotFound', `nodes "${name}" not found`);
    }
    if (req.method === 'GET' && !name) {
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders();
        this.watches.add(res);
        res.on('close', () => this.watches.delete(res));
        return;
      }
      return send(200, {
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: String(this.rv) },
        items: [...store.values()],
      });
    }
    if (req.method === 'GET' && sub === 'log') {
      return void (
        res.writeHead(200, { 'content-type': 'text/plain' }),
        res.end(this.logs.get(name) ?? '')
      );
    }
    if (req.method === 'GET') {
      const obj = store.get(name);
      return obj ? send(200, obj) : status(404, 'NotFound', `${kind} "${name}" not found`);
    }
    if (req.method === 'POST') {
      const objName = body?.metadata?.name;
      if (kind === 'pods' && this.refuseNextPod) {
        const r = this.refuseNextPod;
        this.refuseNextPod = undefined;
        return status(r.code, 'Invalid', r.message);
      }
      if (store.has(objName))
        return status(409, 'AlreadyExists', `${kind} "${objName}" already exists`);
      const obj = {
        ...body,
        metadata: {
          ...body.metadata,
          namespace,
          uid: randomUUID(),
          creationTimestamp: new Date().toISOString(),
          resourceVersion: String(++this.rv),
        },
      };
      if (kind === 'pods') obj.status = { phase: 'Pending' };
      store.set(objName, obj);
      if (kind === 'pods') this.emit('ADDED', obj);
      return send(201, obj);
    }
    if (req.method === 'PATCH') {
      const obj = store.get(name);
      if (!obj) return status(404, 'NotFound', `${kind} "${name}" not found`);
      Object.assign(obj.metadata, body?.metadata ?? {});
      return send(200, obj);
    }
    if (req.method === 'DELETE') {
      const obj = store.get(name);
      if (!obj) return status(404, 'NotFound', `${kind} "${name}" not found`);
      if (kind !== 'pods') {
        store.delete(name);
        return send(200, { kind: 'Status', apiVersion: 'v1', status: 'Success' });
      }
      obj.metadata.deletionTimestamp = new Date().toISOString();
      obj.metadata.resourceVersion = String(++this.rv);
      this.emit('MODIFIED', obj);
      setTimeout(() => {
        if (!this.pods.delete(name)) return;
        obj.metadata.resourceVersion = String(++this.rv);
        this.emit('DELETED', obj);
      }, this.deleteDelayMs);
      return send(200, obj);
    }
    return status(405, 'MethodNotAllowed', `${req.method} not allowed`);
  }
}
