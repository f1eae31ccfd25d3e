#!/usr/bin/env node
// A worker for the templates/secrets e2e suite, written with @runplane/worker-sdk. Job input:
//   {"env": ["A", "B"]}          output {"A": <value or null>, ...}
//   {"env_sha256": ["A"]}        output {"A": <hex SHA-256 of the value, or null>} (proves a
//                                secret arrived without the value itself ever leaving the worker)
//   {"wait_for_file": "/path"}   holds the job until the file exists (a job the test ends at will)
//   {"whoami": true}             output {"pid", "uid", "gid"} of the worker process
//   {"read": ["/path", ...]}     output {"read": {"/path": "ok" or the error code}}: what a
//                                tenant's code could read of the host (isolation tests)
//   {"exit": 1}                  the worker process exits with that code while holding the job
//   {"log": ["text", ...]}       prints each text as a line on stdout (worker log tests)
//   {"log_env": ["A"]}           prints "A=<value>" on stdout (a secret must reach no log)
// Keys combine; wait_for_file runs first.
import { start } from '@runplane/worker-sdk';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

start({
  handler: async (job, { signal }) => {
    const input = job.input ?? {};
    if (Number.isInteger(input.exit)) process.exit(input.exit);
    if (typeof input.wait_for_file === 'string') {
      while (!existsSync(input.wait_for_file)) {
        if (signal.aborted) return { error: 'stopped while waiting' };
        await sleep(50);
      }
    }
    for (const text of input.log ?? []) process.stdout.write(`${text}\n`);
    for (const name of input.log_env ?? []) process.stdout.write(`${name}=${process.env[name]}\n`);
    const out = {};
    for (const name of input.env ?? []) out[name] = process.env[name] ?? null;
    for (const name of input.env_sha256 ?? []) {
      const value = process.env[name];
      out[name] = value === undefined ? null : createHash('sha256').update(value).digest('hex');
    }
    if (input.whoami)
      Object.assign(out, { pid: process.pid, uid: process.getuid(), gid: process.getgid() });
    if (Array.isArray(input.read)) {
      out.read = {};
      for (const file of input.read) {
        try {
          readFileSync(file);
          out.read[file] = 'ok';
        } catch (err) {
          out.read[file] = err.code ?? String(err);
        }
      }
    }
    return out;
  },
});
