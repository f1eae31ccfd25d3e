import { randomUUID } from 'node:crypto';
import {
  RunplaneError,
  SUBJECT_ROOT,
  type EventDefinition,
  type RpcDefinition,
  type SignalDefinition,
} from '@runplane/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import {
  ClosedConnectionError,
  RequestError,
  TimeoutError,
  headers as natsHeaders,
  nanos,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription as NatsSubscription,
} from '@nats-io/transport-node';
import { connectNats } from './coalescing-transport.js';
import {
  Bus,
  DEFAULT_CONSUME,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type ConsumeOptions,
  type EventHandler,
  type Headers,
  type ConsumerLag,
  type PublishOptions,
  type RequestOptions,
  type RpcHandler,
  type SignalHandler,
  type Subscription,
} from '../bus.js';
import { silentLogger, type BusLogger } from '../logger.js';
import { withReceiveSpan, withSendSpan } from '../tracing.js';
import { replyFromError, unwrapReply, type RpcReply } from '../wire.js';

/** The JetStream objects a bus namespace owns: its event stream and its payload bucket. */
export function natsResourceNames(namespace: string): { stream: string; blobBucket: string } {
  return {
    stream: `${namespace.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')}_EVENTS`,
    blobBucket: `${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}_blobs`,
  };
}

/**
 * Deletes what a namespace left on a NATS server (its event stream, consumers included, and its
 * payload bucket), e.g. when a local cluster is torn down; returns the names of those that existed.
 */
export async function deleteNatsNamespace(
  servers: string | string[],
  namespace: string,
): Promise<string[]> {
  const nc = await connectNats({ servers, name: `runplane teardown ${namespace}` });
  try {
    const jsm = await jetstreamManager(nc);
    const { stream, blobBucket } = natsResourceNames(namespace);
    const deleted: string[] = [];
    // An object store is the stream OBJ_<bucket>.
    for (const name of [stream, `OBJ_${blobBucket}`]) {
      const found = await jsm.streams.delete(name).catch((err: Error) => {
        if (/stream not found/i.test(err.message)) return false;
        throw err;
      });
      if (found) deleted.push(name);
    }
    return deleted;
  } finally {
    await nc.close();
  }
}

export interface NatsBusOptions {
  servers: string | string[];
  /** Connection name shown by the NATS server (monitoring, `nats server report connections`). */
  name?: string;
  /**
   * Isolates installations (and tests) sharing one NATS server: every subject on the wire is
   * prefixed with `${namespace}.` and the JetStream stream / object store are named after it.
   */
  namespace?: string;
  logger?: BusLogger;
  /** How long JetStream keeps events (default 7 days). */
  streamMaxAgeMs?: number;
  /**
   * Copies JetStream keeps of the event stream and the payload bucket (default 1). 3 on a
   * three-server JetStream cluster: an event survives the loss of a server. An existing stream
   * is scaled to it.
   */
  replicas?: number;
}

/**
 * Encoded messages above this (or above the server's max_payload less 64 KB, if lower) go through
 * the object store: NATS refuses payloads over max_payload (1 MB by default).
 */
export const CLAIM_CHECK_THRESHOLD_BYTES = 900 * 1024;
/** Header naming the object that holds the real payload of a claim-checked message. */
export const CLAIM_CHECK_HEADER = 'Runplane-Claim-Check';

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_STREAM_MAX_AGE_MS = 7 * DAY_MS;
const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;
const ACK_WAIT_MS = 30_000;
/** Pull requests are re-issued this often; a stopped subscription closes its pending pull at once. */
const PULL_EXPIRES_MS = 30_000;
const MSG_ID_HEADER = 'Nats-Msg-Id';

/**
 * The bus of cluster mode: events on one JetStream stream with a durable pull consumer per
 * (consumer group, event), requests and signals on core NATS. Behaves like InProcessBus; the
 * shared contract suite (test/contract-suite.ts) holds both to it.
 */
