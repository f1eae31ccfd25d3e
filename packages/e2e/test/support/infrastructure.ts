import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `postgresql://…/postgres` with another database name. */
export function databaseUrl(serverUrl: string, database: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Drops databases with psql (no driver dependency); problems are reported, never thrown. */
export async function dropDatabases(serverUrl: string, names: string[]): Promise<void> {
  for (const name of names) {
    if (!/^[a-z0-9_]+$/.test(name))
      throw new Error(`refusing to drop database with unexpected name ${JSON.stringify(name)}`);
    try {
      await run(
        'psql',
        [
          serverUrl,
          '-X',
          '-q',
          '-v',
          'ON_ERROR_STOP=1',
          '-c',
          `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`,
        ],
        { timeout: 30_000 },
      );
    } catch (err) {
      process.stderr.write(`[e2e] could not drop database ${name}: ${(err as Error).message}\n`);
    }
  }
}

/** Runs one query with psql and returns the rows (tab separated, unaligned). */
export async function psqlQuery(serverUrl: string, sql: string): Promise<string[]> {
  const { stdout } = await run(
    'psql',
    [serverUrl, '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
    { timeout: 30_000 },
  );
  return stdout.split('\n').filter((l) => l.length > 0);
}

/** The JetStream objects NatsBus creates for a namespace (see NatsBus.resources). */
export function natsResources(namespace: string): string[] {
  return [
    `${namespace.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')}_EVENTS`,
    `OBJ_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}_blobs`,
  ];
}

/**
 * Deletes JetStream streams over the plain NATS protocol (`$JS.API.STREAM.DELETE.<name>`), so
 * the e2e package needs no NATS client. Missing streams are fine; problems are reported, never thrown.
 */
export async function deleteNatsStreams(
  natsUrl: string,
  streams: string[],
  timeoutMs = 5000,
): Promise<void> {
  const u = new URL(natsUrl);
  const inbox = `_INBOX.e2e${Math.random().toString(36).slice(2)}`;
  await new Promise<void>((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port) || 4222 });
    let buffer = '';
    let sent = false;
    let replies = 0;
    const finish = (problem?: string) => {
      clearTimeout(timer);
      if (problem)
        process.stderr.write(
          `[e2e] could not delete NATS streams ${streams.join(', ')}: ${problem}\n`,
        );
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('error', (err) => finish(err.message));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (line.startsWith('INFO ') && !sent) {
          sent = true;
          const connect: Record<string, unknown> = {
            verbose: false,
            pedantic: false,
            name: 'runplane-e2e-cleanup',
          };
          if (u.username)
            Object.assign(connect, {
              user: decodeURIComponent(u.username),
              pass: decodeURIComponent(u.password),
            });
          let out = `CONNECT ${JSON.stringify(connect)}\r\nSUB ${inbox}.* 1\r\n`;
          streams.forEach((s, i) => {
            out += `PUB $JS.API.STREAM.DELETE.${s} ${inbox}.${i} 0\r\n\r\n`;
          });
          socket.write(out);
        } else if (line === 'PING') {
          socket.write('PONG\r\n');
        } else if (line.startsWith('-ERR')) {
          finish(line);
        } else if (line.startsWith('MSG ') && ++replies === streams.length) {
          finish();
        }
      }
    });
  });
}
