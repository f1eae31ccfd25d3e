import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RunplaneError } from '@runplane/contracts';
import {
  ACCESS_KEY,
  QUERY_KEY_ALLOWED,
  isAllowed,
  type Access,
  type AuthenticatedRequest,
} from './access.js';
import { extractApiKey } from './api-key.js';
import { AuthThrottle, rateLimited, type Refusal } from './auth-throttle.js';
import { ApiKeyVerifier } from './key-verifier.js';

interface HttpRequestLike extends AuthenticatedRequest {
  method: string;
  url: string;
  ip: string;
  headers: Record<string, string | string[] | undefined>;
  query?: Record<string, unknown>;
  params?: Record<string, string>;
}

/**
 * Global guard of every HTTP route: resolves the key to a Principal and checks the route's access
 * level. Missing, unknown and under-privileged keys all get 401, as RunPod does; an address that
 * presented too many unknown keys, and a key over the management limit, get 429 (AuthThrottle).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: ApiKeyVerifier,
    @Optional() private readonly throttle: AuthThrottle = AuthThrottle.none,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true; // bus handlers are internal; GraphQL authenticates in its own hook
    const targets = [context.getHandler(), context.getClass()];
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
    const refuse = (refusal: Refusal) => {
      context
        .switchToHttp()
        .getResponse<{ header(name: string, value: string): unknown }>()
        .header('retry-after', String(refusal.retryAfter));
      return rateLimited(refusal);
    };
    const declared = this.reflector.getAllAndOverride<Access | undefined>(ACCESS_KEY, targets);
    if (declared === 'public') return true;
    const access: Exclude<Access, 'public'> =
      declared ?? (request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write');

    const allowQuery = this.reflector.getAllAndOverride<boolean | undefined>(
      QUERY_KEY_ALLOWED,
      targets,
    );
    const authorization = request.headers.authorization;
    const key = extractApiKey(
      Array.isArray(authorization) ? authorization[0] : authorization,
      allowQuery ? String(request.query?.api_key ?? '') : undefined,
    );
    if (!key)
      throw RunplaneError.unauthorized('missing API key: send "Authorization: Bearer <key>"');
    const blocked = await this.throttle.checkAddress(request.ip);
    if (blocked) throw refuse(blocked);
    const principal = await this.verifier.verify(key);
    if (!principal) {
      await this.throttle.recordFailure(request.ip);
      throw RunplaneError.unauthorized('invalid API key');
    }
    if (!isAllowed(principal, access, request.params?.endpointId)) {
      throw RunplaneError.unauthorized(
        `this API key (scope ${principal.scope}) may not use this route`,
      );
    }
    const overLimit = await this.throttle.checkManagement(principal, request.url);
    if (overLimit) throw refuse(overLimit);
    request.principal = principal;
    return true;
  }
}
