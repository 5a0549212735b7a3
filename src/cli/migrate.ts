import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config/defaults.js';
import { loadConfig } from '../config/load.js';
import { checkTable, copyTables, dataTables, nonEmptyTables } from '../db/copy.js';
import { type DbHandle, openDatabase } from '../db/index.js';
import { migrate } from '../db/migrations.js';
import { dataDir, UsageError } from './common.js';

type DbConfig = Config['database'];

/**
 * The target of `--to`: `postgres://user:pass@host:port/db`, `mysql://…` (or `mariadb://…`),
 * `sqlite:FILE.db` (relative to the data folder unless absolute).
 */
export function targetConfig(dsn: string, prefix: string, dir: string): DbConfig {
  const base: DbConfig = { type: 'sqlite3', host: '', port: 0, user: '', password: '', name: '', db_file: '', table_prefix: prefix, ssl_mode: '', dsn: '' };
  const scheme = /^([a-z0-9+]+):/i.exec(dsn)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return { ...base, type: 'postgres', dsn };
  if (scheme === 'mysql' || scheme === 'mariadb') return { ...base, type: 'mysql', dsn: dsn.replace(/^mariadb:/i, 'mysql:') };
  if (scheme === 'sqlite' || scheme === 'sqlite3') {
    const file = dsn.replace(/^[a-z0-9]+:(\/\/)?/i, '');
    if (!file.endsWith('.db')) throw new UsageError(`a SQLite target must be a file ending in .db, got "${file}"`);
    return { ...base, type: 'sqlite3', db_file: path.resolve(dir, file) };
  }
  throw new UsageError(`--to must be postgres://…, mysql://… or sqlite:FILE.db, got "${dsn}"`);
}

/** The same database and prefix on both sides would copy a database onto itself. */
function sameDatabase(a: DbConfig, b: DbConfig): boolean {
  if (a.type !== b.type || a.table_prefix !== b.table_prefix) return false;
  if (a.type === 'sqlite3') return path.resolve(a.db_file) === path.resolve(b.db_file);
  return a.dsn !== '' && a.dsn === b.dsn;
}

/** Points config.json at the new database (the other keys of the file stay as they are). */
function switchConfig(file: string, target: DbConfig, dir: string): void {
  const config = JSON.parse(readFileSync(file, 'utf8')) as { database?: Partial<DbConfig> };
  const dbFile = target.type === 'sqlite3' ? path.relative(dir, target.db_file) || target.db_file : (config.database?.db_file ?? 'data.db');
  config.database = { ...config.database, type: target.type, dsn: target.dsn, db_file: dbFile.startsWith('..') ? target.db_file : dbFile, table_prefix: target.table_prefix };
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

async function runMigrate(dir: string, opts: { to: string; prefix?: string; switch?: boolean }): Promise<void> {
  const loaded = loadConfig(dir);
  const sourceConfig = loaded.config.database;
  const prefix = opts.prefix ?? sourceConfig.table_prefix;
  if (!/^[A-Za-z0-9_]*$/.test(prefix)) throw new UsageError(`--prefix may hold letters, digits and _ only, got "${prefix}"`);
  const targetCfg = targetConfig(opts.to, prefix, loaded.dataDir);
  if (sameDatabase(sourceConfig, targetCfg)) throw new UsageError('the target is the database this installation already uses');

  const source = openDatabase(sourceConfig);
  let target: DbHandle | undefined;
  try {
    await migrate(source);
    try {
      target = openDatabase(targetCfg);
      const filled = await nonEmptyTables(target);
      if (filled.length > 0) {
        throw new UsageError(`the target is not empty (tables ${filled.map((t) => `${prefix}${t}`).join(', ')} hold rows): migrate into an empty database or another --prefix`);
      }
      await migrate(target);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`cannot use the target database: ${(err as Error).message}`);
    }
    const tables = await dataTables(source);
    console.log(`copying ${tables.length} tables from ${sourceConfig.type} to ${targetCfg.type} (prefix ${prefix})`);
    try {
      await copyTables(source, target, tables, (name, rows) => console.log(`  ${name}: ${rows} rows`));
    } catch (err) {
      throw new Error(`copy failed: ${(err as Error).message} (the target holds a partial copy: drop its ${prefix}* tables before trying again)`);
    }

    const targetTables = new Map((await dataTables(target)).map((t) => [t.name, t]));
    const all = createSummary();
    for (const t of tables) {
      const a = await checkTable(source, t);
      const b = await checkTable(target, { ...t, ...targetTables.get(t.name), columns: t.columns });
      if (a.rows !== b.rows || a.sha256 !== b.sha256) {
        throw new Error(
          `verification failed on ${t.name}: source ${a.rows} rows ${a.sha256.slice(0, 16)}, target ${b.rows} rows ${b.sha256.slice(0, 16)}; the installation still uses its old database`,
        );
      }
      all.add(a);
    }
    console.log(`verified: ${all.rows} rows in ${tables.length} tables, identical on both sides (sha256 ${all.digest()})`);
  } finally {
    await source.close();
    await target?.close();
  }
  if (opts.switch) {
    switchConfig(loaded.file, targetCfg, loaded.dataDir);
    console.log(`${loaded.file} now uses the ${targetCfg.type} database; the old one is left as it was`);
  } else {
    console.log('the installation still uses its old database: run again with --switch, or set "database" in config.json');
  }
}

/** The whole copy's checksum: SHA-256 over each table's name and checksum, in name order. */
function createSummary() {
  const hash = createHash('sha256');
  let rows = 0;
  return {
    add(c: { name: string; rows: number; sha256: string }) {
      hash.update(`${c.name}:${c.rows}:${c.sha256}\n`);
      rows += c.rows;
    },
    get rows() {
      return rows;
    },
    digest: () => hash.digest('hex'),
  };
}

/** `atrium migrate --to DSN`: copy the whole installation's database to another back end. */
export function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('copy every table to another database (SQLite, PostgreSQL, MySQL/MariaDB), verified by row counts and checksums; the target must be empty')
    .requiredOption('--to <dsn>', 'postgres://user:pass@host:5432/db, mysql://user:pass@host:3306/db or sqlite:FILE.db')
    .option('--prefix <prefix>', 'table prefix in the target (default: the current one)')
    .option('--switch', 'then point config.json at the target')
    .action(async (opts: { to: string; prefix?: string; switch?: boolean }, cmd: Command) => {
      await runMigrate(dataDir(cmd), opts);
    });
}
