import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '@runplane/auth';
import { RunplaneError } from '@runplane/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { LOGGER } from '../bootstrap/service-descriptor.js';
import { RunplaneConfig } from '../config/runplane-config.js';
import { metricsAllowList } from './allow-list.js';
import { RunplaneMetrics } from './runplane-metrics.js';
import { ApiError } from '../docs/decorators.js';

/**
 * `GET /metrics` (Prometheus text format). Not behind an API key — scrapers rarely carry one and
 * it must keep working while the vault is down — but only served to peers whose address is in
 * RUNPLANE_METRICS_ALLOW (loopback by default; the Kubernetes manifests allow the pod network,
 * whose ingress never routes /metrics). The socket's address counts, never X-Forwarded-For.
 */
@ApiTags('Operations')
@Controller()
export class MetricsController {
  private readonly allowed: (address: string | undefined) => boolean;

  constructor(
    private readonly metrics: RunplaneMetrics,
    config: RunplaneConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.allowed = metricsAllowList(config.RUNPLANE_METRICS_ALLOW);
  }

  @Public()
  @ApiOperation({
    summary: 'Prometheus metrics',
    description: 'Only for peers whose address is in RUNPLANE_METRICS_ALLOW (loopback by default).',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format.', schema: { type: 'string' } })
  @ApiError(403, "The peer's address is not in RUNPLANE_METRICS_ALLOW.")
  @Get('metrics')
  async scrape(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    if (!this.allowed(request.socket.remoteAddress)) {
      throw new RunplaneError(
        403,
        'metrics are only served to addresses listed in RUNPLANE_METRICS_ALLOW',
        undefined,
        'METRICS_FORBIDDEN',
      );
    }
    const text = await this.metrics.render(this.logger);
    return reply.header('content-type', this.metrics.contentType).send(text);
  }
}
