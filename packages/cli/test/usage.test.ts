import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/runplane.js');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('runplane usage mistakes', () => {
  it('an unknown flag is one line naming it, then the usage, never a stack trace', () => {
    const res = run('keys', 'list', '--bogus');
    expect(res.status).toBe(1);
    const lines = res.stderr.split('\n');
    expect(lines[0]).toBe('runplane: unknown option "--bogus"');
    expect(lines[1]).toBe('');
    expect(lines[2]).toMatch(/^runplane — /);
    expect(res.stderr).toContain('Usage:');
    expect(res.stderr).not.toMatch(/^\s+at /m);
    expect(res.stdout).toBe('');
  });

  it('a flag missing its value is one line too', () => {
    const res = run('jobs', 'run', 'ep', '--input');
    expect(res.status).toBe(1);
    expect(res.stderr.split('\n')[0]).toMatch(
      /^runplane: Option '--input <value>' argument missing$/,
    );
    expect(res.stderr).not.toMatch(/^\s+at /m);
  });

  it('an unknown command is one line naming it, then the usage', () => {
    const res = run('frobnicate');
    expect(res.status).toBe(1);
    expect(res.stderr.split('\n')[0]).toBe('runplane: unknown command "frobnicate"');
    expect(res.stderr).toContain('Usage:');
  });

  it('the usage lists the operating commands', () => {
    const res = run('--help');
    expect(res.status).toBe(0);
    for (const command of [
      'runplane templates create',
      'runplane pods create',
      'runplane secrets create',
      'runplane workers <endpointId>',
      'runplane logs <podId|endpointId>',
      'runplane jobs events',
      'runplane endpoints get',
      'runplane endpoints metrics',
    ])
      expect(res.stdout).toContain(command);
  });

  it('an unknown subcommand of an operating command is one line, exit 1', () => {
    const res = spawnSync(process.execPath, [bin, 'pods', 'frob'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, RUNPLANE_API_KEY: 'k', RUNPLANE_URL: 'http://127.0.0.1:1' },
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toBe('runplane: unknown command "pods frob"\n');
  });
});
