import type { Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { bootstrap, type Core, openCore } from '../core.js';

/** Bad input on the command line (exit code 2, as config errors and refused API input). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `--data` is a global option, so it may stand anywhere: `atrium admin set PW --data DIR`. */
export const dataDir = (cmd: Command): string => (cmd.optsWithGlobals() as { data: string }).data;

/** Opens the data folder (creating config and database when new) for a one-shot command. */
export async function withCore<T>(dir: string, fn: (core: Core) => Promise<T>): Promise<T> {
  const core = openCore(loadConfig(dir), { quiet: true });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}

/**
 * Like withCore, with the database migrated and the default users in place. When this run
 * created the admin user, its initial password is printed (on stderr) so it is not lost.
 */
export async function withReadyCore<T>(dir: string, fn: (core: Core) => Promise<T>): Promise<T> {
  return withCore(dir, async (core) => {
    const { adminPassword } = await bootstrap(core);
    if (adminPassword) console.error(`created the admin user; its initial password is: ${adminPassword}`);
    return fn(core);
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
