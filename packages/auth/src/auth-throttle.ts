import { RunplaneError, type Principal } from '@runplane/contracts';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Paths of the management APIs (REST and GraphQL); the queue API has its own per-endpoint limits. */
export const MANAGEMENT_PATHS = /^\/(v1\/|graphql)/;
export const MANAGEMENT_WINDOW_SECONDS = 10;

export interface AuthThrottleSettings {
  /** Unknown keys one client address may present per window before it is refused; 0: no limit. */
  failuresPerWindow: number;
  failureWindowSeconds: number;
  /** Requests per 10 s each verified key may make to the management APIs; 0: no limit. */
  managementPerWindow: number;
}

/** A refusal: the message of the 429 and its Retry-After in seconds. */
export interface Refusal {
  message: string;
  retryAfter: number;
}

/**
 * The per-instance limits around authentication, shared by the REST guard and GraphQL:
 * - failed authentications (a presented key that is unknown or revoked) per client address. Once
 *   an address is over the limit, every key it presents is refused until its window ends, without
 *   being checked: otherwise a guesser would still learn which guess is right. Successful
 *   authentications are never counted, so a client with a valid key is not blocked by its own traffic.
 * - management requests per verified key (its id), so encodings of one key share one budget.
 * Counts are kept in memory per instance (docs/limits.md).
 */
export class AuthThrottle {
  private readonly failures?: RateLimiterMemory;
  private readonly management?: RateLimiterMemory;

  constructor(private readonly settings: AuthThrottleSettings) {
    if (settings.failuresPerWindow > 0)
      this.failures = new RateLimiterMemory({
        points: settings.failuresPerWindow,
        duration: settings.failureWindowSeconds,
        keyPrefix: 'authfail',
      });
    if (settings.managementPerWindow > 0)
      this.management = new RateLimiterMemory({
        points: settings.managementPerWindow,
        duration: MANAGEMENT_WINDOW_SECONDS,
        keyPrefix: 'mgmt',
      });
  }

  /** A refusal when `address` has used up its failed authentications, before any key is checked. */
  async checkAddress(address: string): Promise<Refusal | undefined> {
    if (!this.failures) return undefined;
    const res = await this.failures.get(address);
    if (!res || res.consumedPoints < this.settings.failuresPerWindow) return undefined;
    const retryAfter = seconds(res.msBeforeNext);
    return {
      message: `too many failed authentications from this address (${this.settings.failuresPerWindow} per ${this.settings.failureWindowSeconds} s); retry after ${retryAfter} s`,
      retryAfter,
    };
  }

  /** Counts a presented key that did not verify against `address`. */
  async recordFailure(address: string): Promise<void> {
    await this.failures?.consume(address).catch((res: unknown) => {
      if (!(res instanceof RateLimiterRes)) throw res;
    });
  }

  /** Counts a management request of `principal`; a refusal once its key is over the limit. */
  async checkManagement(principal: Principal, url: string): Promise<Refusal | undefined> {
    if (!this.management || !MANAGEMENT_PATHS.test(url)) return undefined;
    try {
      await this.management.consume(principal.keyId);
      return undefined;
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const retryAfter = seconds(res.msBeforeNext);
      return {
        message: `rate limit of the management API exceeded (${this.settings.managementPerWindow} requests per ${MANAGEMENT_WINDOW_SECONDS} s per key); retry after ${retryAfter} s`,
        retryAfter,
      };
    }
  }

  /** No limits (processes and tests that construct the guard without the platform's settings). */
  static readonly none = new AuthThrottle({
    failuresPerWindow: 0,
    failureWindowSeconds: 1,
    managementPerWindow: 0,
  });
}

/** The 429 of a refusal (REST; GraphQL builds its own error from the same refusal). */
export function rateLimited(refusal: Refusal): RunplaneError {
  return new RunplaneError(429, refusal.message, undefined, 'RATE_LIMITED');
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
