import type { Command } from 'commander';
import type { Core } from '../core.js';
import { ROLE_ADMIN, ROLE_GUEST, type User } from '../db/users.js';
import { userBody } from '../server/routes/admin-users.js';
import { parseInput } from '../server/validation.js';
import { randomAlnum } from '../util/random.js';
import { dataDir, printTable, UsageError, withReadyCore } from './common.js';

const roleName = (role: number) => (role === ROLE_ADMIN ? 'admin' : role === ROLE_GUEST ? 'guest' : 'general');

async function userNamed(core: Core, username: string): Promise<User> {
  const user = await core.repos.users.byUsername(username);
  if (!user) throw new UsageError(`no user named "${username}"`);
  return user;
}

/** The API's user body (admin-users.ts) for an update that changes only `changes`. */
function updateOf(user: User, changes: { disabled?: boolean }) {
  return { ...parseInput(userBody, { username: user.username, ...changes }), id: user.id };
}

/** `atrium user list|add|passwd|disable|enable|delete`: the accounts, with the API's checks. */
export function userCommands(program: Command): void {
  const user = program.command('user').description('users: list, add, set a password, disable, enable or delete');

  user
    .command('list')
    .description('list the users')
    .action(async (_opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const { users } = await core.repos.users.list(1, 0);
        printTable(
          ['id', 'username', 'role', 'status', 'base_path', 'permission'],
          users.map((u) => ({
            id: String(u.id),
            username: u.username,
            role: roleName(u.role),
            status: u.disabled ? 'disabled' : 'enabled',
            base_path: u.basePath,
            permission: String(u.permission),
          })),
        );
        console.log(`${users.length} user(s)`);
      });
    });

  user
    .command('add <username> [password]')
    .description('add a user (a random password is set and printed when none is given)')
    .option('--base-path <path>', 'the folder the user sees as /', '/')
    .option('--permission <n>', 'permission bits, as in the API (e.g. 8 = write)', '0')
    .option('--disabled', 'create the user disabled')
    .action(async (username: string, password: string | undefined, opts: { basePath: string; permission: string; disabled?: boolean }, cmd: Command) => {
      const generated = password === undefined ? randomAlnum(12) : undefined;
      const input = parseInput(userBody, {
        username,
        password: password ?? generated,
        base_path: opts.basePath,
        permission: opts.permission,
        disabled: opts.disabled ?? false,
      });
      await withReadyCore(dataDir(cmd), async (core) => {
        const id = await core.accounts.createUser(input);
        console.log(`user ${input.username.trim()} added (id ${id})`);
        if (generated) console.log(`password: ${generated}`);
      });
    });

  user
    .command('passwd <username> [password]')
    .description("set a user's password (random and printed when none is given); the user's sessions end")
    .action(async (username: string, password: string | undefined, _opts: unknown, cmd: Command) => {
      const next = password ?? randomAlnum(12);
      if (next === '') throw new UsageError('the password is empty');
      await withReadyCore(dataDir(cmd), async (core) => {
        const u = await userNamed(core, username);
        if (u.role === ROLE_GUEST) throw new UsageError('the guest user has no password');
        await core.accounts.setPassword(u, next);
        console.log(`password set for user ${u.username}`);
        if (password === undefined) console.log(`password: ${next}`);
      });
    });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    user
      .command(`${verb} <username>`)
      .description(`${verb} a user (the admin cannot be disabled)`)
      .action(async (username: string, _opts: unknown, cmd: Command) => {
        await withReadyCore(dataDir(cmd), async (core) => {
          const u = await userNamed(core, username);
          await core.accounts.updateUser(updateOf(u, { disabled }));
          console.log(`user ${u.username} ${disabled ? 'disabled' : 'enabled'}`);
        });
      });
  }

  user
    .command('delete <username>')
    .description('delete a user, its sessions and SSH keys (not the admin or guest)')
    .action(async (username: string, _opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const u = await userNamed(core, username);
        await core.accounts.deleteUser(u.id);
        console.log(`user ${u.username} deleted`);
      });
    });
}
