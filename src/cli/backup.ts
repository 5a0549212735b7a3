import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { exportInstallation, importInstallation, parseBackup } from '../backup/installation.js';
import { dataDir, UsageError, withReadyCore } from './common.js';

/** `atrium export FILE` / `atrium import FILE`: the installation's configuration as one JSON file. */
export function backupCommands(program: Command): void {
  program
    .command('export <file>')
    .description('write settings, users, groups, storages, metas, SSH keys, shares and passkeys to a JSON file ("-" = stdout); it holds secrets')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const backup = await exportInstallation(core);
        const text = `${JSON.stringify(backup, null, 2)}\n`;
        if (file === '-') {
          process.stdout.write(text);
          return;
        }
        const tmp = `${file}.tmp-${process.pid}`;
        writeFileSync(tmp, text, { mode: 0o600 });
        renameSync(tmp, file);
        const count = (k: string) => (backup[k] as unknown[]).length;
        console.log(
          `exported ${count('settings')} settings, ${count('users')} users, ${count('groups')} groups, ${count('storages')} storages, ${count('metas')} metas, ${count('ssh_keys')} SSH keys, ${count('shares')} shares, ${count('passkeys')} passkeys to ${file}`,
        );
      });
    });

  program
    .command('import <file>')
    .description('restore a file written by `atrium export` (or an OpenList backup): matching entries are updated, others added')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      let text: string;
      try {
        text = readFileSync(file === '-' ? 0 : file, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
      }
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
      }
      // Refused before the data folder is opened, so a wrong file leaves nothing behind.
      parseBackup(raw);
      await withReadyCore(dataDir(cmd), async (core) => {
        const r = await importInstallation(core, raw);
        console.log(
          `imported ${r.settings} settings; users: ${r.users.added} added, ${r.users.updated} updated; groups: ${r.groups.added} added, ${r.groups.updated} updated; ` +
            `storages: ${r.storages.added} added, ${r.storages.updated} updated; metas: ${r.metas.added} added, ${r.metas.updated} updated; ` +
            `SSH keys: ${r.sshKeys.added} added, ${r.sshKeys.skipped} already there or without their user; ` +
            `shares: ${r.shares.added} added, ${r.shares.updated} updated, ${r.shares.skipped} without their creator; ` +
            `passkeys: ${r.passkeys.added} added, ${r.passkeys.skipped} already there or without their user`,
        );
        if (r.users.skipped.length > 0) console.log(`users not restored (no password hash in the file): ${r.users.skipped.join(', ')}`);
        if (r.unknownSettings.length > 0) console.log(`settings this version does not know, left out: ${r.unknownSettings.join(', ')}`);
      });
    });
}
