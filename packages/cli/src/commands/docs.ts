import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServiceDescriptor } from '@runplane/platform';

export const DOCS_HELP = `  runplane docs [--out <dir>]         write the API reference, generated from the code without a server:
                                      <dir>/openapi.json (OpenAPI 3.1, every service) and <dir>/schema.graphql
                                      (default dir: docs); the build runs it for the repository's docs/
  runplane docs --check [--out <dir>] exit 1 when those files differ from what the code generates`;

/** How to bring the committed files up to date (printed by --check and the drift test). */
export const REGENERATE_HINT =
  'regenerate them with `npm run build` (or `npx runplane docs --out docs`) and commit docs/openapi.json and docs/schema.graphql';

const SDL_HEADER = `# Runplane's GraphQL schema (POST /graphql), printed from template-graphql's code-first schema by
# \`runplane docs\` during the build. Do not edit: change the code, \`npm run build\`, commit this file.

`;

/** File name → contents of the API reference of `services` (schema.graphql when template-graphql is one). */
export async function generateApiReference(
  services: ServiceDescriptor[],
): Promise<Record<string, string>> {
  // Loaded here, not at the top: the CLI imports this module for its help text, and client
  // commands must not pay for loading the server.
  const [{ buildOpenApiDocument, createApiPreview, providerClasses }, { printGraphqlSchema }] =
    await Promise.all([import('@runplane/platform'), import('@runplane/template-graphql')]);
  const app = await createApiPreview(services);
  try {
    const files: Record<string, string> = {
      'openapi.json': `${JSON.stringify(buildOpenApiDocument(app, services), null, 2)}\n`,
    };
    if (services.some((s) => s.name === 'template-graphql'))
      files['schema.graphql'] = `${SDL_HEADER}${await printGraphqlSchema(providerClasses(app))}\n`;
    return files;
  } finally {
    await app.close();
  }
}

export async function runDocsCommand(
  services: ServiceDescriptor[],
  values: { out?: string; check?: boolean },
): Promise<number> {
  const dir = path.resolve(values.out ?? 'docs');
  const files = await generateApiReference(services);
  if (values.check) {
    const stale: string[] = [];
    for (const [name, text] of Object.entries(files)) {
      const current = await readFile(path.join(dir, name), 'utf8').catch(() => undefined);
      if (current !== text) stale.push(path.join(dir, name));
    }
    if (stale.length) {
      process.stderr.write(
        `runplane docs: out of date with the code: ${stale.join(', ')}; ${REGENERATE_HINT}\n`,
      );
      return 1;
    }
    process.stdout.write(
      `runplane docs: ${Object.keys(files)
        .map((n) => path.join(dir, n))
        .join(' and ')} are up to date\n`,
    );
    return 0;
  }
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  process.stdout.write(
    `runplane docs: wrote ${Object.keys(files)
      .map((n) => path.join(dir, n))
      .join(' and ')}\n`,
  );
  return 0;
}
