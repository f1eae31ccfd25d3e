import { RunplaneError } from '@runplane/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * The console (`@runplane/console`, a static React bundle) served at `/`: `index.html` for `/` and
 * for the console's own pages (the first path segments its `routes.json` lists: a history-API SPA
 * whose deep links must load), its hashed files under `/assets/`. Everything else — `/v1`, `/v2`,
 * `/graphql`, `/docs`, unknown paths — is untouched and answers as before. Files are read once at
 * start (a few hundred KB). No session state: the page signs in with an API key kept in the tab.
 */

/** Pages: no inline script or style, nothing from another origin, not framed. */
const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; " +
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** Asset names carry a hash of their content: a changed file is a new name. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

interface ConsoleFiles {
  index: Buffer;
  assets: Map<string, { body: Buffer; type: string }>;
}

const require = createRequire(import.meta.url);

/** The console's package directory, or null when it is not installed. */
function consolePackageDir(): string | null {
  try {
    return path.dirname(require.resolve('@runplane/console/package.json'));
  } catch {
    return null;
  }
}

/** The built console, or null when it is not installed or not built. */
function loadConsoleFiles(): ConsoleFiles | null {
  const dir = consolePackageDir();
  const dist = dir && path.join(dir, 'dist');
  if (!dist || !existsSync(path.join(dist, 'index.html'))) return null;
  const assetsDir = path.join(dist, 'assets');
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { body: readFileSync(path.join(assetsDir, name)), type });
  }
  return { index: readFileSync(path.join(dist, 'index.html')), assets };
}

/** The first path segments of the console's pages (its `routes.json`). */
function sections(dir: string): string[] {
  return (JSON.parse(readFileSync(path.join(dir, 'routes.json'), 'utf8')) as { sections: string[] })
    .sections;
}

/** The URLs the console registers (Fastify's notation): `/`, its assets, its pages. */
export function consoleRouteUrls(): string[] {
  const dir = consolePackageDir();
  if (!dir) return [];
  return ['/', '/assets/:file', ...sections(dir).flatMap((s) => [`/${s}`, `/${s}/*`])];
}

/**
 * Serves the console when `enabled` (standalone by default; in cluster mode the service the
 * ingress routes `/` to sets RUNPLANE_CONSOLE=true). Asked for explicitly but not built: an error.
 */
export function installConsole(
  fastify: FastifyInstance,
  { enabled, required }: { enabled: boolean; required: boolean },
  logger: Logger,
): void {
  if (!enabled) return;
  const files = loadConsoleFiles();
  if (!files) {
    const message =
      'the console is not built (npm run build -w @runplane/console): GET / answers 404';
    if (required) throw new Error(`RUNPLANE_CONSOLE=true but ${message}`);
    logger.warn(message);
    return;
  }
  const page = (_request: unknown, reply: FastifyReply) =>
    reply.headers(PAGE_HEADERS).send(files.index);
  const [root, assets, ...pages] = consoleRouteUrls();
  fastify.get(root, page);
  for (const url of pages) fastify.get(url, page);
  fastify.get<{ Params: { file: string } }>(assets, (request, reply) => {
    const asset = files.assets.get(request.params.file);
    if (!asset) throw RunplaneError.notFound(`no route GET ${request.url.split('?')[0]}`);
    return reply
      .type(asset.type)
      .header('cache-control', ASSET_CACHE)
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  });
}
