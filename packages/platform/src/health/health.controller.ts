import { Controller, Get, Res } from '@nestjs/common';
import { Public } from '@runplane/auth';
import type { FastifyReply } from 'fastify';
import { ReadinessService } from './readiness.js';

@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /** Readiness: storage and bus are up and the process is not draining. */
  @Public()
  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const report = await this.readiness.report();
    return reply.status(report.status === 'ok' ? 200 : 503).send(report);
  }
}
