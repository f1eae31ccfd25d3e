import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthenticatedRequest } from '@runplane/auth';
import { RunplaneError, type LimitedQueueOperation } from '@runplane/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitSettings } from './limit-settings.js';
import { QueueLimits } from './queue-limits.service.js';

const LIMITED_OPERATION = 'runplane:limited-operation';

/** Which row of the limits table (docs/limits.md) a route (or every route of a controller) counts against. */
export const LimitedOperation = (operation: LimitedQueueOperation) =>
  SetMetadata(LIMITED_OPERATION, operation);

/**
 * Applies QueueLimits to routes marked with @LimitedOperation, after authentication (the global
 * API key guard runs first, so only the endpoint's own users are counted) and before the body is
 * validated. The in-flight slot is held until the response is finished or its connection closes,
 * which covers long polls and event streams. A guard rather than an interceptor: an interceptor
 * puts every request of its routes through rxjs (about 3 % of a busy `/run` intake's CPU).
 */
@Injectable()
export class QueueLimitsGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: QueueLimits,
    private readonly settings: LimitSettings,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const operation = this.reflector.getAllAndOverride<LimitedQueueOperation | undefined>(
      LIMITED_OPERATION,
      [context.getHandler(), context.getClass()],
    );
    if (!operation || !this.settings.enabled) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & AuthenticatedRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const endpointId = (request.params as Record<string, string>).endpointId;
    const admission = await this.limits.admit(request.principal!, endpointId, operation);
    if (!admission.admitted) {
      reply.header('retry-after', String(admission.retryAfterSeconds));
      throw new RunplaneError(429, admission.message, undefined, 'RATE_LIMITED');
    }
    if (reply.raw.writableFinished || reply.raw.destroyed) admission.release();
    else reply.raw.once('close', admission.release);
    return true;
  }
}
