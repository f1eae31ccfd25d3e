import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { boolSetting, environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';

/**
 * webhook-sender's settings (docs/configuration.md). The delivery rules are RunPod's (2 more
 * attempts, 10 s apart) and 10 s per attempt; tests shorten them.
 */
@Injectable()
export class WebhookSettings {
  /**
   * Calls to private, loopback and link-local addresses: allowed on a standalone server (one
   * machine, whose receivers are usually local), refused in cluster mode. Either way no answer is
   * ever recorded, so a webhook cannot read what an internal address says.
   */
  readonly allowPrivate: boolean;
  /** Attempts per delivery: the first and 2 retries. */
  readonly maxAttempts: number;
  readonly retryDelayMs: number;
  /** Whole attempt: connect, answer and reading its body. */
  readonly timeoutMs: number;
  /** Attempts in flight per receiving host (per instance), so one slow receiver cannot hold up the others. */
  readonly perHostConcurrency: number;
  /** Attempts in flight per instance. */
  readonly concurrency: number;
  /** How often due attempts are looked for (besides the wake-ups of new events and retries). */
  readonly pollMs: number;
  /** Bytes of a receiver's answer read at most; all are dropped (only the status is recorded). */
  readonly maxResponseBytes: number;

  constructor(config: RunplaneConfig, bus: Bus) {
    const env = environmentOf(config);
    this.allowPrivate = boolSetting(env, 'WEBHOOK_ALLOW_PRIVATE', bus.kind === 'in-process');
    this.maxAttempts = intSetting(env, 'WEBHOOK_MAX_ATTEMPTS', 3, 1, 20);
    this.retryDelayMs = intSetting(env, 'WEBHOOK_RETRY_DELAY_MS', 10_000, 10, 3_600_000);
    this.timeoutMs = intSetting(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000);
    this.perHostConcurrency = intSetting(env, 'WEBHOOK_PER_HOST_CONCURRENCY', 8, 1, 1000);
    this.concurrency = intSetting(env, 'WEBHOOK_CONCURRENCY', 128, 1, 10_000);
    this.pollMs = intSetting(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000);
    this.maxResponseBytes = intSetting(
      env,
      'WEBHOOK_MAX_RESPONSE_BYTES',
      64 * 1024,
      1024,
      10 * 1024 * 1024,
    );
  }
}
