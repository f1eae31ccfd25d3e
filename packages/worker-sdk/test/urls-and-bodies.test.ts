import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_PING_INTERVAL_MS,
  jobDoneUrl,
  jobStreamUrl,
  jobTakeUrl,
  pingUrl,
  readWorkerConfig,
} from '../src/config.js';
import { describeException, shapeResult } from '../src/run-job.js';

const ENV = {
  RUNPOD_POD_ID: 'wk-7',
  RUNPOD_AI_API_KEY: 'k',
  RUNPOD_WEBHOOK_GET_JOB: 'http://h/v2/ep/job-take/$ID?gpu=x',
  RUNPOD_WEBHOOK_POST_OUTPUT: 'http://h/v2/ep/job-done/$RUNPOD_POD_ID/$ID?gpu=x',
  RUNPOD_WEBHOOK_POST_STREAM: 'http://h/v2/ep/job-stream/$RUNPOD_POD_ID/$ID?gpu=x',
  RUNPOD_WEBHOOK_PING: 'http://h/v2/ep/ping/$RUNPOD_POD_ID?gpu=x',
  RUNPOD_PING_INTERVAL: '2500',
};

describe('worker URLs (runpod-python substitution rules)', () => {
  it('substitutes $ID with the worker id in job-take, $RUNPOD_POD_ID elsewhere, $ID with the job id per post', () => {
    const c = readWorkerConfig(ENV);
    expect(c.workerId).toBe('wk-7');
    expect(jobTakeUrl(c, 1, false)).toBe('http://h/v2/ep/job-take/wk-7?gpu=x&job_in_progress=0');
    expect(jobTakeUrl(c, 4, true)).toBe(
      'http://h/v2/ep/job-take-batch/wk-7?gpu=x&batch_size=4&job_in_progress=1',
    );
    expect(c.jobStopUrl).toBe('http://h/v2/ep/job-stop/wk-7?gpu=x');
    expect(jobDoneUrl(c, 'j-1', false)).toBe(
      'http://h/v2/ep/job-done/wk-7/j-1?gpu=x&isStream=false',
    );
    expect(jobDoneUrl(c, 'j-1', true)).toBe('http://h/v2/ep/job-done/wk-7/j-1?gpu=x&isStream=true');
    expect(jobStreamUrl(c, 'j-1')).toBe('http://h/v2/ep/job-stream/wk-7/j-1?gpu=x&isStream=false');
    expect(pingUrl(c, [], '0.1.0')).toBe('http://h/v2/ep/ping/wk-7?gpu=x&runpod_version=0.1.0');
    expect(pingUrl(c, ['a', 'b'], '0.1.0')).toBe(
      'http://h/v2/ep/ping/wk-7?gpu=x&job_id=a%2Cb&runpod_version=0.1.0',
    );
    expect(c.pingIntervalMs).toBe(2500);
  });

  it('leaves $RUNPOD_POD_ID alone in job-take and only appends "&" parameters, as the python SDK does', () => {
    const c = readWorkerConfig({
      ...ENV,
      RUNPOD_WEBHOOK_GET_JOB: 'http://h/v2/ep/job-take/$RUNPOD_POD_ID?',
      RUNPOD_WEBHOOK_PING: 'http://h/ping/$RUNPOD_POD_ID',
    });
    // "$RUNPOD_POD_ID" contains no "$ID", so nothing is replaced.
    expect(jobTakeUrl(c, 1, false)).toBe(
      'http://h/v2/ep/job-take/$RUNPOD_POD_ID?&job_in_progress=0',
    );
    expect(pingUrl(c, ['j'], 'v')).toBe('http://h/ping/wk-7?job_id=j&runpod_version=v');
  });

  it('turns pings off without a key or pod id, and the stop channel without /job-take/', () => {
    expect(readWorkerConfig({ ...ENV, RUNPOD_AI_API_KEY: '' }).pingUrl).toBeUndefined();
    const anonymous = readWorkerConfig({ ...ENV, RUNPOD_POD_ID: undefined });
    expect(anonymous.pingUrl).toBeUndefined();
    expect(anonymous.workerId).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      readWorkerConfig({ ...ENV, RUNPOD_WEBHOOK_GET_JOB: 'http://h/take?x=1' }).jobStopUrl,
    ).toBeUndefined();
    expect(readWorkerConfig({ ...ENV, RUNPOD_PING_INTERVAL: 'abc' }).pingIntervalMs).toBe(
      DEFAULT_PING_INTERVAL_MS,
    );
    expect(readWorkerConfig({ ...ENV, RUNPOD_PING_INTERVAL: '5' }).pingIntervalMs).toBe(100);
  });
});

describe('job-done bodies (as runpod-python posts them)', () => {
  it('wraps values as output and splits error / refresh_worker out of returned objects', () => {
    expect(shapeResult({ a: 1 })).toEqual({ output: { a: 1 } });
    expect(shapeResult('text')).toEqual({ output: 'text' });
    expect(shapeResult([1, 2])).toEqual({ output: [1, 2] });
    expect(shapeResult(false)).toEqual({ output: false });
    expect(shapeResult(undefined)).toEqual({ output: null });
    expect(shapeResult({ error: 'bad' })).toEqual({ error: 'bad' });
    expect(shapeResult({ error: 'bad', partial: 1 })).toEqual({
      output: { partial: 1 },
      error: 'bad',
    });
    expect(shapeResult({ error: '', a: 1 })).toEqual({ output: { a: 1 } });
    expect(shapeResult({ error: { code: 7 } })).toEqual({ error: '{"code":7}' });
    expect(shapeResult({ refresh_worker: true, ok: 1 })).toEqual({
      output: { ok: 1 },
      stopPod: true,
    });
    expect(shapeResult({})).toEqual({});
  });

  it('describes a thrown error as a JSON string like runpod-python', () => {
    const text = describeException(new TypeError('boom'), { hostname: 'host-1', workerId: 'wk-1' });
    expect(JSON.parse(text)).toEqual({
      error_type: 'TypeError',
      error_message: 'boom',
      error_traceback: expect.stringContaining('TypeError: boom'),
      hostname: 'host-1',
      worker_id: 'wk-1',
      runpod_version: expect.any(String),
    });
    expect(JSON.parse(describeException('plain string', { workerId: 'w' })).error_message).toBe(
      'plain string',
    );
  });
});
