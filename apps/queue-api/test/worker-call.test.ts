import { describe, expect, it } from '@jest/globals';
import { queryFlag, queryInt, queryList, resolveWorkerCall } from '../src/workers/worker-call.js';
import { parseIdempotencyKey } from '../src/jobs/idempotency.service.js';

describe('resolveWorkerCall (RunPod URL leniency: the URLs runpod-python builds)', () => {
  const call = (
    url: string,
    params: { workerId: string; jobId?: string },
    query: Record<string, unknown> = {},
    requestId?: string,
  ) =>
    resolveWorkerCall(
      { url, params, query, requestId },
      params.jobId !== undefined || url.includes('job-done'),
    );

  it('takes the ids from the path and the query from the query string', () => {
    expect(
      call(
        '/v2/e/job-done/w/j?gpu=x&isStream=true',
        { workerId: 'w', jobId: 'j' },
        { gpu: 'x', isStream: 'true' },
      ),
    ).toEqual({ workerId: 'w', jobId: 'j', query: { gpu: 'x', isStream: 'true' } });
  });

  it('without "?" everything after the first "&" of the last segment is query', () => {
    expect(
      call('/v2/e/job-done/w/j&isStream=false&x=1', {
        workerId: 'w',
        jobId: 'j&isStream=false&x=1',
      }),
    ).toEqual({ workerId: 'w', jobId: 'j', query: { isStream: 'false', x: '1' } });
    expect(
      resolveWorkerCall(
        {
          url: '/v2/e/job-take/w&job_in_progress=1',
          params: { workerId: 'w&job_in_progress=1' },
          query: {},
        },
        false,
      ),
    ).toEqual({ workerId: 'w', query: { job_in_progress: '1' } });
  });

  it('keeps "&" in a segment when the URL has a real query string', () => {
    expect(
      call(
        '/v2/e/job-done/w/a&b?isStream=false',
        { workerId: 'w', jobId: 'a&b' },
        { isStream: 'false' },
      ).jobId,
    ).toBe('a&b');
  });

  it('a literal $ID or a missing job segment takes the job id from X-Request-ID; none at all is a 400', () => {
    expect(
      call('/v2/e/job-done/w/$ID?isStream=false', { workerId: 'w', jobId: '$ID' }, {}, 'job-7')
        .jobId,
    ).toBe('job-7');
    expect(call('/v2/e/job-done/w?gpu=x', { workerId: 'w' }, {}, ' job-8 ').jobId).toBe('job-8');
    expect(() => call('/v2/e/job-done/w/$ID', { workerId: 'w', jobId: '$ID' })).toThrow(
      expect.objectContaining({ status: 400 }),
    );
  });

  it('a literal $RUNPOD_POD_ID worker segment is kept as the worker id (nothing better is known)', () => {
    expect(
      resolveWorkerCall(
        { url: '/v2/e/ping/$RUNPOD_POD_ID?x=1', params: { workerId: '$RUNPOD_POD_ID' }, query: {} },
        false,
      ).workerId,
    ).toBe('$RUNPOD_POD_ID');
  });

  it('uses the first value of repeated query parameters', () => {
    expect(
      resolveWorkerCall(
        { url: '/p/w?a=1&a=2', params: { workerId: 'w' }, query: { a: ['1', '2'] } },
        false,
      ).query,
    ).toEqual({ a: '1' });
  });
});

describe('query helpers', () => {
  it('queryFlag, queryInt, queryList', () => {
    expect(['true', 'TRUE', '1', 'yes', 'false', '0', '', undefined].map(queryFlag)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect([
      queryInt('5', 1, 1, 100),
      queryInt('0', 1, 1, 100),
      queryInt('500', 1, 1, 100),
      queryInt('x', 7, 1, 100),
      queryInt(undefined, 3, 1, 100),
    ]).toEqual([5, 1, 100, 7, 3]);
    expect([queryList('a,b, c,,'), queryList(''), queryList(undefined)]).toEqual([
      ['a', 'b', 'c'],
      [],
      [],
    ]);
  });

  it('parseIdempotencyKey', () => {
    expect([
      parseIdempotencyKey(undefined),
      parseIdempotencyKey('  '),
      parseIdempotencyKey(' k-1 '),
      parseIdempotencyKey(['a', 'b']),
    ]).toEqual([undefined, undefined, 'k-1', 'a']);
    expect(() => parseIdempotencyKey('x'.repeat(256))).toThrow(
      expect.objectContaining({ status: 400 }),
    );
    expect(() => parseIdempotencyKey('naïve')).toThrow(expect.objectContaining({ status: 400 }));
  });
});
