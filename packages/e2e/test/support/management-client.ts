import { expect } from '@jest/globals';
import { ADMIN_KEY, http, type HttpResult } from './runplane-process.js';

/** Where the management API of a running installation answers (one URL in standalone mode). */
export interface ManagementTarget {
  graphql: string;
  rest: string;
  vault: string;
}

/** A GraphQL string literal (JSON's escapes are GraphQL's). */
export const lit = (s: string) => JSON.stringify(s);
export const SLEEPER = `${process.execPath} -e 'setInterval(() => {}, 1 << 30)'`;

export type ManagementClient = ReturnType<typeof managementClient>;

/** Requests the way RunPod's clients make them, and the checks both clients apply to answers. */
export function managementClient(target: () => ManagementTarget) {
  const t = () => target();
  /** POST /graphql with a Bearer key, as both clients send it. */
  const gql = async (
    query: string,
    variables?: Record<string, unknown>,
    key = ADMIN_KEY,
  ): Promise<HttpResult> =>
    http('POST', `${t().graphql}/graphql`, {
      key: `Bearer ${key}`,
      body: variables === undefined ? { query } : { query, variables },
    });
  /** What both clients do with an answer: HTTP 200, then `errors[0].message` or `data.<field>`. */
  const data = (res: HttpResult, field: string) => {
    expect({ status: res.status, errors: res.body?.errors }).toEqual({
      status: 200,
      errors: undefined,
    });
    return res.body.data[field];
  };
  const gqlError = (res: HttpResult, field: string, code: string): string => {
    expect(res.status).toBe(200);
    expect(res.body.data?.[field]).toBeNull();
    expect(res.body.errors[0]).toMatchObject({ message: expect.any(String), path: [field] });
    expect(res.body.errors[0].extensions.code).toBe(code);
    return res.body.errors[0].message;
  };
  const rest = (method: string, path: string, body?: unknown, key = ADMIN_KEY) =>
    http(method, `${t().rest}/v1${path}`, { key: `Bearer ${key}`, body });
  const suffix = () => Math.random().toString(36).slice(2, 8);
  const newUserKey = async (scope: 'readwrite' | 'readonly') => {
    const user = await http('POST', `${t().vault}/v1/users`, {
      key: ADMIN_KEY,
      body: { name: `mgmt-${suffix()}` },
    });
    const key = await http('POST', `${t().vault}/v1/apikeys`, {
      key: ADMIN_KEY,
      body: { name: scope, userId: user.body.id, scope },
    });
    expect(key.status).toBe(200);
    return key.body.key as string;
  };
  return { gql, data, gqlError, rest, newUserKey, suffix };
}
