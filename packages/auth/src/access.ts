import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { ApiKeyScope, Principal } from '@runplane/contracts';

/**
 * What a route needs from the caller's key:
 * - `read`: any user key (admin, readwrite, readonly)
 * - `write`: admin or readwrite (the default for every non-GET route)
 * - `admin`: admin only
 * - `worker`: the endpoint's worker key, or an admin/readwrite key (routes with an `endpointId` param)
 */
export type Access = 'public' | 'read' | 'write' | 'admin' | 'worker';

export const ACCESS_KEY = 'runplane:access';
export const QUERY_KEY_ALLOWED = 'runplane:query-key';

export const Public = () => SetMetadata(ACCESS_KEY, 'public' satisfies Access);
export const RequireAccess = (access: Access) => SetMetadata(ACCESS_KEY, access);
/** Accept the key in `?api_key=` (GraphQL clients send it that way). */
export const AllowQueryKey = () => SetMetadata(QUERY_KEY_ALLOWED, true);

const ALLOWED: Record<Exclude<Access, 'public'>, readonly ApiKeyScope[]> = {
  read: ['admin', 'readwrite', 'readonly'],
  write: ['admin', 'readwrite'],
  admin: ['admin'],
  worker: ['admin', 'readwrite', 'worker'],
};

/** Whether `principal` may use a route needing `access` (for worker routes, on `endpointId`). */
export function isAllowed(
  principal: Principal,
  access: Exclude<Access, 'public'>,
  endpointId?: string,
): boolean {
  if (!ALLOWED[access].includes(principal.scope)) return false;
  if (principal.scope === 'worker')
    return access === 'worker' && !!endpointId && principal.endpointId === endpointId;
  return true;
}

export interface AuthenticatedRequest {
  principal?: Principal;
}

/** The caller of the current request: `handler(@CurrentPrincipal() who: Principal)`. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal => {
    const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (!principal) throw new Error('CurrentPrincipal used on a public route');
    return principal;
  },
);
