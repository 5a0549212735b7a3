import type { Command } from 'commander';
import type { Core } from '../core.js';
import type { Group, RootSpec } from '../db/groups.js';
import { groupBody } from '../server/routes/admin-groups.js';
import { userBody } from '../server/routes/admin-users.js';
import { parseInput } from '../server/validation.js';
import { dataDir, printTable, UsageError, withReadyCore } from './common.js';

async function groupNamed(core: Core, name: string): Promise<Group> {
  const g = (await core.groups.list()).find((x) => x.name === name);
  if (!g) throw new UsageError(`no group named "${name}"`);
  return g;
}

/** `--root NAME=PATH`, repeatable: a root shown at each member's `/NAME`. */
function rootOf(value: string, previous: RootSpec[] = []): RootSpec[] {
  const eq = value.indexOf('=');
  if (eq <= 0 || eq === value.length - 1) throw new UsageError(`--root takes NAME=PATH, not "${value}"`);
  return [...previous, { name: value.slice(0, eq), path: value.slice(eq + 1) }];
}

const rootsText = (roots: RootSpec[]) => roots.map((r) => `${r.name}=${r.path}`).join(', ');

/** Puts a user into a group or takes them out, through the accounts' checks (no root name twice). */
async function membership(core: Core, groupName: string, username: string, join: boolean): Promise<void> {
  const g = await groupNamed(core, groupName);
  const u = await core.repos.users.byUsername(username);
  if (!u) throw new UsageError(`no user named "${username}"`);
  const ids = (u.groups ?? []).map((x) => x.id).filter((id) => id !== g.id);
  await core.accounts.updateUser({ ...parseInput(userBody, { username: u.username, group_ids: join ? [...ids, g.id] : ids }), id: u.id });
}

/** `atrium group list|add|set|delete|join|leave`: groups of users, with the API's checks. */
export function groupCommands(program: Command): void {
  const group = program.command('group').description('groups of users: list, add, change, delete; put users in and take them out');

  group
    .command('list')
    .description('list the groups with their bits, roots and members')
    .action(async (_opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const groups = await core.groups.list();
        const rows = [];
        for (const g of groups) {
          const members = await core.repos.groups.members(g.id);
          const names = await Promise.all(members.map(async (id) => (await core.repos.users.byId(id))?.username ?? String(id)));
          rows.push({ id: String(g.id), name: g.name, permission: String(g.permission), roots: rootsText(g.roots), members: names.join(', ') });
        }
        printTable(['id', 'name', 'permission', 'roots', 'members'], rows);
        console.log(`${groups.length} group(s)`);
      });
    });

  group
    .command('add <name>')
    .description('add a group')
    .option('--permission <n>', 'permission bits its members gain, as in the API (e.g. 8 = write)', '0')
    .option('--root <name=path>', 'a root shown at each member\'s /NAME (repeatable)', rootOf)
    .action(async (name: string, opts: { permission: string; root?: RootSpec[] }, cmd: Command) => {
      const input = parseInput(groupBody, { name, permission: opts.permission, roots: opts.root ?? [] });
      await withReadyCore(dataDir(cmd), async (core) => {
        const id = await core.groups.create(input);
        console.log(`group ${input.name.trim()} added (id ${id})`);
      });
    });

  group
    .command('set <name>')
    .description("change a group's name, bits or roots (--root replaces the roots; --no-roots removes them)")
    .option('--rename <new>', 'a new name')
    .option('--permission <n>', 'permission bits its members gain')
    .option('--root <name=path>', 'a root (repeatable; the list replaces the old one)', rootOf)
    .option('--no-roots', 'remove every root')
    .action(async (name: string, opts: { rename?: string; permission?: string; root?: RootSpec[]; roots: boolean }, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const g = await groupNamed(core, name);
        const roots = opts.roots === false ? [] : opts.root;
        const input = parseInput(groupBody, { name: opts.rename ?? g.name, ...(opts.permission === undefined ? {} : { permission: opts.permission }), ...(roots === undefined ? {} : { roots }) });
        await core.groups.update({ ...input, id: g.id });
        console.log(`group ${input.name.trim()} saved`);
      });
    });

  group
    .command('delete <name>')
    .description('delete a group (its members lose its bits and roots)')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const g = await groupNamed(core, name);
        await core.groups.delete(g.id);
        console.log(`group ${g.name} deleted`);
      });
    });

  for (const [verb, join] of [
    ['join', true],
    ['leave', false],
  ] as const) {
    group
      .command(`${verb} <group> <username>`)
      .description(join ? 'put a user into a group' : 'take a user out of a group')
      .action(async (groupName: string, username: string, _opts: unknown, cmd: Command) => {
        await withReadyCore(dataDir(cmd), async (core) => {
          await membership(core, groupName, username, join);
          console.log(`user ${username} ${join ? 'joined' : 'left'} group ${groupName}`);
        });
      });
  }
}
