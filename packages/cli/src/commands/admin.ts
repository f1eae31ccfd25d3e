import { API_KEY_SCOPES, type ApiKeyScope } from '@runplane/contracts';
import { output, runClientCommand, table, UsageError, type ClientFlags } from './common.js';

export interface AdminFlags extends ClientFlags {
  name?: string;
  scope?: string;
  user?: string;
  endpoint?: string;
}

export const ADMIN_HELP = `  runplane keys create --name <n> [--scope admin|readwrite|readonly|worker] [--user <userId>] [--endpoint <id>]
                                      create an API key (printed once; default scope readwrite)
  runplane keys list [--user <userId>] list keys (never their values)
  runplane keys revoke <keyId>        revoke a key (refused everywhere within seconds)
  runplane users create --name <n>    create a user (admin key)
  runplane users list                 list users (admin key)`;

/** `runplane keys …` / `runplane users …` through the public REST API, with the typed client users import. */
export function runAdminCommand(
  group: 'keys' | 'users',
  args: string[],
  flags: AdminFlags,
): Promise<number> {
  return runClientCommand(flags, async (client) => {
    const [action, target] = args;
    if (group === 'keys' && action === 'create') {
      if (!flags.name) throw new UsageError('keys create needs --name');
      const scope = (flags.scope ?? 'readwrite') as ApiKeyScope;
      if (!API_KEY_SCOPES.includes(scope))
        throw new UsageError(`--scope must be one of ${API_KEY_SCOPES.join(', ')}`);
      const created = await client.apiKeys.create({
        name: flags.name,
        scope,
        userId: flags.user,
        endpointId: flags.endpoint,
      });
      output(
        flags,
        created,
        () =>
          `created key ${created.id} (${created.scope}) for user ${created.userId}\n\n  ${created.key}\n\nStore it now: it is not shown again.`,
      );
      return 0;
    }
    if (group === 'keys' && action === 'list') {
      const keys = await client.apiKeys.list({ userId: flags.user });
      output(flags, keys, () =>
        table(
          keys.map((k) => [k.id, k.scope, k.userId, k.endpointId ?? '', k.createdAt, k.name]),
          ['ID', 'SCOPE', 'USER', 'ENDPOINT', 'CREATED', 'NAME'],
        ),
      );
      return 0;
    }
    if (group === 'keys' && action === 'revoke') {
      if (!target) throw new UsageError('keys revoke needs the key id');
      await client.apiKeys.revoke(target);
      output(flags, { id: target, revoked: true }, () => `revoked ${target}`);
      return 0;
    }
    if (group === 'users' && action === 'create') {
      if (!flags.name) throw new UsageError('users create needs --name');
      const user = await client.users.create({ name: flags.name });
      output(flags, user, () => `created user ${user.id} (${user.name})`);
      return 0;
    }
    if (group === 'users' && action === 'list') {
      const users = await client.users.list();
      output(flags, users, () =>
        table(
          users.map((u) => [u.id, u.createdAt, u.name]),
          ['ID', 'CREATED', 'NAME'],
        ),
      );
      return 0;
    }
    throw new UsageError(`unknown command "${group} ${action ?? ''}"`);
  });
}
