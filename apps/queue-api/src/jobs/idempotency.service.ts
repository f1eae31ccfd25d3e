import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { RunplaneError } from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import type { Logger } from 'pino';
import {
  IdempotencyRepository,
  type Claim,
  type IdempotencyScope,
} from './idempotency.repository.js';

/** a key returns the same job for 24 h. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
const MAX_KEY_LENGTH = 255;
const SWEEP_EVERY_MS = 10 * 60_000;

/** Checks an `Idempotency-Key` header: absent/blank → undefined, otherwise a printable key. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const key = value?.trim();
  if (!key) return undefined;
  if (key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw RunplaneError.badRequest(
      `Idempotency-Key must be at most ${MAX_KEY_LENGTH} printable ASCII characters`,
      [
        {
          path: 'Idempotency-Key',
          message: `at most ${MAX_KEY_LENGTH} printable ASCII characters`,
        },
      ],
    );
  }
  return key;
}

/** Binds Idempotency-Keys to job ids and forgets them after 24 h. */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly keys: IdempotencyRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => {
      this.keys
        .deleteExpired(new Date())
        .catch((err) =>
          this.logger.warn({ err: String(err) }, 'sweeping expired idempotency keys failed'),
        );
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /** The job id of the key: `jobId` if this call bound it, the earlier one if the key was taken. */
  claim(scope: IdempotencyScope, jobId: string): Promise<Claim> {
    return this.keys.claim(scope, jobId, new Date(), IDEMPOTENCY_TTL_MS);
  }

  /** Frees the key after its submission was rejected, so a corrected request may use it. */
  async forget(scope: IdempotencyScope, jobId: string): Promise<void> {
    await this.keys
      .release(scope, jobId)
      .catch((err) =>
        this.logger.warn({ err: String(err) }, 'releasing an idempotency key failed'),
      );
  }
}
