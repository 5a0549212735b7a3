import type { Command } from 'commander';
import { dataDir, printTable, UsageError, withReadyCore } from './common.js';
import { groupOwner, userOwner, type QuotaOwner } from '../view/quota.js';

const shown = (n: number) => (n === 0 ? '-' : String(n));

/** `atrium quota scan [--user U] [--group G]`: counts the usage of quota owners again (after a crash, or writes around the server). */
export function quotaCommands(program: Command): void {
  const quota = program.command('quota').description('quotas of users and groups: count their usage again');
  quota
    .command('scan')
    .description('count the files and bytes of every user and group with a quota (or only --user / --group) and store them as their usage')
    .option('--user <name>', 'only this user')
    .option('--group <name>', 'only this group')
    .action(async (opts: { user?: string; group?: string }, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        // The owners' areas are read through the storages, mounted here as the server mounts them.
        await core.storages.loadAll();
        let owners: QuotaOwner[];
        if (opts.user !== undefined || opts.group !== undefined) {
          owners = [];
          if (opts.user !== undefined) {
            const u = await core.repos.users.byUsername(opts.user);
            if (!u) throw new UsageError(`no user named "${opts.user}"`);
            owners.push(userOwner(u));
          }
          if (opts.group !== undefined) {
            const g = await core.repos.groups.byName(opts.group);
            if (!g) throw new UsageError(`no group named "${opts.group}"`);
            owners.push(groupOwner(g));
          }
        } else owners = await core.quotas.all();
        const rows = [];
        for (const o of owners) {
          const u = await core.quotas.scan(o);
          rows.push({ owner: `${o.kind} ${o.name}`, used_bytes: String(u.bytes), quota_bytes: shown(o.quotaBytes), used_files: String(u.files), quota_files: shown(o.quotaFiles) });
        }
        printTable(['owner', 'used_bytes', 'quota_bytes', 'used_files', 'quota_files'], rows);
        console.log(`${owners.length} owner(s) scanned`);
      });
    });
}
