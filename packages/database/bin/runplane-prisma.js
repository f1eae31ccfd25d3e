#!/usr/bin/env node
// Runs the Prisma CLI offline. Prisma tries to download its native schema engine before any
// command; pointing PRISMA_SCHEMA_ENGINE_BINARY at a stub that fails loudly stops the download
// while `generate` (pure wasm) keeps working. `migrate-create <name>` is ours: it writes a new
// migration with Prisma's wasm schema engine on an in-memory PGlite (see docs/database.md).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [command, ...rest] = process.argv.slice(2);

if (command === 'migrate-create') {
  const { createMigration } = await import('../dist/migrate-create.js');
  try {
    await createMigration({ cwd: process.cwd(), name: rest.join('_') || undefined });
  } catch (err) {
    process.stderr.write(
      `runplane-prisma migrate-create: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  }
  process.exit(0);
}

const require = createRequire(path.join(process.cwd(), 'package.json'));
const prismaCli = require.resolve('prisma/build/index.js');
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY:
    process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? path.join(here, 'schema-engine-unavailable.sh'),
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const args = command === 'generate' ? ['generate', ...rest] : [command, ...rest].filter(Boolean);
const result = spawnSync(process.execPath, [prismaCli, ...args], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
