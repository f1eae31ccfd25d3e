import { Inject, Injectable, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LOGGER, type Logger } from '@runplane/platform';
import type { AddressInfo } from 'node:net';
import { SchedulerSettings } from '../settings.js';

/**
 * Where managed workers reach the queue API: RUNPLANE_PUBLIC_URL, or else this process's own
 * listening address, which is right in standalone mode (queue-api shares the port) and with
 * `PORT=0` is only known once the server listens.
 */
@Injectable()
export class PublicUrl {
  private announced = false;

  constructor(
    private readonly settings: SchedulerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  /** The base URL, or undefined while the HTTP server is not listening yet. */
  resolve(): string | undefined {
    if (this.settings.publicUrl) return this.settings.publicUrl;
    const server = this.adapterHost?.httpAdapter?.getHttpServer?.() as
      { address?: () => AddressInfo | string | null } | undefined;
    const address = server?.address?.();
    if (!address || typeof address === 'string') return undefined;
    const host = ['0.0.0.0', '::', ''].includes(address.address)
      ? '127.0.0.1'
      : address.family === 'IPv6'
        ? `[${address.address}]`
        : address.address;
    const url = `http://${host}:${address.port}`;
    if (!this.announced) {
      this.announced = true;
      this.logger.info(
        { url },
        "RUNPLANE_PUBLIC_URL is not set: managed workers reach the queue API at this process's address (set it in cluster mode)",
      );
    }
    return url;
  }
}
