import { PGlite } from '@electric-sql/pglite';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedPostgres } from '../src/embedded-postgres.js';
import { initdbImage } from '../src/initdb-image.js';

// Tests that run initdb (seconds alone, over half a minute on a busy two-core machine) get room.
const INITDB_TIMEOUT_MS = 180_000;

describe('initdbImage (a new embedded database without initdb)', () => {
  let tmp: string;
  let cacheDir: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'initdb-image-'));
    cacheDir = path.join(tmp, `runplane-${process.getuid!()}`);
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const cachedFiles = () => fs.readdirSync(cacheDir).filter((f) => f.endsWith('-initdb.tar'));

  it(
    'is made once, kept private to this user, and read back afterwards',
    async () => {
      const first = await initdbImage(tmp);
      expect(first?.size).toBeGreaterThan(1_000_000);
      expect(fs.statSync(cacheDir).mode & 0o777).toBe(0o700);
      const [file] = cachedFiles();
      expect(fs.statSync(path.join(cacheDir, file)).mode & 0o777).toBe(0o600);
      const written = fs.statSync(path.join(cacheDir, file)).mtimeMs;

      const second = await initdbImage(tmp);
      expect(second?.size).toBe(first?.size);
      expect(fs.statSync(path.join(cacheDir, file)).mtimeMs).toBe(written);
      expect(fs.readdirSync(cacheDir)).toEqual([file]); // no partial file left behind
    },
    INITDB_TIMEOUT_MS,
  );

  // EmbeddedPostgres takes the image from the cache in the system's temporary directory.
  it(
    'starts databases that work, in memory and in a new data directory that then persists',
    async () => {
      const memory = await EmbeddedPostgres.open();
      await memory.pglite.exec('CREATE TABLE t (id int PRIMARY KEY)');
      expect((await memory.pglite.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([
        { n: 0 },
      ]);
      await memory.close();

      const dataDir = path.join(tmp, 'data');
      const disk = await EmbeddedPostgres.open(dataDir);
      await disk.pglite.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('here')");
      await disk.close();
      const reopened = await EmbeddedPostgres.open(dataDir);
      expect((await reopened.pglite.query('SELECT v FROM kept')).rows).toEqual([{ v: 'here' }]);
      await reopened.close();
    },
    INITDB_TIMEOUT_MS,
  );

  it(
    'ignores a cache directory others may write to, and a cached file others could have written',
    async () => {
      fs.mkdirSync(cacheDir, { mode: 0o700 });
      fs.chmodSync(cacheDir, 0o777);
      expect(await initdbImage(tmp)).toBeUndefined();
      expect(cachedFiles()).toEqual([]);

      fs.chmodSync(cacheDir, 0o700);
      const planted = path.join(cacheDir, `pglite-${pgliteVersion()}-initdb.tar`);
      fs.writeFileSync(planted, 'not a data directory');
      fs.chmodSync(planted, 0o644);
      const image = await initdbImage(tmp);
      // Made anew and put in its place: a database starts from it.
      expect(image?.size).toBeGreaterThan(1_000_000);
      expect(fs.statSync(planted).mode & 0o777).toBe(0o600);
      const pg = await PGlite.create({ loadDataDir: image });
      expect((await pg.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await pg.close();
    },
    INITDB_TIMEOUT_MS,
  );
});

function pgliteVersion(): string {
  const entry = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  return JSON.parse(fs.readFileSync(path.join(entry, '../package.json'), 'utf8')).version;
}
