import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  ADMIN_KEY,
  REPO_ROOT,
  killAll,
  recordTiming,
  removeTempDir,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** A worker written with the installed worker SDK: answers {hello: input.name}. */
const WORKER = `import { start } from '@runplane/worker-sdk';
start({ handler: async (job) => ({ hello: job.input.name }) });
`;

/** The typed client of the installed contracts: a template, an endpoint, one job. */
const CLIENT = `import { RunplaneClient, RunplaneError } from '@runplane/contracts';

const client = new RunplaneClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });
const template = await client.templates.create({
  name: \`packed-\${Date.now()}\`,
  imageName: 'local/worker:1',
  isServerless: true,
  dockerStartCmd: [process.execPath, new URL('./worker.mjs', import.meta.url).pathname],
});
const endpoint = await client.endpoints.create({ name: 'packed', templateId: template.id, workersMax: 1 });
const job = await client.queue(endpoint.id).runsync({ input: { name: 'from a tarball' } }, { waitMs: 90000 });
const missing = await client.queue(endpoint.id).status('nope').catch((e) => e);
console.log(JSON.stringify({ job, missing: missing instanceof RunplaneError ? missing.status : String(missing) }));
`;

/**
 * The packages users install, outside this repository: `scripts/pack.mjs` packs
 * @runplane/contracts, @runplane/worker-sdk and runplane (the CLI with what it runs bundled); the
 * three tarballs go into an empty folder with `npm install` (their dependencies from the npm cache
 * or registry), then the installed CLI serves, a worker built on the installed SDK runs jobs, and
 * a script using the installed typed client drives it (type-checked against its declarations).
 */
describe('published packages: npm pack, install into an empty folder, use', () => {
  const workDir = tempDir('packages');
  const app = path.join(workDir, 'app');
  let tarballs: string[];

  beforeAll(async () => {
    const started = Date.now();
    const packed = await run(process.execPath, [
      path.join(REPO_ROOT, 'scripts/pack.mjs'),
      '--out',
      path.join(workDir, 'packed'),
    ]);
    tarballs = packed.stdout.trim().split('\n');
    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module' }),
    );
    const packedAt = Date.now();
    await run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], {
      cwd: app,
      maxBuffer: 16 * 1024 * 1024,
    });
    recordTiming(
      `packages: pack ${((packedAt - started) / 1000).toFixed(1)} s, npm install of the tarballs ${((Date.now() - packedAt) / 1000).toFixed(1)} s`,
    );
  }, 300_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('packs three tarballs, each with its README and no source or tests', async () => {
    expect(tarballs.map((t) => path.basename(t))).toEqual([
      'runplane-contracts-0.1.0.tgz',
      'runplane-worker-sdk-0.1.0.tgz',
      'runplane-0.1.0.tgz',
    ]);
    for (const tarball of tarballs) {
      const { stdout } = await run('tar', ['tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
      const files = stdout.trim().split('\n');
      expect(files).toContain('package/README.md');
      expect(files.filter((f) => /\/(src|test)\/|\.test\.|\.tsbuildinfo$/.test(f))).toEqual([]);
    }
  });

  it('npx runplane --help runs from the installed package', async () => {
    const { stdout } = await run(NPM, ['exec', '--', 'runplane', '--help'], { cwd: app });
    expect(stdout).toContain('runplane start');
  });

  it('the installed server runs a worker built on the installed SDK; the installed typed client (type-checked) drives it', async () => {
    fs.writeFileSync(path.join(app, 'worker.mjs'), WORKER);
    fs.writeFileSync(path.join(app, 'client.mjs'), CLIENT);
    // The typed client's declarations, as a TypeScript user of the package sees them.
    fs.writeFileSync(
      path.join(app, 'check.ts'),
      `import { RunplaneClient, type JobRecord } from '@runplane/contracts';\n` +
        `const job: Promise<JobRecord> = new RunplaneClient({ baseUrl: '', apiKey: '' }).queue('e').runsync({ input: {} });\n` +
        `export default job;\n`,
    );
    await run(
      process.execPath,
      [
        path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--skipLibCheck',
        'check.ts',
      ],
      { cwd: app },
    );
    const server = startRunplane(
      'installed',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
      path.join(app, 'node_modules/runplane/bin/runplane.js'),
    );
    const { url } = await server.waitForReady(90_000);
    const { stdout } = await run(process.execPath, ['client.mjs', url, ADMIN_KEY], { cwd: app });
    const result = JSON.parse(stdout);
    expect(result.job).toMatchObject({ status: 'COMPLETED', output: { hello: 'from a tarball' } });
    expect(result.missing).toBe(404);
  }, 180_000);
});
