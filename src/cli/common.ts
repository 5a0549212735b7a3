import { existsSync, rmSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { bootstrap, type Core, openCore } from '../core.js';
import { ROLE_ADMIN } from '../db/users.js';

/** Bad input on the command line (exit code 2, as config errors and refused API input). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `--data` is a global option, so it may stand anywhere: `atrium admin set PW --data DIR`. */
export const dataDir = (cmd: Command): string => (cmd.optsWithGlobals() as { data: string }).data;

/** `--data` must name a folder, or nothing yet; says whether it exists. */
export function checkDataDir(dir: string): boolean {
  if (!existsSync(dir)) return false;
  if (!statSync(dir).isDirectory()) throw new UsageError(`--data ${dir} is not a folder`);
  return true;
}

/**
 * Opens the data folder (creating config and database when new) for a one-shot command. A
 * folder this run created is removed again when the command fails: a mistyped `--data` leaves
 * no new installation behind.
 */
export async function withCore<T>(dir: string, fn: (core: Core) => Promise<T>): Promise<T> {
  const existed = checkDataDir(dir);
  let core: Core | undefined;
  try {
    core = openCore(loadConfig(dir), { quiet: true });
    return await fn(core);
  } catch (err) {
    if (core) await core.close().catch(() => undefined);
    core = undefined;
    if (!existed) rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    await core?.close();
  }
}

/**
 * Like withCore, with the database migrated and the default users in place. When this run
 * created the admin user, its initial password is printed (on stderr) so it is not lost.
 */
export async function withReadyCore<T>(dir: string, fn: (core: Core) => Promise<T>): Promise<T> {
  return withCore(dir, async (core) => {
    const { adminPassword } = await bootstrap(core);
    const admin = adminPassword ? await core.repos.users.byRole(ROLE_ADMIN) : undefined;
    const result = await fn(core);
    // After the command: a failed one leaves no installation, and one that replaced the admin
    // (an import) must not print a password that no longer works.
    if (admin && (await core.repos.users.byRole(ROLE_ADMIN))?.pwdHash === admin.pwdHash) {
      console.error(`created the admin user; its initial password is: ${adminPassword}`);
    } else if (admin) {
      console.error('the admin user and its password come from the backup');
    }
    return result;
  });
}

export function printTable(columns: string[], rows: Array<Record<string, string>>): void {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) => cells.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  console.log(line(columns));
  for (const r of rows) console.log(line(columns.map((c) => r[c] ?? '')));
}

/** A positive integer argument (ids). */
export function idArg(value: string, what = 'id'): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${what} must be a positive integer, got "${value}"`);
  return Number(value);
}
