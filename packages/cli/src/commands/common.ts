import { RunplaneClient, RunplaneError } from '@runplane/contracts';

/** Flags shared by the commands that talk to a running server. */
export interface ClientFlags {
  url?: string;
  key?: string;
  json?: boolean;
}

export const CLIENT_HELP = `    Commands that talk to a running server take --url (default $RUNPLANE_URL or
    http://127.0.0.1:8080) and --key (default $RUNPLANE_API_KEY); --json prints machine-readable output.`;

/** Thrown for a usage problem: printed as one line, exit code 1. */
export class UsageError extends Error {}

function clientFrom(flags: ClientFlags): { client: RunplaneClient; baseUrl: string } {
  const baseUrl = flags.url ?? process.env.RUNPLANE_URL ?? 'http://127.0.0.1:8080';
  const apiKey = flags.key ?? process.env.RUNPLANE_API_KEY;
  if (!apiKey) throw new UsageError('an API key is needed: --key <key> or RUNPLANE_API_KEY');
  return { client: new RunplaneClient({ baseUrl, apiKey }), baseUrl };
}

/** Prints `value` as JSON with --json, else the human text. */
export function output(flags: ClientFlags, value: unknown, text: () => string): void {
  process.stdout.write(`${flags.json ? JSON.stringify(value, null, 2) : text()}\n`);
}

/** Runs a client command; API errors, usage errors and an unreachable server become one line and exit 1. */
export async function runClientCommand(
  flags: ClientFlags,
  body: (client: RunplaneClient) => Promise<number>,
): Promise<number> {
  let baseUrl = '';
  try {
    const connected = clientFrom(flags);
    baseUrl = connected.baseUrl;
    return await body(connected.client);
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message);
    if (err instanceof RunplaneError) return fail(`${err.status}: ${err.message}`);
    if (err instanceof TypeError)
      return fail(
        `cannot reach ${baseUrl}: ${(err.cause as Error | undefined)?.message ?? err.message}`,
      );
    throw err;
  }
}

export function fail(message: string): number {
  process.stderr.write(`runplane: ${message}\n`);
  return 1;
}

export function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all
    .map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '))
    .join('\n');
}
