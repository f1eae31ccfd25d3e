import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
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
import { ApiKeyVerifier } from './key-verifier.js';

interface HttpRequestLike extends AuthenticatedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  query?: Record<string, unknown>;
  params?: Record<string, string>;
}

/**
 * Global guard of every HTTP route: resolves the key to a Principal and checks the route's access
 * level. Missing, unknown and under-privileged keys all get 401, as the spec says.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: ApiKeyVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true; // bus handlers are internal; GraphQL authenticates in its own hook
    const targets = [context.getHandler(), context.getClass()];
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
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
    const principal = await this.verifier.verify(key);
    if (!principal) throw RunplaneError.unauthorized('invalid API key');
    if (!isAllowed(principal, access, request.params?.endpointId)) {
      throw RunplaneError.unauthorized(
        `this API key (scope ${principal.scope}) may not use this route`,
      );
    }
    request.principal = principal;
    return true;
  }
}
