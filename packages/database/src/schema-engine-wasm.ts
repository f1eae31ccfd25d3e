import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
} from '@prisma/driver-adapter-utils';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import { PrismaPGlite } from 'pglite-prisma-adapter';

/**
 * Prisma's schema engine compiled to wasm, driven through a PGlite driver adapter: what
 * `prisma migrate dev` needs, without the native engine binary (which cannot be downloaded here).
 * Dev tooling only: never import this from the runtime graph (the wasm is 5 MB).
 */
export type { SchemaEngine };

type EngineModule = typeof import('@prisma/schema-engine-wasm');

// Node has WebAssembly, but neither lib ES2023 nor @types/node 20 declare it.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
    imports: Record<string, object>,
  ) => { exports: Record<string, unknown> };
};

let loaded: Promise<EngineModule> | undefined;

/**
 * Instantiates the wasm once per process: the bindings keep the instance in a module-level
 * variable, so a second instantiation would pull the memory out from under live engines.
 * The package's own entry point imports the .wasm as an ES module, which Node cannot do, so the
 * bindings are wired by hand.
 */
function loadEngineModule(): Promise<EngineModule> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bg = (await import(
      pathToFileURL(path.join(dir, 'schema_engine_bg.js')).href
    )) as EngineModule & { __wbg_set_wasm(exports: unknown): void };
    const module = new WebAssembly.Module(fs.readFileSync(path.join(dir, 'schema_engine_bg.wasm')));
    const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': bg });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })().catch((err) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

export interface PGliteSchemaEngine {
  engine: SchemaEngine;
  /** The engine's (empty, in-memory) dev database. */
  devDb: PGlite;
  /** Frees the engine and closes every PGlite it opened. */
  close(): Promise<void>;
}

/**
 * A schema engine whose "dev database" and shadow databases are fresh in-memory PGlites, all
 * closed by `close()` (the stock adapter never closes the shadow databases it opens).
 */
export async function openPGliteSchemaEngine(
  schemaFiles: { path: string; content: string }[],
  onLog: (line: string) => void = () => {},
): Promise<PGliteSchemaEngine> {
  const bg = await loadEngineModule();
  const pristine = await pristineDataDir();
  const main = await PGlite.create({ loadDataDir: pristine });
  const opened: PGlite[] = [main];
  try {
    const factory = new PrismaPGlite(main);
    factory.connectToShadowDb = async (): Promise<SqlDriverAdapter> => {
      const shadow = await PGlite.create({ loadDataDir: pristine });
      opened.push(shadow);
      return new PrismaPGlite(shadow).connect();
    };
    const engine = await bg.SchemaEngine.new(
      { datamodels: schemaFiles.map((f) => [f.path, f.content]) },
      onLog, // JSON tracing lines; errors come back as rejections
      bindMigrationAwareSqlAdapterFactory(factory),
    );
    return {
      engine,
      devDb: main,
      close: async () => {
        engine.free();
        await closeAll(opened);
      },
    };
  } catch (err) {
    await closeAll(opened);
    throw err;
  }
}

let pristine: Promise<Blob> | undefined;

/**
 * A dump of a freshly initialised PGlite. Creating a PGlite runs initdb (~2 s); restoring this
 * dump takes ~0.3 s, and each run needs three databases (dev + two shadows).
 */
function pristineDataDir(): Promise<Blob> {
  pristine ??= (async () => {
    const db = await PGlite.create();
    try {
      return await db.dumpDataDir('none');
    } finally {
      await db.close();
    }
  })().catch((err) => {
    pristine = undefined;
    throw err;
  });
  return pristine;
}

async function closeAll(dbs: PGlite[]): Promise<void> {
  await Promise.all(dbs.map((db) => (db.closed ? undefined : db.close().catch(() => {}))));
}

/** Engine rejections are plain objects or strings, not Errors; this makes them readable. */
export function engineError(err: unknown): Error {
  if (err instanceof Error) return err;
  if (typeof err === 'string') return new Error(err);
  const e = err as { message?: unknown; error_code?: unknown } | null;
  if (e && typeof e.message === 'string')
    return new Error(e.error_code ? `${e.message} (${String(e.error_code)})` : e.message);
  return new Error(JSON.stringify(err));
}