export class NatsBus extends Bus {
  readonly kind = 'nats' as const;
  private readonly js: JetStreamClient;
  private readonly streamName: string;
  private readonly bucketName: string;
  private readonly subjectPrefix: string;
  private readonly claimThreshold: number;
  private readonly subscriptions = new Set<Subscription>();
  private readonly inflight = new Set<Promise<unknown>>();
  /** Durable consumers known to exist, so publish() provisions each one once per process. */
  private readonly provisioned = new Map<string, Promise<void>>();
  private streamReady?: Promise<void>;
  private blobStore?: Promise<ObjectStore>;
  private connected = true;
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly namespace: string,
    private readonly logger: BusLogger,
    private readonly streamMaxAgeMs: number,
    private readonly replicas = 1,
  ) {
    super();
    this.js = jetstream(nc);
    this.subjectPrefix = `${namespace}.`;
    ({ stream: this.streamName, blobBucket: this.bucketName } = natsResourceNames(namespace));
    // Leaves room for headers and protocol overhead on servers configured below the 1 MB default.
    this.claimThreshold = Math.min(
      CLAIM_CHECK_THRESHOLD_BYTES,
      (nc.info?.max_payload ?? 1024 * 1024) - 64 * 1024,
    );
    this.watchStatus().catch(() => {});
  }

  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const namespace = options.namespace ?? 'runplane';
    // One subject token: it prefixes subjects and names the stream and bucket.
    if (!/^[A-Za-z0-9_-]+$/.test(namespace))
      throw new Error(`invalid NATS namespace "${namespace}" (letters, digits, _ and - only)`);
    // Reconnect forever: a service outliving a NATS outage is better than one that exits.
    // noAsyncTraces: the client would capture a stack trace at every request for its timeout
    // errors (about a tenth of queue-api's CPU under load); ours name the subject instead.
    const nc = await connectNats({
      servers: options.servers,
      name: options.name,
      maxReconnectAttempts: -1,
      noAsyncTraces: true,
    });
    try {
      const jsm = await jetstreamManager(nc);
      return new NatsBus(
        nc,
        jsm,
        namespace,
        options.logger ?? silentLogger,
        options.streamMaxAgeMs ?? DEFAULT_STREAM_MAX_AGE_MS,
        options.replicas ?? 1,
      );
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  /** Per durable consumer of the event stream: messages not yet delivered plus those unacknowledged. */
  override async consumerLag(): Promise<ConsumerLag[]> {
    const out: ConsumerLag[] = [];
    try {
      for await (const c of this.jsm.consumers.list(this.streamName)) {
        const subject = (c.config.filter_subject ?? '').slice(this.subjectPrefix.length);
        out.push({
          subject,
          group: c.config.durable_name?.split('__')[0] ?? c.name,
          pending: c.num_pending + c.num_ack_pending,
        });
      }
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    }
    return out;
  }

  /** The underlying connection (diagnostics and tests). */
  get connection(): NatsConnection {
    return this.nc;
  }

  /** Names of the JetStream objects this bus uses (operators and tests clean them up). */
  get resources(): { namespace: string; stream: string; blobBucket: string } {
    return { namespace: this.namespace, stream: this.streamName, blobBucket: this.bucketName };
  }

  isReady(): boolean {
    return !this.closed && this.connected && !this.nc.isClosed() && !this.nc.isDraining();
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        this.logger.warn({ server: s.server }, 'disconnected from NATS; reconnecting');
      } else if (s.type === 'reconnect') {
        this.connected = true;
        this.logger.warn({ server: s.server }, 'reconnected to NATS');
      } else if (s.type === 'error') {
        this.logger.warn({ err: String(s.error) }, 'NATS reported an error');
      }
    }
  }

  // ---- events ---------------------------------------------------------------------------------

  async publish<T>(
    event: EventDefinition<T>,
    payload: T,
    options: PublishOptions = {},
  ): Promise<void> {
    this.assertOpen();
    await this.ensureStream();
    // Every declared group gets a durable consumer before the first event exists, so nothing
    // published before a consumer process starts is missed.
    await Promise.all(event.consumers.map((group) => this.provision(event, group)));
    await withSendSpan(
      `${event.subject} publish`,
      'producer',
      event.subject,
      async (headers) => {
        const id = options.id ?? randomUUID();
        const { data, hdrs } = await this.outgoing(encode(payload), headers, 'evt');
        await this.js.publish(this.wire(event.subject), data, { msgID: id, headers: hdrs });
      },
      options.headers,
    );
  }

  async consume<T>(
    event: EventDefinition<T>,
    group: string,
    handler: EventHandler<T>,
    options: ConsumeOptions = {},
  ): Promise<Subscription> {
    this.assertOpen();
    if (!event.consumers.includes(group)) {
      throw new Error(
        `consumer group "${group}" is not declared for ${event.subject} (declared: ${event.consumers.join(', ')})`,
      );
    }
    const opts: Required<ConsumeOptions> = { ...DEFAULT_CONSUME, ...options };
    await this.ensureStream();
    const durable = durableName(event, group);
    await this.ensureConsumer(event, group, opts);
    this.provisioned.set(durable, Promise.resolve());
    const consumer = await this.js.consumers.get(this.streamName, durable);
    const loop = new PullLoop(
      consumer,
      opts.concurrency,
      (msg) => this.deliver(event, group, handler as EventHandler<unknown>, opts, msg),
      this.logger,
      { subject: event.subject, group },
    );
    loop.start();
    return this.register(() => loop.stop());
  }

  private async deliver(
    event: EventDefinition<unknown>,
    group: string,
    handler: EventHandler<unknown>,
    opts: Required<ConsumeOptions>,
    msg: JsMsg,
  ): Promise<void> {
    const deliveryCount = msg.info.deliveryCount;
    const id = msg.headers?.get(MSG_ID_HEADER) || `${msg.info.stream}:${msg.info.streamSequence}`;
    const headers = userHeaders(msg.headers);
    // Long handlers would otherwise be redelivered to another replica after ack_wait.
    const keepAlive = setInterval(() => settle(() => msg.working()), ACK_WAIT_MS / 3);
    const run = (async () => {
      try {
        await withReceiveSpan(
          `${event.subject} process`,
          'consumer',
          event.subject,
          headers,
          async () => {
            const payload = decode(await this.incoming(msg.data, msg.headers, false));
            await handler({
              id,
              subject: event.subject,
              payload,
              publishedAt: msg.time.toISOString(),
              deliveryCount,
              headers: { ...headers },
            });
          },
        );
        settle(() => msg.ack(), this.logger);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (deliveryCount >= opts.maxDeliver) {
          this.logger.error(
            { subject: event.subject, group, eventId: id, deliveryCount, err: message },
            'event dead-lettered after too many failed deliveries',
          );
          settle(() => msg.term(), this.logger);
          return;
        }
        this.logger.warn(
          { subject: event.subject, group, eventId: id, deliveryCount, err: message },
          'event handler failed; will redeliver',
        );
        settle(() => msg.nak(opts.retryDelayMs(deliveryCount)), this.logger);
      } finally {
        clearInterval(keepAlive);
      }
    })();
    await this.track(run);
  }

  private ensureStream(): Promise<void> {
    this.streamReady ??= (async () => {
      const maxAge = nanos(this.streamMaxAgeMs);
      // JetStream rejects a duplicate window longer than max_age.
      const duplicateWindow = nanos(Math.min(DUPLICATE_WINDOW_MS, this.streamMaxAgeMs));
      try {
        const info = await this.jsm.streams.info(this.streamName);
        if (
          info.config.max_age !== maxAge ||
          info.config.duplicate_window !== duplicateWindow ||
          (info.config.num_replicas ?? 1) !== this.replicas
        ) {
          await this.jsm.streams.update(this.streamName, {
            ...info.config,
            max_age: maxAge,
            duplicate_window: duplicateWindow,
            num_replicas: this.replicas,
          });
        }
      } catch (err) {
        if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
        await this.jsm.streams.add({
          name: this.streamName,
          subjects: [this.wire(`${SUBJECT_ROOT}.evt.>`)],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          max_age: maxAge,
          duplicate_window: duplicateWindow,
          num_replicas: this.replicas,
        });
      }
    })().catch((err) => {
      this.streamReady = undefined; // retry on the next call
      throw err;
    });
    return this.streamReady;
  }

  /** Creates the group's durable consumer if missing, without touching settings a consumer chose. */
  private provision(event: EventDefinition<unknown>, group: string): Promise<void> {
    const durable = durableName(event, group);
    let ready = this.provisioned.get(durable);
    if (!ready) {
      ready = this.ensureConsumer(event, group).catch((err) => {
        this.provisioned.delete(durable);
        throw err;
      });
      this.provisioned.set(durable, ready);
    }
    return ready;
  }

  /**
   * Makes sure the durable consumer exists; with `opts` (a consume() call) its redelivery and
   * flow-control settings are brought in line with the subscriber's options.
   */
  private async ensureConsumer(
    event: EventDefinition<unknown>,
    group: string,
    opts?: Required<ConsumeOptions>,
  ): Promise<void> {
    const durable = durableName(event, group);
    const maxDeliver = opts?.maxDeliver ?? DEFAULT_CONSUME.maxDeliver;
    const maxAckPending = maxAckPendingFor(opts?.concurrency ?? DEFAULT_CONSUME.concurrency);
    let existing;
    try {
      existing = await this.jsm.consumers.info(this.streamName, durable);
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
    }
    if (!existing) {
      // On NATS < 2.10 "create" silently updates an existing consumer, hence the info() first.
      await this.jsm.consumers.add(this.streamName, {
        durable_name: durable,
        deliver_policy: DeliverPolicy.All,
        ack_policy: AckPolicy.Explicit,
        filter_subject: this.wire(event.subject),
        ack_wait: nanos(ACK_WAIT_MS),
        max_deliver: maxDeliver,
        max_ack_pending: maxAckPending,
      });
    } else if (
      opts &&
      (existing.config.max_deliver !== maxDeliver ||
        existing.config.max_ack_pending !== maxAckPending)
    ) {
      await this.jsm.consumers.update(this.streamName, durable, {
        max_deliver: maxDeliver,
        max_ack_pending: maxAckPending,
      });
    }
  }

  // ---- request/reply --------------------------------------------------------------------------

  async request<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    payload: Req,
    options: RequestOptions = {},
  ): Promise<Res> {
    this.assertOpen();
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    return withSendSpan(
      `${rpc.subject} request`,
      'client',
      rpc.subject,
      async (headers) => {
        const { data, hdrs, claim } = await this.outgoing(encode(payload), headers, 'rpc');
        let reply: Msg;
        try {
          reply = await this.nc.request(this.wire(rpc.subject), data, {
            timeout: Math.max(1, deadline - Date.now()),
            headers: hdrs,
          });
        } catch (err) {
          if (err instanceof TimeoutError)
            throw new RunplaneError(504, `no reply to ${rpc.subject} within ${timeoutMs} ms`);
          if (claim) void this.track(this.deleteBlob(claim)); // nobody got the request, so nobody will read it
          if (err instanceof RequestError && err.isNoResponders())
            throw RunplaneError.unavailable(
              `no instance of ${rpc.service} is answering ${rpc.subject}`,
            );
          if (err instanceof RequestError || err instanceof ClosedConnectionError)
            throw RunplaneError.unavailable(
              `bus unavailable while requesting ${rpc.subject}: ${err.message}`,
            );
          throw err;
        }
        return unwrapReply(
          decode(await this.incoming(reply.data, reply.headers, true)) as RpcReply<Res>,
        );
      },
      options.headers,
    );
  }

  async serve<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    handler: RpcHandler<Req, Res>,
  ): Promise<Subscription> {
    this.assertOpen();
    const mine = new Set<Promise<unknown>>();
    // The queue group makes replicas of the service share requests.
    const natsSub = this.nc.subscribe(this.wire(rpc.subject), {
      queue: rpc.service,
      callback: (err, msg) => {
        if (err) {
          this.logger.error(
            { subject: rpc.subject, err: String(err) },
            'request subscription failed',
          );
          return;
        }
        const run = this.track(
          this.answer(rpc.subject, handler as RpcHandler<unknown, unknown>, msg),
        );
        mine.add(run);
        void run.finally(() => mine.delete(run));
      },
    });
    // Interest must reach the server before serve() returns, or an immediate request gets "no responders".
    await this.nc.flush();
    return this.register(async () => {
      if (!natsSub.isClosed()) await natsSub.drain().catch(() => {});
      await Promise.allSettled([...mine]);
    });
  }

  private async answer(
    subject: string,
    handler: RpcHandler<unknown, unknown>,
    msg: Msg,
  ): Promise<void> {
    const headers = userHeaders(msg.headers);
    const reply = await withReceiveSpan(
      `${subject} handle`,
      'server',
      subject,
      headers,
      async (): Promise<RpcReply<unknown>> => {
        try {
          const payload = decode(await this.incoming(msg.data, msg.headers, true));
          return { ok: true, data: await handler(payload, { subject, headers: { ...headers } }) };
        } catch (err) {
          if (!(err instanceof RunplaneError))
            this.logger.error(
              { subject, err: (err as Error)?.stack ?? String(err) },
              'request handler failed',
            );
          return replyFromError(err, subject);
        }
      },
    );
    if (!msg.reply) return;
    try {
      const out = await this.outgoing(encode(reply), {}, 'rpc');
      msg.respond(out.data, { headers: out.hdrs });
    } catch (err) {
      this.logger.error({ subject, err: String(err) }, 'could not send reply');
    }
  }

  // ---- signals --------------------------------------------------------------------------------

  async signal<T>(signal: SignalDefinition<T>, payload: T): Promise<void> {
    this.assertOpen();
    this.nc.publish(this.wire(signal.subject), encode(payload));
  }

  async onSignal<T>(signal: SignalDefinition<T>, handler: SignalHandler<T>): Promise<Subscription> {
    this.assertOpen();
    // No queue group: every instance gets every signal.
    const natsSub: NatsSubscription = this.nc.subscribe(this.wire(signal.subject), {
      callback: (err, msg) => {
        if (err) return;
        void Promise.resolve()
          .then(() => handler(decode(msg.data) as T))
          .catch((e) =>
            this.logger.warn({ subject: signal.subject, err: String(e) }, 'signal handler failed'),
          );
      },
    });
    await this.nc.flush();
    return this.register(async () => natsSub.unsubscribe());
  }

  // ---- claim check ----------------------------------------------------------------------------

  /** Turns an encoded message into what goes on the wire, parking oversized bodies in the object store. */
  private async outgoing(
    data: Uint8Array,
    headers: Headers,
    kind: 'rpc' | 'evt',
  ): Promise<{ data: Uint8Array; hdrs?: MsgHdrs; claim?: string }> {
    const hdrs = toNatsHeaders(headers);
    if (data.length <= this.claimThreshold) return { data, hdrs };
    const claim = `${kind}.${randomUUID()}`;
    await (await this.blobs()).putBlob({ name: claim }, data);
    const withClaim = hdrs ?? natsHeaders();
    withClaim.set(CLAIM_CHECK_HEADER, claim);
    return { data: new Uint8Array(0), hdrs: withClaim, claim };
  }

  /**
   * The body of a received message, fetched from the object store when claim-checked. Requests
   * and replies are read exactly once, so their objects go; an event's object stays for other
   * groups and redeliveries, and expires with the bucket's TTL.
   */
  private async incoming(
    data: Uint8Array,
    hdrs: MsgHdrs | undefined,
    consume: boolean,
  ): Promise<Uint8Array> {
    const claim = hdrs?.get(CLAIM_CHECK_HEADER);
    if (!claim) return data;
    const blob = await (await this.blobs()).getBlob(claim);
    if (!blob)
      throw new Error(
        `claim-checked payload ${claim} is missing from bucket ${this.bucketName} (expired?)`,
      );
    if (consume) void this.track(this.deleteBlob(claim));
    return blob;
  }

  private async deleteBlob(name: string): Promise<void> {
    try {
      await (await this.blobs()).delete(name);
    } catch (err) {
      this.logger.warn(
        { object: name, err: String(err) },
        'could not delete a claim-checked payload; it expires with the bucket TTL',
      );
    }
  }

  private blobs(): Promise<ObjectStore> {
    // An event's payload must outlive the event, so the TTL is at least the stream's max age.
    this.blobStore ??= new Objm(this.js)
      .create(this.bucketName, {
        storage: StorageType.File,
        ttl: nanos(Math.max(DAY_MS, this.streamMaxAgeMs)),
        replicas: this.replicas,
      })
      .catch((err) => {
        this.blobStore = undefined;
        throw err;
      });
    return this.blobStore;
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.subscriptions].map((s) => s.stop()));
    await Promise.allSettled([...this.inflight]);
    // Drain flushes the acks and replies of the handlers that just finished.
    if (!this.nc.isClosed())
      await this.nc
        .drain()
        .catch((err) => this.logger.warn({ err: String(err) }, 'NATS drain failed'));
  }

  private register(stop: () => Promise<void>): Subscription {
    const sub: Subscription = {
      stop: async () => {
        this.subscriptions.delete(sub);
        await stop();
      },
    };
    this.subscriptions.add(sub);
    return sub;
  }

  private track<T>(run: Promise<T>): Promise<T> {
    this.inflight.add(run);
    return run.finally(() => this.inflight.delete(run));
  }

  private wire(subject: string): string {
    return this.subjectPrefix + subject;
  }

  private assertOpen(): void {
    if (this.closed) throw RunplaneError.unavailable('the bus is closed');
  }
}

