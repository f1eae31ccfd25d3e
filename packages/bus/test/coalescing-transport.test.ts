import { afterAll, describe, expect, it } from '@jest/globals';
import type { Socket } from 'node:net';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NATS_URL, requireService, uniqueName } from '@runplane/test-support';
import { connectNats } from '../src/nats/coalescing-transport.js';

const natsUp = await requireService('nats', 'coalescing NATS transport');

/** Socket writes (write or writev reaching the kernel) of a connection, counted from now on. */
function countWrites(nc: NatsConnection): () => number {
  const socket = (nc as unknown as { protocol: { transport: { socket: Socket } } }).protocol
    .transport.socket as Socket & Record<'_write' | '_writev', (...args: unknown[]) => void>;
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method];
    socket[method] = function (this: unknown, ...args: unknown[]) {
      writes++;
      return original.apply(this, args);
    };
  }
  return () => writes;
}

(natsUp ? describe : describe.skip)('connectNats', () => {
  const open: NatsConnection[] = [];
  afterAll(async () => {
    await Promise.all(open.map((nc) => nc.close()));
  });

  /** Publishes `count` messages, each in a microtask turn of its own, within one event-loop turn. */
  async function publishSeparately(nc: NatsConnection, subject: string, count: number) {
    for (let i = 0; i < count; i++) {
      nc.publish(subject, String(i));
      await Promise.resolve();
      await Promise.resolve();
    }
  }

  it('sends what one event-loop turn published in one socket write, and delivers all of it', async () => {
    const subject = uniqueName('coalesce');
    const receiver = await connect({ servers: NATS_URL });
    const sender = await connectNats({ servers: NATS_URL });
    const plain = await connect({ servers: NATS_URL });
    open.push(receiver, sender, plain);
    const got: string[] = [];
    const sub = receiver.subscribe(subject, {
      callback: (_err, msg) => void got.push(msg.string()),
    });
    await receiver.flush();

    const coalescedWrites = countWrites(sender);
    await new Promise<void>((resolve) =>
      setImmediate(() => void publishSeparately(sender, subject, 20).then(resolve)),
    );
    await sender.flush();
    const plainWrites = countWrites(plain);
    await new Promise<void>((resolve) =>
      setImmediate(() => void publishSeparately(plain, subject, 20).then(resolve)),
    );
    await plain.flush();

    // The stock transport writes at every microtask turn; the flush adds a write (PING) to each.
    expect(plainWrites()).toBeGreaterThanOrEqual(20);
    expect(coalescedWrites()).toBeLessThanOrEqual(2);
    const deadline = Date.now() + 5000;
    while (got.length < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual([...Array(20).keys(), ...Array(20).keys()].map(String));
    sub.unsubscribe();
  });
});
