import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import runpodSdk from 'runpod-sdk';
import {
  ADMIN_KEY,
  CLI,
  REPO_ROOT,
  http,
  killAll,
  removeTempDir,
  sleep,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

/**
 * Official clients users already have, pointed at a standalone Runplane: RunPod's JS client and
 * OpenAI's. The RunPod JS client (npm `runpod-sdk`, pinned 1.1.2) against a standalone server, with
 * `baseUrl <server>/v2` as its users configure it, and a real managed worker: the example worker
 * (`examples/worker-echo`, written with @runplane/worker-sdk, which speaks the protocol exactly as
 * runpod-python does: raw key, form-labelled JSON bodies, `&`-appended parameters) started by the
 * local compute provider. Nothing is stubbed: client → queue-api → scheduler → worker and back.
 */
describe('official clients (runpod-sdk, openai) against standalone Runplane', () => {
  const workDir = tempDir('clients');
  const worker = path.join(REPO_ROOT, 'examples/worker-echo/worker.mjs');
  const openAiWorker = path.join(REPO_ROOT, 'examples/worker-openai/worker.mjs');
  let openai: OpenAI;
  let url: string;
  let busy: Endpoint; // one warm worker
  let busyId: string;
  let idle: Endpoint; // no workers: jobs stay queued

  type Endpoint = ReturnType<ReturnType<typeof runpodSdk>['endpoint']> & {};

  async function createEndpoint(name: string, workers: number, script = worker): Promise<string> {
    const template = await http('POST', `${url}/v1/templates`, {
      key: ADMIN_KEY,
      body: {
        name: `sdk-${name}-${Date.now()}`,
        imageName: 'runplane/worker-echo:1',
        isServerless: true,
        dockerStartCmd: ['node', script],
      },
    });
    expect(template.status).toBe(200);
    const endpoint = await http('POST', `${url}/v1/endpoints`, {
      key: ADMIN_KEY,
      body: {
        name: `sdk-${name}`,
        templateId: template.body.id,
        workersMin: workers,
        workersMax: workers,
      },
    });
    expect(endpoint.status).toBe(200);
    return endpoint.body.id;
  }

  /** runpod-sdk logs its polling with console.log; keep the test output readable. */
  async function quiet<T>(fn: () => Promise<T>): Promise<T> {
    const log = console.log;
    console.log = () => {};
    try {
      return await fn();
    } finally {
      console.log = log;
    }
  }

  beforeAll(async () => {
    const server = startRunplane(
      'clients',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
    const sdk = runpodSdk(ADMIN_KEY, { baseUrl: `${url}/v2` });
    busyId = await createEndpoint('busy', 1);
    busy = sdk.endpoint(busyId)!;
    idle = sdk.endpoint(await createEndpoint('idle', 0))!;
    // OpenAI's client with base_url <server>/v2/<endpoint>/openai/v1, as RunPod documents it.
    openai = new OpenAI({
      apiKey: ADMIN_KEY,
      baseURL: `${url}/v2/${await createEndpoint('openai', 1, openAiWorker)}/openai/v1`,
      maxRetries: 0,
      timeout: 60_000,
    });
    // The first job waits for the worker process to start and call in.
    const warm = await quiet(() => busy.runSync({ input: { echo: 'warm' } }, 60_000));
    expect(warm.status).toBe('COMPLETED');
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('run() queues a job and status() reports its output once the worker completed it', async () => {
    const job = await busy.run({ input: { echo: { hello: 'sdk' } } });
    expect(job).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = await busy.status(job.id);
      if (status.completed) break;
      await sleep(100);
    }
    expect(status).toMatchObject({
      id: job.id,
      status: 'COMPLETED',
      completed: true,
      succeeded: true,
      output: { hello: 'sdk' },
    });
    expect(Number.isInteger(status.delayTime) && Number.isInteger(status.executionTime)).toBe(true);
  });

  it('runSync() returns the output; a failing handler reports FAILED with its error', async () => {
    const ok: any = await quiet(() => busy.runSync({ input: { echo: [1, 2, 3] } }, 30_000));
    expect(ok).toMatchObject({ status: 'COMPLETED', succeeded: true, output: [1, 2, 3] });
    const failed: any = await quiet(() => busy.runSync({ input: { fail: 'bad input' } }, 30_000));
    expect(failed).toMatchObject({ status: 'FAILED', succeeded: false, error: 'bad input' });
  });

  it('statusSync() blocks until a running job is final', async () => {
    const job = await busy.run({ input: { sleep_ms: 1000, echo: 'later' } });
    const status: any = await busy.statusSync(job.id, 20_000);
    expect(status).toMatchObject({ status: 'COMPLETED', output: 'later' });
  });

  it('stream() yields each chunk once, in order, and ends when the job is final', async () => {
    const job = await busy.run({ input: { stream: 4, interval_ms: 100 } });
    const chunks: unknown[] = [];
    for await (const chunk of busy.stream(job.id)) chunks.push(chunk);
    expect(chunks).toEqual([0, 1, 2, 3].map((i) => ({ output: { i } })));
  });

  it('cancel(), health() and purgeQueue() on an endpoint without workers', async () => {
    const first = await idle.run({ input: { echo: 1 } });
    const cancelled = await idle.cancel(first.id);
    expect(cancelled).toMatchObject({ id: first.id, status: 'CANCELLED' });
    await idle.run({ input: { echo: 2 } });
    await idle.run({ input: { echo: 3 } });
    const health = await idle.health();
    expect(health.jobs).toMatchObject({ inQueue: 2, inProgress: 0 });
    expect(health.workers).toMatchObject({ idle: 0, running: 0 });
    expect(await idle.purgeQueue()).toEqual({ removed: 2, status: 'completed' });
    expect((await idle.health()).jobs.inQueue).toBe(0);
  });

  it('health() of the busy endpoint counts its worker and the jobs it completed', async () => {
    const health = await busy.health();
    expect(health.workers.idle + health.workers.running).toBe(1);
    expect(health.jobs.completed).toBeGreaterThanOrEqual(5);
    expect(health.jobs.failed).toBe(1);
  });

  describe('openai (official OpenAI client) on /openai/v1', () => {
    it('lists the models the worker serves', async () => {
      const models = await openai.models.list();
      expect(models.data.map((m) => m.id)).toEqual(['runplane-echo']);
    });

    it('completes a chat request', async () => {
      const completion = await openai.chat.completions.create({
        model: 'runplane-echo',
        messages: [{ role: 'user', content: 'hello there' }],
      });
      expect(completion.object).toBe('chat.completion');
      expect(completion.choices[0].message).toMatchObject({
        role: 'assistant',
        content: 'You said: hello there',
      });
      expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    });

    it('streams a chat request chunk by chunk as it is generated', async () => {
      const stream = await openai.chat.completions.create({
        model: 'runplane-echo',
        stream: true,
        messages: [{ role: 'user', content: 'one two three four' }],
      });
      const deltas: string[] = [];
      const arrivals: number[] = [];
      for await (const chunk of stream) {
        deltas.push(chunk.choices[0]?.delta?.content ?? '');
        arrivals.push(Date.now());
      }
      expect(deltas.join('')).toBe('You said: one two three four');
      expect(deltas.filter(Boolean).length).toBeGreaterThanOrEqual(6); // word by word, not one blob
      // Relayed as they came (the worker waits 20 ms per word), not buffered into one burst at the end.
      expect(arrivals[arrivals.length - 1] - arrivals[0]).toBeGreaterThan(60);
    });

    it("answers errors in OpenAI's shape: a failed job (once, not retried by the SDK), a wrong key", async () => {
      const failed = await openai.embeddings
        .create({ model: 'runplane-echo', input: 'x' })
        .catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
      expect(failed).toMatchObject({
        status: 500,
        type: 'worker_error',
        code: 'JOB_FAILED',
        message: expect.stringMatching(/not supported by this worker/),
      });
      // With the SDK's default retries, a failed job is still one job: the answer says not to retry.
      const retrying = new OpenAI({ apiKey: ADMIN_KEY, baseURL: openai.baseURL, maxRetries: 2 });
      const endpointId = /\/v2\/([^/]+)\/openai/.exec(openai.baseURL)![1];
      const since = Date.now(); // the server runs on this host: one clock
      const failedJobsSince = async () =>
        (
          (await http('GET', `${url}/v2/${endpointId}/requests?status=FAILED`, { key: ADMIN_KEY }))
            .body.requests as Array<{ createdAt: string }>
        ).filter((r) => Date.parse(r.createdAt) >= since).length;
      const again = await retrying.embeddings
        .create({ model: 'runplane-echo', input: 'x' })
        .catch((e: unknown) => e);
      expect(again).toMatchObject({ status: 500, code: 'JOB_FAILED' });
      expect((again as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe(
        'false',
      );
      expect(await failedJobsSince()).toBe(1);
      const stranger = new OpenAI({ apiKey: 'not-a-key', baseURL: openai.baseURL, maxRetries: 0 });
      const denied = await stranger.models.list().catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(denied).toMatchObject({ status: 401, type: 'authentication_error' });
    });
  });

  describe('runplane CLI (typed client) against the same server', () => {
    const run = promisify(execFile);
    /** Runs the CLI; resolves with its exit code and output whatever the code. */
    async function cli(
      ...args: string[]
    ): Promise<{ code: number; stdout: string; stderr: string }> {
      try {
        const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
          env: { ...process.env, RUNPLANE_URL: url, RUNPLANE_API_KEY: ADMIN_KEY },
          timeout: 60_000,
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    }

    it('creates and lists endpoints', async () => {
      const templateId = (await http('GET', `${url}/v1/endpoints/${busyId}`, { key: ADMIN_KEY }))
        .body.templateId;
      const created = await cli(
        'endpoints',
        'create',
        '--name',
        'from-cli',
        '--template',
        templateId,
        '--workers-max',
        '0',
        '--json',
      );
      expect(created.code).toBe(0);
      const endpoint = JSON.parse(created.stdout);
      expect(endpoint).toMatchObject({
        name: 'from-cli',
        templateId,
        workersMin: 0,
        workersMax: 0,
      });
      const listed = await cli('endpoints', 'list');
      expect(listed.stdout).toMatch(new RegExp(`${endpoint.id}\\s+${templateId}\\s+0\\.\\.0`));
    });

    it('runs a job and waits for its result; --async prints the id; status and cancel', async () => {
      const done = await cli(
        'jobs',
        'run',
        busyId,
        '--input',
        '{"echo": {"via": "cli"}}',
        '--json',
      );
      expect(done.code).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({
        status: 'COMPLETED',
        output: { via: 'cli' },
      });
      const failed = await cli('jobs', 'run', busyId, '--input', '{"fail": "nope"}');
      expect(failed).toMatchObject({
        code: 2,
        stdout: expect.stringMatching(
          /FAILED\n {2}delay \d+ ms, execution \d+ ms\n {2}error: nope/,
        ),
      });

      // On the endpoint without workers the job stays queued until it is cancelled.
      const queued = await cli('jobs', 'run', idle.endpointId, '--input', '{"echo": 1}', '--async');
      const jobId = queued.stdout.trim();
      expect(jobId).toMatch(/^[\w-]{16,}$/);
      expect(
        JSON.parse((await cli('jobs', 'status', idle.endpointId, jobId, '--json')).stdout),
      ).toMatchObject({ id: jobId, status: 'IN_QUEUE' });
      expect((await cli('jobs', 'cancel', idle.endpointId, jobId)).stdout.trim()).toBe(
        `${jobId} CANCELLED`,
      );
    });

    it("streams a job's chunks one JSON line each", async () => {
      const { id } = await busy.run({ input: { stream: 3, interval_ms: 100 } });
      const streamed = await cli('jobs', 'stream', busyId, id);
      expect(streamed.code).toBe(0);
      expect(
        streamed.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
      expect(streamed.stderr).toContain(`job ${id} COMPLETED`);
    });

    it('says clearly what is wrong: bad input, unknown endpoint, unreachable server', async () => {
      expect(await cli('jobs', 'run', busyId, '--input', 'not json')).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/--input must be JSON/),
      });
      expect(await cli('jobs', 'status', busyId, 'no-such-job')).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/404: job no-such-job not found/),
      });
      expect(await cli('endpoints', 'list', '--url', 'http://127.0.0.1:9')).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/cannot reach http:\/\/127.0.0.1:9/),
      });
    });
  });
});
