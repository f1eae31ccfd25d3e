import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedPostgres } from '../src/embedded-postgres.js';

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-embedded-'));
afterAll(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

/** The pid of a process that has certainly exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

// Creating a database (initdb) takes seconds alone, far more beside other suites.
jest.setTimeout(180_000);

describe('EmbeddedPostgres.open(dataDir)', () => {
  // One data directory for the whole file: every open of an existing directory costs ~1 s, the first ~3 s.
  const dataDir = path.join(tmpRoot, 'data');
  const lockFile = path.join(dataDir, 'runplane.lock');

  it('refuses a second open while the first is open, and persists data across close and reopen', async () => {
    const first = await EmbeddedPostgres.open(dataDir);
    try {
      expect(fs.readFileSync(lockFile, 'utf8')).toBe(String(process.pid));
      await expect(EmbeddedPostgres.open(dataDir)).rejects.toThrow(
        `data directory ${dataDir} is already open in this process`,
      );
      await first.pglite.exec(
        "CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('across restarts');",
      );
    } finally {
      await first.close();
    }
    expect(fs.existsSync(lockFile)).toBe(false);

    const second = await EmbeddedPostgres.open(dataDir);
    try {
      expect((await second.pglite.query('SELECT v FROM kept')).rows).toEqual([
        { v: 'across restarts' },
      ]);
    } finally {
      await second.close();
    }
  });

  it('refuses a directory locked by another live process', async () => {
    fs.writeFileSync(lockFile, String(process.ppid));
    try {
      await expect(EmbeddedPostgres.open(dataDir)).rejects.toThrow(
        `data directory ${dataDir} is in use by process ${process.ppid}`,
      );
      expect(fs.readFileSync(lockFile, 'utf8')).toBe(String(process.ppid)); // left alone
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  });

  it('takes over the stale lock of a dead process, or of an earlier process that had our pid (container restart)', async () => {
    for (const stale of [String(deadPid()), String(process.pid)]) {
      fs.writeFileSync(lockFile, stale);
      const db = await EmbeddedPostgres.open(dataDir);
      try {
        expect(fs.readFileSync(lockFile, 'utf8')).toBe(String(process.pid));
        expect((await db.pglite.query('SELECT count(*)::int AS n FROM kept')).rows).toEqual([
          { n: 1 },
        ]);
      } finally {
        await db.close();
      }
    }
  });
});
