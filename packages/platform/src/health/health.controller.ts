import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '@runplane/auth';
import type { FastifyReply } from 'fastify';
import { ReadinessService } from './readiness.js';

/** ReadinessReport. */
const REPORT = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    checks: {
      type: 'object',
      properties: {
        bus: { type: 'boolean' },
        databases: { type: 'boolean' },
        accepting: { type: 'boolean' },
      },
    },
    problems: { type: 'array', items: { type: 'string' } },
  },
};

@ApiTags('Operations')
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process answers. */
  @Public()
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({
    description: 'Alive.',
    schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } },
  })
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /** Readiness: storage and bus are up and the process is not draining. */
  @Public()
  @ApiOperation({
    summary: 'Readiness: the bus and every database answer, and the process is not draining',
  })
  @ApiOkResponse({ description: 'Ready; the report names each check.', schema: REPORT })
  @ApiResponse({
    status: 503,
    description: 'Not ready (starting, a dependency down, or shutting down).',
    schema: REPORT,
  })
  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const report = await this.readiness.report();
    return reply.status(report.status === 'ok' ? 200 : 503).send(report);
  }
}
