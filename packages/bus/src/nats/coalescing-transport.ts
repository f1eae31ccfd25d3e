import type { Socket } from 'node:net';
import {
  NatsConnectionImpl,
  setTransportFactory,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';
// The stock Node transport; the package exports it only from its own module file.
import { NodeTransport, nodeResolveHost } from '@nats-io/transport-node/lib/node_transport.js';

/**
 * The Node transport with its socket writes gathered per event-loop turn. nats.js writes once
 * per microtask turn, and under load a service answers each HTTP request or bus message in its
 * own I/O callback, so every request, reply and signal became a socket write of its own: writes
 * were the largest item of queue-api's and the scheduler's profiles (about 30 % of their CPU).
 * Corked until the turn's check phase, everything published while one batch of I/O events is
 * handled leaves in one write; nothing waits for a timer.
 */
class CoalescingTransport extends NodeTransport {
  private corked = false;

  override send(frame: Uint8Array): void {
    const socket: Socket | undefined = this.socket;
    if (socket && !this.corked) {
      this.corked = true;
      socket.cork();
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    super.send(frame);
  }
}

/**
 * `connect` of @nats-io/transport-node with the coalescing transport. The transport factory is
 * global to nats.js and read at every (re)connection, so it is set again at each call (the stock
 * `connect`, if anything calls it, sets the plain one).
 */
export function connectNats(options: ConnectionOptions): Promise<NatsConnection> {
  setTransportFactory({ factory: () => new CoalescingTransport(), dnsResolveFn: nodeResolveHost });
  return NatsConnectionImpl.connect(options);
}
