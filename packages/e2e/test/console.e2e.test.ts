import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CHROMIUM_ARGS, requireChromium } from '@runplane/test-support';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import playwright, { type Browser, type BrowserContext, type Page } from 'playwright-core';
import {
  ADMIN_KEY,
  eventually,
  http,
  killAll,
  recordTiming,
  removeTempDir,
  startRunplane,
  tempDir,
  type RunplaneProcess,
} from './support/runplane-process.js';

const PROBE_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'support/probe-worker.mjs',
);

// Decided when the file loads: under RUNPLANE_REQUIRE_INTEGRATION=1 a missing Chromium fails here.
const chromiumPath = requireChromium('console (browser)');
const suite = chromiumPath ? describe : describe.skip;

/**
 * The console in a real headless Chromium against one fresh standalone server (the real CLI), as
 * a user drives it: sign in with a key, create a template and an endpoint, run a job on a real
 * local worker (support/probe-worker.mjs), follow the worker's logs, cancel and retry from the
 * requests list; a readonly key gets no write buttons, a wrong key is refused, signing out forgets
 * the key.
 */
suite('console (browser)', () => {
  const workDir = tempDir('console');
  const suiteStarted = Date.now();
  let server: RunplaneProcess;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let endpointId: string;
  const holdFile = path.join(workDir, 'release-held-jobs');

  const api = async (method: string, route: string, body?: unknown, key = ADMIN_KEY) => {
    const res = await http(method, `${url}${route}`, { key: `Bearer ${key}`, body });
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${res.text}`);
    return res.body;
  };
  const jobStatus = async (jobId: string) =>
    (await api('GET', `/v2/${endpointId}/status/${jobId}`)).status as string;
  const signIn = async (p: Page, key: string) => {
    await p.goto(`${url}/`);
    await p.getByLabel('API key').fill(key);
    await p.getByRole('button', { name: 'Sign in' }).click();
  };

  beforeAll(async () => {
    server = startRunplane(
      'console',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(90_000)).url;
    browser = await playwright.chromium.launch({
      executablePath: chromiumPath!,
      args: CHROMIUM_ARGS,
    });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(60_000);
  }, 150_000);

  afterAll(async () => {
    fs.writeFileSync(holdFile, '');
    await browser?.close();
    await killAll();
    recordTiming(`console (browser) suite: ${Date.now() - suiteStarted} ms`);
    removeTempDir(workDir);
  });

  it('serves the page at / with its CSP and caching headers; API routes stay JSON', async () => {
    const res = await page.goto(`${url}/`);
    expect(res!.status()).toBe(200);
    const headers = res!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['cache-control']).toBe('no-cache');
    const script = await page.locator('script[type="module"]').getAttribute('src');
    const asset = await fetch(`${url}${script}`);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const deepLink = await fetch(`${url}/endpoints/abc/requests`);
    expect([deepLink.status, deepLink.headers.get('content-type')]).toEqual([
      200,
      'text/html; charset=utf-8',
    ]);
    for (const route of ['/v1/nope', '/nope', '/assets/nope.js']) {
      const unknown = await http('GET', `${url}${route}`);
      expect([route, unknown.status, unknown.body?.code]).toEqual([route, 404, 'NOT_FOUND']);
    }
  });

  it('refuses a wrong key and keeps nothing of it', async () => {
    await signIn(page, 'rpk_not-a-key-of-this-server');
    await page.getByRole('alert').filter({ hasText: 'This API key was refused.' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('signs in from the keyboard with a key kept only in the tab (sessionStorage), never in the URL or a cookie', async () => {
    await page.goto(`${url}/`);
    // The page is rendered by its script after `load`: Tab before that would focus the body.
    await page.getByLabel('API key').waitFor();
    await page.keyboard.press('Tab'); // the key field is the first thing to focus
    await page.keyboard.type(ADMIN_KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([ADMIN_KEY]);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(await context.cookies()).toEqual([]);
    expect(page.url()).not.toContain(ADMIN_KEY);
  });

  it('creates a template with env and an endpoint on it', async () => {
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Name').fill('console-probe');
    await page.getByLabel('Image').fill('runplane-e2e/probe:1');
    await page.getByLabel('Start command').fill(`${process.execPath} ${PROBE_WORKER}`);
    await page.getByLabel(/^Environment/).fill('GREETING=hi from the template');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('cell', { name: 'console-probe', exact: true }).waitFor();

    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByRole('link', { name: 'New endpoint' }).click();
    await page.getByLabel('Name').fill('console-echo');
    const [template] = (await api('GET', '/v1/templates')) as { id: string; name: string }[];
    await page.getByLabel('Template').selectOption({ label: `console-probe (${template.id})` });
    await page.getByLabel('Workers max').fill('1');
    await page.getByLabel('Idle timeout (s)').fill('600');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint console-echo' }).waitFor();
    endpointId = page.url().split('/').pop()!;
    const endpoint = await api('GET', `/v1/endpoints/${endpointId}`);
    expect(endpoint).toMatchObject({ name: 'console-echo', workersMin: 0, workersMax: 1 });
  });

  it('sends a test job from the requests page and sees it complete with its output', async () => {
    await page.getByRole('link', { name: 'Requests' }).click();
    await page
      .getByLabel('Input (JSON)')
      .fill('{"log": ["hello from the console"], "env": ["GREETING"]}');
    await page.getByRole('button', { name: 'Send job' }).click();
    const result = page.locator('.result');
    await result.getByText('COMPLETED').waitFor({ timeout: 90_000 });
    expect(await result.getByLabel('Output').textContent()).toContain(
      '"GREETING": "hi from the template"',
    );
  });

  it("follows a worker's logs as the worker writes them", async () => {
    await page.getByRole('link', { name: 'Endpoint', exact: true }).click();
    await page
      .getByRole('button', { name: /^Follow logs of worker/ })
      .first()
      .click();
    const logs = page.getByLabel(/^Logs of worker/);
    await logs.getByText('hello from the console').waitFor();
    // A line written after the view opened arrives through the followed stream.
    await api('POST', `/v2/${endpointId}/run`, { input: { log: ['a line written later'] } });
    await logs.getByText('a line written later').waitFor();
  });

  it('cancels and retries jobs from the requests list, one at a time and as a selection', async () => {
    const submit = async (input: unknown) =>
      (await api('POST', `/v2/${endpointId}/run`, { input })).id as string;
    // The probe worker throws on a non-list `log`: the job ends FAILED.
    const failed = [await submit({ log: 5 }), await submit({ log: 6 })];
    for (const id of failed) await eventually(async () => (await jobStatus(id)) === 'FAILED', id);
    const held = [
      await submit({ wait_for_file: holdFile }),
      await submit({ wait_for_file: holdFile }),
    ];

    await page.getByRole('link', { name: 'Requests' }).click();
    await page.getByRole('button', { name: `Cancel job ${held[0]}` }).click();
    await eventually(async () => (await jobStatus(held[0])) === 'CANCELLED', 'single cancel');

    await page.getByLabel(`Select job ${held[1]}`).check();
    await page.getByRole('button', { name: 'Cancel selected' }).click();
    await eventually(async () => (await jobStatus(held[1])) === 'CANCELLED', 'bulk cancel');

    for (const id of failed) await page.getByLabel(`Select job ${id}`).check();
    await page.getByRole('button', { name: 'Retry selected' }).click();
    for (const id of failed)
      await eventually(
        async () =>
          (
            (await api('GET', `/v1/endpoints/${endpointId}/jobs/${id}/events`)) as {
              type: string;
            }[]
          )
            .map((e) => e.type)
            .includes('RETRIED'),
        `retry of ${id}`,
      );

    await page.getByLabel('Status').selectOption('CANCELLED');
    await page.getByRole('link', { name: held[0] }).waitFor();
    await page.getByRole('link', { name: held[1] }).waitFor();
    expect(await page.getByRole('link', { name: failed[0] }).count()).toBe(0);

    // A job's page shows what was submitted with it (its input, which /status never returns).
    await page.getByRole('link', { name: held[0] }).click();
    await page.getByRole('heading', { name: `Job ${held[0]}` }).waitFor();
    expect(await page.getByLabel('Input', { exact: true }).textContent()).toContain(
      'wait_for_file',
    );
  });

  it('shows a rolling release in progress after a template edit, until the busy worker is replaced', async () => {
    const release = path.join(workDir, 'release-rolling');
    const held = (await api('POST', `/v2/${endpointId}/run`, { input: { wait_for_file: release } }))
      .id as string;
    await eventually(async () => (await jobStatus(held)) === 'IN_PROGRESS', 'held job taken');

    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('button', { name: 'Edit template console-probe' }).click();
    await page.getByLabel(/^Environment/).fill('GREETING=hi from version 2');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('cell', { name: 'console-probe', exact: true }).waitFor();

    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByRole('link', { name: 'console-echo' }).click();
    await page.getByText('Rolling release to version 2 in progress').waitFor();
    await page.getByRole('cell', { name: '1 (older)' }).waitFor();
    fs.writeFileSync(release, '');
    await page.getByText('Rolling release to version 2 in progress').waitFor({ state: 'hidden' });
  });

  it('manages secrets and API keys, stops, starts and follows a Pod, redelivers a webhook', async () => {
    const accept = () => page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('link', { name: 'Secrets' }).click();
    await page.getByLabel('Name').fill('console_token');
    await page.getByLabel('Value').fill('console-secret-value-1234');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('cell', { name: '{{ RUNPOD_SECRET_console_token }}' }).waitFor();
    expect(await page.content()).not.toContain('console-secret-value-1234');
    accept();
    await page.getByRole('button', { name: 'Delete secret console_token' }).click();
    await page.getByText('No secrets.').waitFor();

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('console ci');
    await page.getByLabel('Scope').selectOption('readwrite');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = await page.getByLabel('The new key').inputValue();
    const created = await api('GET', '/v1/apikeys/current', undefined, shown);
    expect(created).toMatchObject({ name: 'console ci', scope: 'readwrite' });
    await page.getByRole('button', { name: 'Done' }).click();
    accept();
    await page.getByRole('button', { name: 'Revoke key console ci' }).click();
    await page
      .getByRole('cell', { name: 'console ci', exact: true })
      .waitFor({ state: 'detached' });

    const pod = await api('POST', '/v1/pods', {
      name: 'console-pod',
      imageName: 'runplane-e2e/pod:1',
      computeType: 'CPU',
      vcpuCount: 2,
      dockerStartCmd: [
        process.execPath,
        '-e',
        "console.log('pod says hi'); setInterval(() => {}, 1000)",
      ],
    });
    await page.getByRole('link', { name: 'Pods' }).click();
    await page.getByRole('button', { name: 'Logs of Pod console-pod' }).click();
    await page.getByLabel(`Logs of Pod ${pod.id}`).getByText('pod says hi').waitFor();
    await page.getByRole('button', { name: 'Stop Pod console-pod' }).click();
    await page.getByRole('button', { name: 'Start Pod console-pod' }).click();
    await eventually(
      async () => (await api('GET', `/v1/pods/${pod.id}`)).desiredStatus === 'RUNNING',
      'Pod running again',
    );
    await api('DELETE', `/v1/pods/${pod.id}`);

    let received = 0;
    const receiver = createServer((_req, res) => {
      received++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = receiver.address() as AddressInfo;
      const job = await api('POST', `/v2/${endpointId}/run`, {
        input: { env: ['GREETING'] },
        webhook: `http://127.0.0.1:${port}/hook`,
      });
      await eventually(async () => received === 1, 'first webhook');
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('Job ID').fill(job.id);
      await page.getByRole('cell', { name: 'delivered' }).waitFor();
      await page.getByRole('button', { name: /^Redeliver webhook/ }).click();
      await eventually(async () => received === 2, 'redelivered webhook');
    } finally {
      receiver.close();
    }
  });

  it('shows a readonly key what its user has, without a single write button', async () => {
    const admin = await api('GET', '/v1/apikeys/current');
    const readonly = await api('POST', '/v1/apikeys', {
      name: 'console readonly',
      scope: 'readonly',
      userId: admin.userId,
    });
    const other = await api('POST', '/v1/users', { name: 'console-other' });
    const otherKey = await api('POST', '/v1/apikeys', {
      name: 'other readonly',
      scope: 'readonly',
      userId: other.id,
    });
    const viewer = await browser.newContext();
    const p = await viewer.newPage();
    p.setDefaultTimeout(60_000);
    try {
      await signIn(p, readonly.key);
      await p.getByRole('link', { name: 'console-echo' }).waitFor();
      expect(await p.getByRole('link', { name: 'New endpoint' }).count()).toBe(0);
      await p.getByRole('link', { name: 'console-echo' }).click();
      await p.getByRole('heading', { name: 'Endpoint console-echo' }).waitFor();
      expect(await p.getByRole('link', { name: 'Edit' }).count()).toBe(0);
      expect(await p.getByRole('button', { name: 'Delete' }).count()).toBe(0);
      await p.getByRole('link', { name: 'Requests' }).click();
      await p.getByRole('heading', { name: 'Recent jobs' }).waitFor();
      await p.locator('tbody tr').first().waitFor();
      expect(await p.getByRole('button', { name: /Send job|Cancel|Retry/ }).count()).toBe(0);
      expect(await p.getByRole('checkbox').count()).toBe(0);
      await p.getByRole('link', { name: 'Templates' }).click();
      await p.getByRole('cell', { name: 'console-probe', exact: true }).waitFor();
      expect(await p.getByRole('button', { name: /New template|Edit|Delete/ }).count()).toBe(0);

      await p.getByRole('button', { name: 'Sign out' }).click();
      await signIn(p, otherKey.key);
      await p.getByText('No endpoints yet.').waitFor();
    } finally {
      await viewer.close();
    }
  });

  it('edits an endpoint and deletes it (after confirming)', async () => {
    await page.goto(`${url}/endpoints/${endpointId}/edit`);
    await page.getByRole('heading', { name: 'Edit endpoint console-echo' }).waitFor();
    await page.getByLabel('Workers max').fill('2');
    await page.getByLabel('Idle timeout (s)').fill('30');
    await page.getByLabel(/^Environment/).fill('GREETING=hi from the endpoint');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Endpoint console-echo' }).waitFor();
    expect(await api('GET', `/v1/endpoints/${endpointId}`)).toMatchObject({
      workersMax: 2,
      idleTimeout: 30,
      env: { GREETING: 'hi from the endpoint' },
    });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    await page.getByText('No endpoints yet.').waitFor();
    const gone = await http('GET', `${url}/v1/endpoints/${endpointId}`, {
      key: `Bearer ${ADMIN_KEY}`,
    });
    expect(gone.status).toBe(404);
  });

  it('signs out: the key is forgotten and a reload asks for one again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('API key').waitFor();
  });
});
