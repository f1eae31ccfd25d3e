#!/usr/bin/env node
// Screenshots of the console's main pages for the docs (docs/console/*.png):
//   npm run build && npm run screenshots -w @runplane/console
// Starts a standalone server in memory, gives it some data through the API (a template running
// examples/worker-echo, an endpoint, jobs that complete, fail, stream and wait, a secret, a
// webhook that cannot be delivered), then drives headless Chromium through the pages.
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@runplane/test-support';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import playwright from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const OUT = path.join(ROOT, 'docs/console');
const KEY = 'screenshot-admin-key-0123456789';
const WORKER = path.join(ROOT, 'examples/worker-echo/worker.mjs');

const server = spawn(process.execPath, [path.join(ROOT, 'packages/cli/bin/runplane.js'), 'start'], {
  env: {
    ...process.env,
    RUNPLANE_DATA_DIR: 'memory',
    RUNPLANE_API_KEY: KEY,
    PORT: '0',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (chunk) => {
    out += chunk;
    const match = /runplane ready at (http:\/\/[\w.-]+:\d+)/.exec(out);
    if (match) resolve(match[1]);
  });
  server.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
});

const api = async (method, route, body) => {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
};
const until = async (probe) => {
  for (let i = 0; i < 600; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
};

try {
  await api('POST', '/graphql', {
    query: 'mutation { secretCreate(input: {name: "hf_token", value: "hf_example"}) { id } }',
  });
  const template = await api('POST', '/v1/templates', {
    name: 'echo',
    imageName: 'example/echo:1',
    isServerless: true,
    dockerStartCmd: [process.execPath, WORKER],
    env: { MODEL: 'small', HF_TOKEN: '{{ RUNPOD_SECRET_hf_token }}' },
  });
  const endpoint = await api('POST', '/v1/endpoints', {
    name: 'echo',
    templateId: template.id,
    workersMin: 1,
    workersMax: 2,
    idleTimeout: 60,
  });
  await api('POST', '/v1/endpoints', { name: 'paused', templateId: template.id, workersMax: 0 });
  const queue = `/v2/${endpoint.id}`;
  const jobs = [];
  for (let i = 0; i < 12; i++)
    jobs.push(await api('POST', `${queue}/run`, { input: { echo: `job ${i}`, sleep_ms: 50 * i } }));
  jobs.push(await api('POST', `${queue}/run`, { input: { fail: 'the model ran out of memory' } }));
  jobs.push(await api('POST', `${queue}/run`, { input: { stream: 5, interval_ms: 50 } }));
  jobs.push(
    await api('POST', `${queue}/run`, {
      input: { echo: 'with a webhook' },
      webhook: 'http://127.0.0.1:9/unreachable',
    }),
  );
  for (const job of jobs)
    await until(async () =>
      ['COMPLETED', 'FAILED'].includes((await api('GET', `${queue}/status/${job.id}`)).status),
    );
  await api('POST', `${queue}/run`, { input: { sleep_ms: 600_000 } });

  const browser = await playwright.chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(30_000);
  const shot = (name) => page.screenshot({ path: path.join(OUT, `${name}.png`) });

  await page.goto(url);
  await page.getByLabel('API key').fill(KEY);
  await shot('login');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'echo' }).waitFor();
  await shot('endpoints');

  await page.getByRole('link', { name: 'echo' }).click();
  await page.getByText('Jobs ended per 5 minutes').waitFor();
  await page
    .getByRole('button', { name: /^Follow logs of worker/ })
    .first()
    .click();
  await page
    .getByLabel(/^Logs of worker/)
    .getByText('streaming 5 chunks')
    .waitFor();
  await page.setViewportSize({ width: 1280, height: 1150 });
  await page.evaluate('window.scrollTo(0, 0)');
  await shot('endpoint');
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole('link', { name: 'Requests' }).click();
  await page.getByLabel('Input (JSON)').fill('{"stream": 4, "interval_ms": 200}');
  await page.getByRole('button', { name: 'Send job' }).click();
  await page.locator('.result').getByText('COMPLETED').waitFor();
  await shot('requests');

  await page.getByRole('link', { name: jobs[12].id }).click();
  await page.getByRole('heading', { name: 'History' }).waitFor();
  await page.getByRole('cell', { name: 'FAILED' }).waitFor();
  await shot('job');

  await page.getByRole('link', { name: 'Templates' }).click();
  await page.getByRole('button', { name: 'Edit template echo' }).click();
  await shot('templates');

  await browser.close();
  console.log(`screenshots in ${OUT}`);
} finally {
  server.kill('SIGTERM');
}
