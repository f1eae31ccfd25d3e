import { describe, expect, it } from '@jest/globals';
import type { JobRecord } from '@runplane/contracts';
import { spinnerText } from '../src/commands/queue.js';

const record = (status: JobRecord['status'], output?: unknown) =>
  ({ id: 'job-1', status, output }) as JobRecord;

describe('the job spinner of `runplane jobs run`', () => {
  it('shows the live state', () => {
    expect(spinnerText('job-1', record('IN_QUEUE'))).toBe('job job-1 IN_QUEUE');
    expect(spinnerText('job-1', record('IN_PROGRESS'))).toBe('job job-1 IN_PROGRESS');
  });

  it("adds the worker's progress output while IN_PROGRESS, on one line, cut to the terminal", () => {
    expect(spinnerText('job-1', record('IN_PROGRESS', 'step 2/5\nloading'))).toBe(
      'job job-1 IN_PROGRESS: step 2/5 loading',
    );
    expect(spinnerText('job-1', record('IN_PROGRESS', { percent: 40 }))).toBe(
      'job job-1 IN_PROGRESS: {"percent":40}',
    );
    const long = spinnerText('job-1', record('IN_PROGRESS', 'x'.repeat(200)), 40);
    expect(long).toHaveLength(37);
    expect(long.endsWith('…')).toBe(true);
  });
});
