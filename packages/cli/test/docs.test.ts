import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApiReference, REGENERATE_HINT } from '../src/commands/docs.js';
import { ALL_SERVICES } from '../src/services.js';

// The committed API reference must be what the code generates. The build rewrites both files, so
// "committed" also means: no uncommitted change to them (a fresh clone builds, then tests).

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const FILES = ['openapi.json', 'schema.graphql'];

/** Where two texts part, for a message that does not print 8000 lines. */
function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  const line = x.findIndex((l, i) => l !== y[i]);
  const at = line < 0 ? Math.min(x.length, y.length) : line;
  return `line ${at + 1}: committed ${JSON.stringify(x[at] ?? '<end>')}, generated ${JSON.stringify(y[at] ?? '<end>')}`;
}

describe('the committed API reference (docs/openapi.json, docs/schema.graphql)', () => {
  let generated: Record<string, string>;
  beforeAll(async () => {
    generated = await generateApiReference(Object.values(ALL_SERVICES));
  });

  it.each(FILES)('docs/%s is what the code generates', (name) => {
    const committed = readFileSync(path.join(ROOT, 'docs', name), 'utf8');
    if (committed !== generated[name]) {
      throw new Error(
        `docs/${name} is out of date with the code (${firstDifference(committed, generated[name])}): ${REGENERATE_HINT}`,
      );
    }
  });

  it('has no uncommitted changes', () => {
    let status: string;
    try {
      status = execFileSync(
        'git',
        ['status', '--porcelain', '--', ...FILES.map((f) => `docs/${f}`)],
        { cwd: ROOT, encoding: 'utf8' },
      );
    } catch {
      console.warn('not a git checkout: only the comparison with the working tree was made');
      return;
    }
    if (status.trim())
      throw new Error(
        `the build changed the API reference but the change is not committed:\n${status}${REGENERATE_HINT}`,
      );
  });

  it('documents one route per operation id', () => {
    const document = JSON.parse(generated['openapi.json']) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes request bodies and query parameters from the class-validator DTOs', () => {
    const document = JSON.parse(generated['openapi.json']);
    const schemas = document.components.schemas;
    // Required-ness as the validator decides it (@ValidateIf overriding an inherited @IsOptional).
    expect(schemas.TemplateCreateDto.required).toEqual(['imageName', 'name']);
    expect(schemas.EndpointCreateDto.required).toEqual(['templateId']);
    expect(schemas.JobRequestDto.required).toEqual(['input']);
    expect(schemas.JobRequestDto.properties.policy).toEqual({
      $ref: '#/components/schemas/JobPolicyDto',
    });
    expect(schemas.JobPolicyDto.properties.ttl).toEqual({
      type: 'integer',
      minimum: 10000,
      maximum: 604800000,
    });
    expect(schemas.TemplateUpdateDto.properties.env).toEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    const runsync = document.paths['/v2/{endpointId}/runsync'].post;
    expect(runsync.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/JobRequestDto',
    });
    expect(runsync.parameters).toContainEqual(
      expect.objectContaining({
        name: 'wait',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1000, maximum: 300000 },
      }),
    );
    expect(runsync.responses['500']).toEqual({ $ref: '#/components/responses/InternalError' });
    // Response schemas come from the contracts' interfaces.
    expect(schemas.JobRecord.required).toEqual(['id', 'status']);
    expect(runsync.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/JobRecord',
    });
    expect(schemas.JobStatus.enum).toEqual([
      'IN_QUEUE',
      'IN_PROGRESS',
      'COMPLETED',
      'FAILED',
      'CANCELLED',
      'TIMED_OUT',
    ]);
  });

  it('gives each route the access level its API key guard enforces', () => {
    const { paths } = JSON.parse(generated['openapi.json']);
    expect(paths['/v1/users'].post['x-runplane-access']).toBe('admin');
    expect(paths['/v2/{endpointId}/job-take/{workerId}'].get['x-runplane-access']).toBe('worker');
    expect(paths['/v2/{endpointId}/status/{jobId}'].post['x-runplane-access']).toBe('read');
    expect(paths['/v1/pods'].get['x-runplane-access']).toBe('read');
    expect(paths['/v1/pods'].post['x-runplane-access']).toBe('write');
    expect(paths['/healthz'].get.security).toEqual([]);
    expect(paths['/v1/pods'].post.responses['401']).toEqual({
      $ref: '#/components/responses/Unauthorized',
    });
    expect(paths['/graphql'].post.security).toContainEqual({ queryKey: [] });
  });
});