/**
 * Pulls from one durable consumer with at most `concurrency` messages in hand: each pull asks for
 * exactly the free slots, so a replica never hoards messages another replica could be handling.
 */
class PullLoop {
  private active = 0;
  private stopped = false;
  private batch?: ConsumerMessages;
  private wake?: () => void;
  private done?: Promise<void>;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly consumer: Consumer,
    private readonly concurrency: number,
    private readonly handle: (msg: JsMsg) => Promise<void>,
    private readonly logger: BusLogger,
    private readonly where: { subject: string; group: string },
  ) {}

  start(): void {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.batch?.close().catch(() => {});
    this.wake?.();
    await this.done;
    await Promise.allSettled([...this.running]);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      if (this.active >= this.concurrency) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      try {
        this.batch = await this.consumer.fetch({
          max_messages: this.concurrency - this.active,
          expires: PULL_EXPIRES_MS,
        });
        if (this.stopped) this.batch.close().catch(() => {});
        // Messages already received when stop() closed the pull are "in hand" and still handled.
        for await (const msg of this.batch) this.dispatch(msg);
        failures = 0;
      } catch (err) {
        if (this.stopped) break;
        // Includes a NATS reconnect or a server restart: pull again once the consumer answers.
        failures += 1;
        if (failures === 1 || failures % 10 === 0)
          this.logger.warn(
            { ...this.where, failures, err: String(err) },
            'pulling events failed; retrying',
          );
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      } finally {
        this.batch = undefined;
      }
    }
  }

  private dispatch(msg: JsMsg): void {
    this.active += 1;
    const run = this.handle(msg).finally(() => {
      this.active -= 1;
      this.running.delete(run);
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    });
    this.running.add(run);
  }
}

