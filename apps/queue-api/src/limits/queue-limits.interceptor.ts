import {
  Injectable,
  SetMetadata,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthenticatedRequest } from '@runplane/auth';
import { RunplaneError, type LimitedQueueOperation } from '@runplane/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { LimitSettings } from './limit-settings.js';
import { QueueLimits } from './queue-limits.service.js';

const LIMITED_OPERATION = 'runplane:limited-operation';

/** Which row of the limits table (docs/limits.md) a route (or every route of a controller) counts against. */
export const LimitedOperation = (operation: LimitedQueueOperation) =>
  SetMetadata(LIMITED_OPERATION, operation);

/**
 * Applies QueueLimits to routes marked with @LimitedOperation, after authentication (guards run
 * first, so only the endpoint's own users are counted). The in-flight slot is held until the
 * response is finished or its connection closes, which covers long polls and event streams.
 */
@Injectable()
export class QueueLimitsInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: QueueLimits,
    private readonly settings: LimitSettings,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const operation = this.reflector.getAllAndOverride<LimitedQueueOperation | undefined>(
      LIMITED_OPERATION,
      [context.getHandler(), context.getClass()],
    );
    if (!operation || !this.settings.enabled) return next.handle();
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
    return next.handle();
  }
}
