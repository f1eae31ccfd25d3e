import { API_KEY_SCOPES, RunplaneClient, RunplaneError, type ApiKeyScope } from '@runplane/contracts';

export interface AdminOptions {
  url?: string;
  key?: string;
  name?: string;
  scope?: string;
  user?: string;
  endpoint?: string;
  json?: boolean;
}

export const ADMIN_HELP = `  runplane keys create --name <n> [--scope admin|readwrite|readonly|worker] [--user <userId>] [--endpoint <id>]
                                      create an API key (printed once; default scope readwrite)
  runplane keys list [--user <userId>] list keys (never their values)
  runplane keys revoke <keyId>        revoke a key (refused everywhere within seconds)
  runplane users create --name <n>    create a user (admin key)
  runplane users list                 list users (admin key)
    These talk to a running server: --url (default $RUNPLANE_URL or http://127.0.0.1:8080) with
    --key (default $RUNPLANE_API_KEY). --json prints machine-readable output.`;

/** `runplane keys …` / `runplane users …` through the public REST API, with the typed client users import. */
export async function runAdminCommand(group: 'keys' | 'users', args: string[], options: AdminOptions): Promise<number> {
  const baseUrl = options.url ?? process.env.RUNPLANE_URL ?? 'http://127.0.0.1:8080';
  const apiKey = options.key ?? process.env.RUNPLANE_API_KEY;
  if (!apiKey) return fail('an API key is needed: --key <key> or RUNPLANE_API_KEY');
  const client = new RunplaneClient({ baseUrl, apiKey });
  const [action, target] = args;
  const print = (value: unknown, text: () => string) => process.stdout.write(`${options.json ? JSON.stringify(value, null, 2) : text()}\n`);
  try {
    if (group === 'keys' && action === 'create') {
      if (!options.name) return fail('keys create needs --name');
      const scope = (options.scope ?? 'readwrite') as ApiKeyScope;
      if (!API_KEY_SCOPES.includes(scope)) return fail(`--scope must be one of ${API_KEY_SCOPES.join(', ')}`);
      const created = await client.apiKeys.create({ name: options.name, scope, userId: options.user, endpointId: options.endpoint });
      print(created, () => `created key ${created.id} (${created.scope}) for user ${created.userId}\n\n  ${created.key}\n\nStore it now: it is not shown again.`);
      return 0;
    }
    if (group === 'keys' && action === 'list') {
      const keys = await client.apiKeys.list({ userId: options.user });
      print(keys, () => table(keys.map((k) => [k.id, k.scope, k.userId, k.endpointId ?? '', k.createdAt, k.name]), ['ID', 'SCOPE', 'USER', 'ENDPOINT', 'CREATED', 'NAME']));
      return 0;
    }
    if (group === 'keys' && action === 'revoke') {
      if (!target) return fail('keys revoke needs the key id');
      await client.apiKeys.revoke(target);
      print({ id: target, revoked: true }, () => `revoked ${target}`);
      return 0;
    }
    if (group === 'users' && action === 'create') {
      if (!options.name) return fail('users create needs --name');
      const user = await client.users.create({ name: options.name });
      print(user, () => `created user ${user.id} (${user.name})`);
      return 0;
    }
    if (group === 'users' && action === 'list') {
      const users = await client.users.list();
      print(users, () => table(users.map((u) => [u.id, u.createdAt, u.name]), ['ID', 'CREATED', 'NAME']));
      return 0;
    }
    return fail(`unknown command "${group} ${action ?? ''}"`);
  } catch (err) {
    if (err instanceof RunplaneError) return fail(`${err.status}: ${err.message}`);
    if (err instanceof TypeError) return fail(`cannot reach ${baseUrl}: ${(err.cause as Error | undefined)?.message ?? err.message}`);
    throw err;
  }
}

function fail(message: string): number {
  process.stderr.write(`runplane: ${message}\n`);
  return 1;
}

function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}
