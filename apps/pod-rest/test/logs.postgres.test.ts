import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VaultRpc, type WorkloadLogLine } from '@runplane/contracts';
import { scratchDatabase, startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { podRestService } from '../src/index.js';
import { waitFor } from './worker-fixture.js';

// Cluster mode: a workload's lines written to PostgreSQL in batches of one statement (the
// embedded database is covered by logs.http.test.ts).
const database = scratchDatabase('pod-rest', POSTGRES_URL, uniqueName('runplane_pr_logs'));
const SECRET = 'pg-secret-Zx9';
const LINES = 300;
const SCRIPT = `
for (let i = 1; i <= ${LINES}; i++) process.stdout.write('line ' + i + ' ' + 'é'.repeat(i % 3) + '\\n');
process.stderr.write('on stderr\\n');
process.stdout.write('secret=' + process.env.PASSWORD + '\\n');
setInterval(() => {}, 1 << 30);
`;

describe('workload logs on PostgreSQL', () => {
  let server: TestServer | undefined;

  beforeAll(async () => {
    if (!(await requireService('postgres', 'workload logs on PostgreSQL'))) return;
    server = await startTestServer([secretsVaultService, podRestService], {
      DATABASE_URL_POD_REST: database.url,
    });
    await server.bus.request(VaultRpc.createSecret, {
      ownerId: 'usr_admin',
      secret: { name: 'pw', value: SECRET },
    });
  }, 60_000);

  afterAll(async () => {
    if (!server) return;
    await server.stop();
    await database.drop();
  }, 30_000);

  it('keeps every line with its stream, time and text, secrets replaced; since and tail read them back', async () => {
    if (!server) return;
    const before = new Date();
    const created = await server.call('POST', '/v1/pods', {
      name: 'logger',
      imageName: 'acme/app:1',
      dockerStartCmd: [process.execPath, '-e', SCRIPT],
      env: { PASSWORD: '{{ RUNPOD_SECRET_pw }}' },
    });
    expect(created.status).toBe(201);
    const podId = created.body.id as string;
    const read = async (query = '') => {
      const res = await server!.call('GET', `/v1/pods/${podId}/logs${query}`);
      expect(res.status).toBe(200);
      return res.body as WorkloadLogLine[];
    };
    const lines = await waitFor(
      async () => {
        const got = await read();
        return got.length === LINES + 2 ? got : undefined;
      },
      `${LINES + 2} lines`,
    );
    const after = new Date();

    const stdout = lines.filter((l) => l.stream === 'stdout').map((l) => l.text);
    expect(stdout).toEqual([
      ...Array.from({ length: LINES }, (_, i) => `line ${i + 1} ${'é'.repeat((i + 1) % 3)}`),
      'secret=[secret]',
    ]);
    expect(lines.filter((l) => l.stream === 'stderr').map((l) => l.text)).toEqual(['on stderr']);
    // Stored as UTC, as Prisma stores times: read back as the instant they were written.
    for (const l of lines) {
      expect(new Date(l.at).getTime()).toBeGreaterThanOrEqual(before.getTime() - 1);
      expect(new Date(l.at).getTime()).toBeLessThanOrEqual(after.getTime());
    }
    expect(await read('?tail=2')).toEqual(lines.slice(-2));
    const mid = lines[LINES / 2].at;
    expect(await read(`?since=${mid}`)).toEqual(lines.filter((l) => l.at >= mid));
  }, 60_000);
});