/** Durable consumer name: one per (group, event name, version); dots and spaces are not allowed. */
export function durableName(
  event: Pick<EventDefinition<unknown>, 'name' | 'version'>,
  group: string,
): string {
  return `${group}__${event.name}_v${event.version}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * Unacknowledged messages the server lets out per consumer. It is shared by every replica and also
 * counts events waiting for a delayed redelivery, so it is kept well above one subscriber's
 * concurrency (a low cap would starve the other replicas while failures back off).
 */
function maxAckPendingFor(concurrency: number): number {
  return Math.max(1000, concurrency * 16);
}

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

/** Runs an ack-type call that cannot matter any more if the connection is gone. */
function settle(fn: () => void, logger?: BusLogger): void {
  try {
    fn();
  } catch (err) {
    logger?.warn({ err: String(err) }, 'could not acknowledge an event; it will be redelivered');
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function encode(value: unknown): Uint8Array {
  return value === undefined ? new Uint8Array(0) : encoder.encode(JSON.stringify(value));
}

function decode(data: Uint8Array): unknown {
  return data.length === 0 ? undefined : JSON.parse(decoder.decode(data));
}

function toNatsHeaders(headers: Headers): MsgHdrs | undefined {
  const entries = Object.entries(headers);
  if (entries.length === 0) return undefined;
  const h = natsHeaders();
  for (const [k, v] of entries) h.set(k, v);
  return h;
}

/** Headers a handler sees: the publisher's and the trace context, without the bus's own. */
function userHeaders(hdrs: MsgHdrs | undefined): Headers {
  const out: Headers = {};
  if (!hdrs) return out;
  for (const [k, values] of hdrs) {
    const lower = k.toLowerCase();
    if (lower.startsWith('nats-') || lower === CLAIM_CHECK_HEADER.toLowerCase()) continue;
    out[k] = values[values.length - 1];
  }
  return out;
}
