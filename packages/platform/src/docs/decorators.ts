import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse } from '@nestjs/swagger';

// Short helpers for the route annotations in the apps' controllers. Schemas are named after the
// TypeScript interfaces and DTO classes of @runplane/contracts; the document builder fails on a
// name it does not know, so a typo cannot reach docs/openapi.json.

/** `{$ref}` to a schema of the document's components (a contracts interface or DTO class). */
export function schemaRef(name: string): { $ref: string } {
  return { $ref: `#/components/schemas/${name}` };
}

/** A JSON array of `name` (REST v1 lists are bare arrays). */
export function listOf(name: string): { type: 'array'; items: { $ref: string } } {
  return { type: 'array', items: schemaRef(name) };
}

/** What each error status means across the APIs; a route may say more. */
export const ERROR_MEANINGS: Readonly<Record<number, string>> = {
  400: 'Invalid request: malformed JSON, or a field or query value that fails validation (`details` names each field).',
  401: 'Missing or unknown API key, or a key whose scope does not allow this route.',
  403: 'Refused for this caller.',
  404: 'Unknown resource, or one that belongs to another user.',
  409: 'Conflicts with the current state of the resource.',
  413: 'Request body larger than the route accepts.',
  429: 'Over a rate or concurrency limit; retry after `Retry-After` seconds.',
  500: 'A fault of the server, never of the request; logged, answered without its details.',
  503: 'A service this call depends on did not answer; retry later.',
};

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};

/** An error response with Runplane's JSON error body; `description` defaults to ERROR_MEANINGS. */
export function ApiError(
  status: number,
  description = ERROR_MEANINGS[status] ?? 'Error.',
): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status,
    description,
    schema: schemaRef('ErrorBody'),
    ...(status === 429 ? { headers: RETRY_AFTER } : {}),
  });
}

/** Several error responses with their usual meaning (401 is added to every authenticated route). */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(...statuses.map((status) => ApiError(status)));
}

export const WILDCARD_EXTENSION = 'x-runplane-wildcard';

/**
 * A catch-all route (`@Post('*')`) documented as the concrete paths it serves, e.g.
 * `ApiWildcardPaths('v1/chat/completions', 'v1/completions')` on `v2/:endpointId/openai/*`.
 */
export function ApiWildcardPaths(...paths: string[]): MethodDecorator {
  return ApiExtension(WILDCARD_EXTENSION, paths) as MethodDecorator;
}
