import type { Bus } from '@runplane/bus';
import { RunplaneError, SchedulerRpc, type RpcDefinition } from '@runplane/contracts';

type Rpcs = typeof SchedulerRpc;
export type RpcName = keyof Rpcs;
export type ReqOf<N extends RpcName> = Rpcs[N] extends RpcDefinition<infer Q, unknown> ? Q : never;
export type ResOf<N extends RpcName> = Rpcs[N] extends RpcDefinition<unknown, infer R> ? R : never;
type Handler<N extends RpcName> = (req: ReqOf<N>) => ResOf<N> | Promise<ResOf<N>>;

/**
 * Stands in for the scheduler on the test server's bus: records every request queue-api makes and
 * answers with what the test programmed. Tests check queue-api's HTTP <-> bus translation, not
 * scheduling. An operation without a programmed answer fails loudly (501).
 */
export class SchedulerStandIn {
  private readonly handlers = new Map<RpcName, Handler<RpcName>>();
  private readonly calls = new Map<RpcName, unknown[]>();

  static async serve(bus: Bus): Promise<SchedulerStandIn> {
    const standIn = new SchedulerStandIn();
    for (const name of Object.keys(SchedulerRpc) as RpcName[]) {
      await bus.serve(SchedulerRpc[name] as RpcDefinition<unknown, unknown>, async (payload) => {
        standIn.calls.set(name, [...(standIn.calls.get(name) ?? []), payload]);
        const handler = standIn.handlers.get(name);
        if (!handler)
          throw new RunplaneError(501, `the stand-in scheduler has no answer for ${name}`);
        return handler(payload as never);
      });
    }
    return standIn;
  }

  on<N extends RpcName>(name: N, handler: Handler<N>): this {
    this.handlers.set(name, handler as unknown as Handler<RpcName>);
    return this;
  }

  callsOf<N extends RpcName>(name: N): ReqOf<N>[] {
    return (this.calls.get(name) ?? []) as ReqOf<N>[];
  }

  lastCall<N extends RpcName>(name: N): ReqOf<N> | undefined {
    return this.callsOf(name).at(-1);
  }

  /** Forgets programmed answers and recorded calls (call in beforeEach). */
  reset(): void {
    this.handlers.clear();
    this.calls.clear();
  }
}

/** A promise the test resolves by hand, e.g. to finish a long poll when it chooses. */
export function deferred<T>(): {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
} {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves once `check` returns true (polled every 20 ms), failing after `timeoutMs`. */
export async function until(
  check: () => boolean,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
