import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PodRpc,
  PodSignals,
  RunplaneError,
  SchedulerRpc,
  VaultRpc,
  type StartWorkerRequest,
} from '@runplane/contracts';
import { createHash } from 'node:crypto';
import { EndpointsRepository } from '../src/store/endpoints.repository.js';
import { sleep, startHarness, until, type Harness } from './support.js';

// The autoscaler end to end with a stand-in pod-rest (PodRpc) that records what it is asked to do;
// the test plays the started worker processes. Scenarios run concurrently, each on its own endpoint.
describe('autoscaler with a stand-in pod-rest', () => {
  let h: Harness;
  let owner: string;
  const started: StartWorkerRequest[] = [];
  const stopped: string[] = [];
  /** Endpoints whose starts pod-rest refuses (bad template) or cannot serve (503). */
  const refusing = new Set<string>();
  const down = new Set<string>();
  const attempts = new Map<string, number[]>();
  const timers: NodeJS.Timeout[] = [];
  const scenarios = new Map<string, Promise<void>>();
  /**
   * The first back-off after a failed start (RUNPLANE_WORKER_START_BACKOFF_MS; 2 s by default):
   * long enough that the crash scenario can see an endpoint backing off through /health calls,
   * slow on a loaded machine while every scenario runs at once.
   */
  const BACKOFF_MS = 5000;

  const startsOf = (ep: string) => started.filter((s) => s.endpointId === ep);
  const health = (ep: string) => h.call(SchedulerRpc.health, { ownerId: owner, endpointId: ep });
  /** The worker process pod-rest would run: calls in at once, then pings every 300 ms until told otherwise. */
  const comeUp = (endpointId: string, workerId: string) => {
    const ping = () => {
      h.call(SchedulerRpc.ping, { endpointId, workerId, jobIds: [] }).catch(() => {});
    };
    ping();
    const t = setInterval(ping, 300);
    timers.push(t);
    return () => clearInterval(t);
  };
  const nthStart = (ep: string, n: number, timeoutMs = 30_000) =>
    until(async () => startsOf(ep)[n - 1], timeoutMs, `start #${n} on ${ep}`);
  const endpoint = async (config: Record<string, unknown>) =>
    (
      await h.call(SchedulerRpc.createEndpoint, {
        ownerId: owner,
        endpoint: { templateId: 'tpl-1', ...config } as never,
      })
    ).id;
  const scenario = (name: string, run: () => Promise<void>) => {
    const p = run();
    p.catch(() => {});
    scenarios.set(name, p);
  };

  beforeAll(async () => {
    // Short enough for the "never calls in" scenario, long enough that a worker the test brings up
    // on a loaded machine (all scenarios run at once, beside other suites) is not replaced first.
    // Pings every 2 s (silence is noticed after 6 s): far from the prompt requeue the crash scenario
    // checks, even when the machine is slow.
    h = await startHarness({
      RUNPLANE_WORKER_START_TIMEOUT_MS: '6000',
      RUNPLANE_WORKER_PING_INTERVAL_MS: '2000',
      RUNPLANE_WORKER_START_BACKOFF_MS: String(BACKOFF_MS),
    });
    // The vault mints worker keys for real users only: use the bootstrap admin's user.
    const keyHash = createHash('sha256').update(h.server.apiKey).digest('hex');
    owner = (await h.call(VaultRpc.verifyApiKey, { keyHash })).principal!.userId;
    const probe = await h
      .call(VaultRpc.mintWorkerKey, { userId: owner, endpointId: 'probe', workerId: 'probe' })
      .catch((e: RunplaneError) => e);
    if (probe instanceof RunplaneError && probe.status === 503) {
      await h.server.bus.serve(VaultRpc.mintWorkerKey, async () => ({
        keyId: 'k1',
        key: `worker-key-${Math.random()}`,
      }));
    }
    await h.server.bus.serve(PodRpc.startWorker, async (req) => {
      attempts.set(req.endpointId, [...(attempts.get(req.endpointId) ?? []), Date.now()]);
      if (down.has(req.endpointId))
        throw RunplaneError.unavailable('no instance of pod-rest is answering');
      if (refusing.has(req.endpointId))
        throw RunplaneError.badRequest('template image cannot be started');
      started.push(req);
      return { podId: req.workerId };
    });
    await h.server.bus.serve(PodRpc.stopWorker, async ({ workerId }) => {
      stopped.push(workerId);
      return { ok: true as const };
    });

    scenario('keeps workersMin workers with the worker protocol environment', async () => {
      const ep = await endpoint({ workersMin: 1, workersMax: 2, gpuTypeIds: ['NVIDIA L4'] });
      const s = await nthStart(ep, 1);
      expect(s).toMatchObject({
        ownerId: owner,
        endpointId: ep,
        templateId: 'tpl-1',
        slsVersion: 1,
        gpuTypeId: 'NVIDIA L4',
      });
      expect(s.templateRevision).toBeUndefined(); // its owner's own template: the current revision
      const wid = s.workerId;
      const base = `${h.server.url}/v2/${ep}`;
      expect(s.env).toEqual({
        RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/${wid}?gpu=NVIDIA+L4`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/${wid}/$ID?gpu=NVIDIA+L4`,
        RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/${wid}/$ID?gpu=NVIDIA+L4`,
        RUNPOD_WEBHOOK_PING: `${base}/ping/${wid}?gpu=NVIDIA+L4`,
        RUNPOD_POD_ID: wid,
        RUNPOD_ENDPOINT_ID: ep,
        RUNPOD_AI_API_KEY: expect.any(String),
        RUNPOD_PING_INTERVAL: '2000',
        RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: 'true',
      });
      expect((await health(ep)).workers.initializing).toBe(1);
      comeUp(ep, wid);
      await until(async () => (await health(ep)).workers.idle === 1, 15_000, 'worker idle');
      await sleep(1000); // many ticks: still exactly one worker
      expect(startsOf(ep).length).toBe(1);
    });

    scenario(
      'scales from zero for a job at once, never for low-priority jobs, and stops idle workers',
      async () => {
        const ep = await endpoint({
          workersMin: 0,
          workersMax: 2,
          scalerValue: 60,
          idleTimeout: 1,
        });
        const low = await endpoint({ workersMin: 0, workersMax: 2, scalerValue: 1 });
        const jobId = `as-${Date.now()}`;
        await h.call(SchedulerRpc.submitJob, {
          ownerId: owner,
          endpointId: ep,
          jobId,
          mode: 'run',
          job: { input: { n: 1 } } as never,
        });
        await h.call(SchedulerRpc.submitJob, {
          ownerId: owner,
          endpointId: low,
          jobId: `${jobId}-low`,
          mode: 'run',
          job: { input: { n: 1 }, policy: { lowPriority: true } } as never,
        });
        // scalerValue is 60 s: only the scale-from-zero rule can start this one
        const s = await nthStart(ep, 1, 15_000);
        comeUp(ep, s.workerId);
        const [job] = (
          await h.call(SchedulerRpc.takeJobs, {
            endpointId: ep,
            workerId: s.workerId,
            batchSize: 1,
            waitMs: 0,
          })
        ).jobs;
        expect(job.id).toBe(jobId);
        await h.call(SchedulerRpc.jobDone, {
          endpointId: ep,
          workerId: s.workerId,
          jobId,
          body: { output: 1 },
          isStream: false,
        });
        // idle for idleTimeout (1 s) above workersMin 0: stopped
        await until(async () => stopped.includes(s.workerId), 30_000, 'idle worker stopped');
        await until(
          async () => (await health(ep)).workers.idle === 0,
          15_000,
          'stopped worker forgotten',
        );
        expect(startsOf(low)).toEqual([]); // 2 s and more with a low-priority job queued longer than scalerValue
      },
    );

    scenario(
      "an endpoint on another user's template starts workers from its pinned revision",
      async () => {
        h.templates.add('tpl-foreign');
        h.templateOwners.set('tpl-foreign', 'someone-else');
        h.templateRevisions.set('tpl-foreign', 3);
        const ep = await endpoint({ templateId: 'tpl-foreign', workersMin: 1, workersMax: 1 });
        expect(await nthStart(ep, 1)).toMatchObject({
          templateId: 'tpl-foreign',
          templateRevision: 3,
        });
      },
    );

    scenario('rolling release: a new version replaces the idle worker', async () => {
      const ep = await endpoint({ workersMin: 1, workersMax: 1 });
      const first = await nthStart(ep, 1);
      comeUp(ep, first.workerId);
      await until(async () => (await health(ep)).workers.idle === 1, 15_000, 'first worker up');
      const updated = await h.call(SchedulerRpc.updateEndpoint, {
        ownerId: owner,
        endpointId: ep,
        changes: { templateId: 'tpl-2' } as never,
      });
      expect(updated.version).toBe(2);
      const second = await nthStart(ep, 2);
      expect(second).toMatchObject({ slsVersion: 2, templateId: 'tpl-2' });
      expect(stopped).toContain(first.workerId);
    });

    scenario(
      'a busy worker is never stopped; stopPod replaces a worker once it is free',
      async () => {
        const ep = await endpoint({ workersMin: 1, workersMax: 1, idleTimeout: 1 });
        const first = await nthStart(ep, 1);
        comeUp(ep, first.workerId);
        const jobId = `busy-${Date.now()}`;
        await h.call(SchedulerRpc.submitJob, {
          ownerId: owner,
          endpointId: ep,
          jobId,
          mode: 'run',
          job: { input: {} } as never,
        });
        await h.call(SchedulerRpc.takeJobs, {
          endpointId: ep,
          workerId: first.workerId,
          batchSize: 1,
          waitMs: 5000,
        });
        // a new version while it works: it finishes first
        await h.call(SchedulerRpc.updateEndpoint, {
          ownerId: owner,
          endpointId: ep,
          changes: { gpuCount: 2 } as never,
        });
        await sleep(1500);
        expect(stopped).not.toContain(first.workerId);
        await h.call(SchedulerRpc.jobDone, {
          endpointId: ep,
          workerId: first.workerId,
          jobId,
          body: { output: 1, stopPod: true },
          isStream: false,
        });
        await until(async () => stopped.includes(first.workerId), 15_000, 'replaced after its job');
        expect((await nthStart(ep, 2)).slsVersion).toBe(2);
      },
    );

    scenario(
      'a stopped worker still polling while it shuts down gets no job and does not come back as an external worker',
      async () => {
        const ep = await endpoint({
          workersMin: 0,
          workersMax: 1,
          scalerValue: 60,
          idleTimeout: 1,
        });
        const first = `stop-1-${Date.now()}`;
        await h.call(SchedulerRpc.submitJob, {
          ownerId: owner,
          endpointId: ep,
          jobId: first,
          mode: 'run',
          job: { input: {} } as never,
        });
        const s = await nthStart(ep, 1, 5000);
        comeUp(ep, s.workerId); // keeps pinging after its stop, like a process finishing its last long poll
        await h.call(SchedulerRpc.takeJobs, {
          endpointId: ep,
          workerId: s.workerId,
          batchSize: 1,
          waitMs: 5000,
        });
        await h.call(SchedulerRpc.jobDone, {
          endpointId: ep,
          workerId: s.workerId,
          jobId: first,
          body: { output: 1 },
          isStream: false,
        });
        await until(async () => stopped.includes(s.workerId), 30_000, 'idle worker stopped');
        const next = `stop-2-${Date.now()}`;
        await h.call(SchedulerRpc.submitJob, {
          ownerId: owner,
          endpointId: ep,
          jobId: next,
          mode: 'run',
          job: { input: {} } as never,
        });
        // Its process calls once more: nothing for it, and it is not counted as a worker.
        expect(
          (
            await h.call(SchedulerRpc.takeJobs, {
              endpointId: ep,
              workerId: s.workerId,
              batchSize: 1,
              waitMs: 0,
            })
          ).jobs,
        ).toEqual([]);
        expect((await health(ep)).workers).toMatchObject({ idle: 0, running: 0 });
        // The job gets a new worker instead.
        const second = await nthStart(ep, 2, 30_000);
        expect(second.workerId).not.toBe(s.workerId);
        comeUp(ep, second.workerId);
        expect(
          (
            await h.call(SchedulerRpc.takeJobs, {
              endpointId: ep,
              workerId: second.workerId,
              batchSize: 1,
              waitMs: 5000,
            })
          ).jobs.map((j) => j.id),
        ).toEqual([next]);
      },
    );

    scenario(
      'a refused start backs off exponentially (crash loop), counted as throttled',
      async () => {
        const ep = await endpoint({ workersMin: 1, workersMax: 1 });
        refusing.add(ep);
        await until(async () => (attempts.get(ep)?.length ?? 0) >= 1, 15_000, 'first attempt');
        await until(async () => (await health(ep)).workers.throttled === 1, 15_000, 'throttled');
        // One back-off, then twice that between attempts (not one per 100 ms tick): at most 2 tries
        // before the third could come.
        const firstTry = attempts.get(ep)![0];
        const window = 2.75 * BACKOFF_MS;
        await sleep(Math.max(0, firstTry + window - Date.now()));
        const tries = attempts.get(ep)!.filter((t) => t - firstTry < window);
        expect(tries.length).toBeLessThanOrEqual(2);
        if (tries.length === 2)
          expect(tries[1] - tries[0]).toBeGreaterThanOrEqual(BACKOFF_MS - 100);
        refusing.delete(ep);
        await nthStart(ep, 1, 15_000);
      },
    );

    scenario('pod-rest not answering is retried on later ticks without back-off', async () => {
      const ep = await endpoint({ workersMin: 1, workersMax: 1 });
      down.add(ep);
      await until(
        async () => (attempts.get(ep)?.length ?? 0) >= 3,
        30_000,
        'repeated attempts while pod-rest is down',
      );
      expect(startsOf(ep)).toEqual([]);
      down.delete(ep);
      await nthStart(ep, 1, 15_000);
    });

    scenario('a worker that never calls in is replaced after the start timeout', async () => {
      const ep = await endpoint({ workersMin: 1, workersMax: 1 });
      const first = await nthStart(ep, 1);
      // never comes up: unhealthy after RUNPLANE_WORKER_START_TIMEOUT_MS (6 s), stopped, replaced after a back-off
      await until(async () => stopped.includes(first.workerId), 30_000, 'silent worker stopped');
      const second = await nthStart(ep, 2, 15_000);
      expect(second.workerId).not.toBe(first.workerId);
      comeUp(ep, second.workerId);
    });

    scenario(
      'a worker process that exits by itself is lost at once; a crash loop backs off and shows as unhealthy until a worker works',
      async () => {
        const ep = await endpoint({ workersMin: 1, workersMax: 1, scalerValue: 60 });
        const first = await nthStart(ep, 1);
        const silence = comeUp(ep, first.workerId);
        const crashJob = `crash-${Date.now()}`;
        await h.call(SchedulerRpc.submitJob, {
          ownerId: owner,
          endpointId: ep,
          jobId: crashJob,
          mode: 'run',
          job: { input: {} } as never,
        });
        expect(
          (
            await h.call(SchedulerRpc.takeJobs, {
              endpointId: ep,
              workerId: first.workerId,
              batchSize: 1,
              waitMs: 5000,
            })
          ).jobs.map((j) => j.id),
        ).toEqual([crashJob]);
        // pod-rest saw its process die: no waiting for 3 missed pings.
        silence();
        let exitAt = Date.now();
        await h.server.bus.signal(PodSignals.workerExited, {
          endpointId: ep,
          workerId: first.workerId,
          exitCode: 1,
        });
        // Died young: a failed start. Shown as unhealthy (and the missing worker as throttled)
        // while backing off. That lasts the back-off only, so /health is sampled from the exit on,
        // beside the requeue check below, until the next start (on a loaded machine one call can
        // take seconds).
        let backingOffSeen = false;
        const watchBackOff = (async () => {
          while (!backingOffSeen && !startsOf(ep)[1]) {
            const w = (await health(ep).catch(() => undefined))?.workers;
            if (w?.unhealthy === 1 && w.throttled === 1) backingOffSeen = true;
            else await sleep(20); // let the scheduler's timers run between samples
          }
        })();
        await until(
          async () => {
            const job = await h.call(SchedulerRpc.getJob, {
              ownerId: owner,
              endpointId: ep,
              jobId: crashJob,
            });
            return job.status === 'IN_QUEUE' && job.retries === 1;
          },
          4000,
          "the crashed worker's job back in the queue",
        ); // missed pings would take 6 s
        const second = await nthStart(ep, 2, 30_000);
        await watchBackOff;
        expect(backingOffSeen).toBe(true); // unhealthy and throttled before the next start
        expect(attempts.get(ep)![1] - exitAt).toBeGreaterThanOrEqual(BACKOFF_MS - 100);
        // It crashes too, before ever calling in: the next back-off is twice as long.
        exitAt = Date.now();
        await h.server.bus.signal(PodSignals.workerExited, {
          endpointId: ep,
          workerId: second.workerId,
          exitCode: 139,
        });
        const third = await nthStart(ep, 3, 30_000);
        expect(attempts.get(ep)![2] - exitAt).toBeGreaterThanOrEqual(2 * BACKOFF_MS - 100);
        expect(stopped).toEqual(expect.arrayContaining([first.workerId, second.workerId]));
        expect((await health(ep)).workers.unhealthy).toBe(2);
        // This one works: it runs the requeued job; the endpoint is healthy again.
        comeUp(ep, third.workerId);
        expect(
          (
            await h.call(SchedulerRpc.takeJobs, {
              endpointId: ep,
              workerId: third.workerId,
              batchSize: 1,
              waitMs: 5000,
            })
          ).jobs.map((j) => j.id),
        ).toEqual([crashJob]);
        await h.call(SchedulerRpc.jobDone, {
          endpointId: ep,
          workerId: third.workerId,
          jobId: crashJob,
          body: { output: 'survived' },
          isStream: false,
        });
        await until(
          async () => {
            const w = (await health(ep)).workers;
            return w.unhealthy === 0 && w.throttled === 0 && w.idle === 1;
          },
          15_000,
          'healthy again',
        );
      },
    );

    scenario('a worker exiting after stopPod is replaced without back-off', async () => {
      const ep = await endpoint({ workersMin: 1, workersMax: 1 });
      const first = await nthStart(ep, 1);
      const silence = comeUp(ep, first.workerId);
      const id = `stoppod-${Date.now()}`;
      await h.call(SchedulerRpc.submitJob, {
        ownerId: owner,
        endpointId: ep,
        jobId: id,
        mode: 'run',
        job: { input: {} } as never,
      });
      await h.call(SchedulerRpc.takeJobs, {
        endpointId: ep,
        workerId: first.workerId,
        batchSize: 1,
        waitMs: 5000,
      });
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: first.workerId,
        jobId: id,
        body: { output: 1, stopPod: true },
        isStream: false,
      });
      silence();
      await h.server.bus.signal(PodSignals.workerExited, {
        endpointId: ep,
        workerId: first.workerId,
        exitCode: 0,
      });
      await nthStart(ep, 2, 30_000); // a replacement, and (below) no failure counted for it
      expect((await health(ep)).workers).toMatchObject({ throttled: 0, unhealthy: 0 });
    });

    scenario(
      'a young worker whose process ended with pod-rest is replaced without back-off',
      async () => {
        const ep = await endpoint({ workersMin: 1, workersMax: 1 });
        const first = await nthStart(ep, 1);
        comeUp(ep, first.workerId)(); // it called in once, then pod-rest restarted under it
        await h.server.bus.signal(PodSignals.workerExited, {
          endpointId: ep,
          workerId: first.workerId,
          exitCode: null,
          reason: 'its process did not survive a restart of pod-rest',
          hostRestarted: true,
        });
        await nthStart(ep, 2, 30_000);
        const row = await h.server.app.get(EndpointsRepository, { strict: false }).find(ep);
        expect(row).toMatchObject({ startFailures: 0, startBackoffUntil: null });
        expect((await health(ep)).workers).toMatchObject({ throttled: 0 });
      },
    );

    scenario('deleting an endpoint stops its workers', async () => {
      const ep = await endpoint({ workersMin: 2, workersMax: 2 });
      const a = await nthStart(ep, 1);
      const b = await nthStart(ep, 2);
      comeUp(ep, a.workerId);
      await h.call(SchedulerRpc.deleteEndpoint, { ownerId: owner, endpointId: ep });
      await until(
        async () => stopped.includes(a.workerId) && stopped.includes(b.workerId),
        30_000,
        'workers of a deleted endpoint stopped',
      );
    });
  }, 90_000);

  afterAll(async () => {
    timers.forEach(clearInterval);
    await Promise.allSettled(scenarios.values());
    await h?.stop();
  }, 60_000);

  for (const name of [
    'keeps workersMin workers with the worker protocol environment',
    'scales from zero for a job at once, never for low-priority jobs, and stops idle workers',
    "an endpoint on another user's template starts workers from its pinned revision",
    'rolling release: a new version replaces the idle worker',
    'a busy worker is never stopped; stopPod replaces a worker once it is free',
    'a stopped worker still polling while it shuts down gets no job and does not come back as an external worker',
    'a refused start backs off exponentially (crash loop), counted as throttled',
    'pod-rest not answering is retried on later ticks without back-off',
    'a young worker whose process ended with pod-rest is replaced without back-off',
    'a worker that never calls in is replaced after the start timeout',
    'a worker process that exits by itself is lost at once; a crash loop backs off and shows as unhealthy until a worker works',
    'a worker exiting after stopPod is replaced without back-off',
    'deleting an endpoint stops its workers',
  ])
    it(name, () => scenarios.get(name)!, 120_000);
});
