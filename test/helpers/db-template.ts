import { introspectTables } from '../../src/db/copy.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type * as Mysql2 from 'mysql2/promise';
import type Pg from 'pg';
import type { Config } from '../../src/config/defaults.js';
import { type DbHandle, openDatabase } from '../../src/db/index.js';
import { dropAll, MIGRATIONS, migrate } from '../../src/db/migrations.js';

// Migrated once per database engine, cloned per test server.
//
// Running every migration for each test server cost 0.05–0.5 s on SQLite and 0.3–3.5 s on
// PostgreSQL and MariaDB (one DDL statement and commit after another, more under load). Instead
// each engine gets a template: the real migrations (`migrate` of src/db/migrations.ts) run once
// on a table prefix named after a hash of the migration sources, so a changed migration makes a
// new template rather than reusing a stale one. A test server's database is then a copy of the
// template under the server's own random prefix: the template's objects as the engine itself
// describes them (SQLite's sqlite_master, MySQL's SHOW CREATE TABLE, PostgreSQL's catalogs
// through pg_get_constraintdef and pg_get_indexdef), the prefix replaced, and its rows copied
// with INSERT … SELECT. The description is read once per worker process; a clone is one
// transaction (SQLite, PostgreSQL) or one round trip (MySQL). `bootstrap` still calls `migrate`,
// which finds every version recorded and does nothing. test/unit/db-template.test.ts compares a
// clone with a freshly migrated schema on each engine (columns, types, defaults, keys, indexes,
// triggers, sequences, rows), so an object the copy does not carry fails there.

const require = createRequire(import.meta.url);
type DbConfig = Config['database'];

/** The files whose content decides the migrated schema. */
const SOURCES = ['src/db/migrations.ts', 'src/db/search-ddl.ts'];

/** The template's key: a hash of the migration sources (a changed migration, a new template). */
export function templateKey(contents: string[]): string {
  const h = createHash('sha256');
  for (const c of contents) h.update(c).update('\0');
  return h.digest('hex').slice(0, 12);
}

const ROOT = path.resolve(import.meta.dirname, '../..');
export const TEMPLATE_PREFIX = `tpl${templateKey(SOURCES.map((f) => readFileSync(path.join(ROOT, f), 'utf8')))}_`;

/** Templates of other versions of the migrations are dropped once they are this old. */
const STALE_MS = 6 * 3600_000;

interface Recipe {
  /** Statements that make the schema, with TEMPLATE_PREFIX where the prefix goes. */
  ddl: string[];
  /** The tables whose rows are copied, without the prefix. */
  tables: string[];
  /** PostgreSQL: the serial columns, whose sequences are set as the template's are. */
  serials: Array<{ table: string; column: string }>;
  /** SQLite: the template file. */
  file?: string;
  /** Whether the template's recorded migrations are this process's (see cloneMigrated). */
  current: boolean;
}

const recipes = new Map<string, Promise<Recipe>>();

const isTemplate = (name: string) => name.startsWith(TEMPLATE_PREFIX);

/**
 * Gives `database` (a new prefix with no tables, or a SQLite file that does not exist yet) the
 * schema and rows that the migrations produce, copied from the engine's template. Answers false,
 * copying nothing, when the template records other migrations than this process loaded (the
 * migration sources changed between loading them and reading them for the key, as while someone
 * edits them during a run): the caller then runs the migrations.
 */
export async function cloneMigrated(database: DbConfig): Promise<boolean> {
  const key = database.type === 'sqlite3' ? 'sqlite3' : `${database.type}:${database.host}:${database.port}:${database.name}`;
  let made = recipes.get(key);
  if (!made) {
    made = prepare(database);
    recipes.set(key, made);
    made.catch(() => recipes.delete(key));
  }
  const recipe = await made;
  if (!recipe.current) return false;
  const prefix = database.table_prefix;
  if (isTemplate(prefix)) throw new Error(`${prefix} is the template's own prefix`);
  const ddl = recipe.ddl.map((s) => s.replaceAll(TEMPLATE_PREFIX, prefix));
  if (database.type === 'sqlite3') cloneSqlite(recipe.file!, database.db_file, prefix, ddl, recipe.tables);
  else if (database.type === 'postgres') await clonePostgres(database, prefix, ddl, recipe);
  else await cloneMysql(database, prefix, ddl, recipe.tables);
  return true;
}

/** The versions `h`'s schema_migrations records, against the migrations this process runs. */
async function isCurrent(h: DbHandle): Promise<boolean> {
  return sameVersions((await h.db.selectFrom('schema_migrations').select('version').execute()).map((r) => Number(r.version)));
}

function sameVersions(have: number[]): boolean {
  const sorted = (v: number[]) => JSON.stringify([...v].sort((a, b) => a - b));
  return sorted(have) === sorted(MIGRATIONS.map((m) => m.version));
}

/** Builds (or finds) the engine's template and reads how to make it again. */
async function prepare(database: DbConfig): Promise<Recipe> {
  if (database.type === 'sqlite3') {
    let file = await sqliteTemplate(false);
    let current = sqliteCurrent(file);
    // Made by a process that had loaded other migrations: made again by this one.
    if (!current) {
      file = await sqliteTemplate(true);
      current = sqliteCurrent(file);
    }
    return { ...sqliteRecipe(file), current };
  }
  const h = openDatabase({ ...database, table_prefix: TEMPLATE_PREFIX });
  let current: boolean;
  try {
    try {
      // migrate holds the database-wide lock of its prefix: parallel workers and runs build it once.
      if ((await migrate(h)).length > 0) await dropStaleTemplates(h, database);
    } catch {
      // A build cut short (a killed run) may have left a migration half done: start it over.
      await dropAll(h);
      await migrate(h);
    }
    current = await isCurrent(h);
  } finally {
    await h.close();
  }
  return { ...(await (database.type === 'postgres' ? postgresRecipe(database) : mysqlRecipe(database))), current };
}

/** The tables of other templates whose newest migration is older than STALE_MS. */
async function dropStaleTemplates(h: DbHandle, database: DbConfig): Promise<void> {
  const db = h.db.withoutPlugins() as unknown as Kysely<any>;
  const tables = (await introspectTables(db)).map((t) => t.name);
  const prefixes = new Set(tables.map((t) => /^(tpl[0-9a-f]{12}_)schema_migrations$/.exec(t)?.[1]).filter((p): p is string => p !== undefined && p !== TEMPLATE_PREFIX));
  for (const p of prefixes) {
    const row = await db.selectFrom(`${p}schema_migrations`).select(sql<number>`max(applied_at)`.as('at')).executeTakeFirst();
    if (Date.now() - Number(row?.at ?? 0) < STALE_MS) continue;
    const old = openDatabase({ ...database, table_prefix: p });
    await dropAll(old).finally(() => old.close());
  }
}

// ---- SQLite: a migrated file per key in the temp folder, its objects made again ----

function sqliteCurrent(file: string): boolean {
  // Read only: opening it as the server does would turn the template's journal to WAL.
  const db = new SQLite(file, { readonly: true });
  try {
    return sameVersions((db.prepare(`select version from "${TEMPLATE_PREFIX}schema_migrations"`).all() as Array<{ version: number }>).map((r) => r.version));
  } finally {
    db.close();
  }
}

async function sqliteTemplate(rebuild: boolean): Promise<string> {
  const dir = path.join(os.tmpdir(), 'atrium-test-templates');
  const file = path.join(dir, `sqlite-${TEMPLATE_PREFIX}.db`);
  if (existsSync(file) && !rebuild) return file;
  mkdirSync(dir, { recursive: true });
  // Built aside and renamed into place, so a parallel worker never reads half a template.
  const work = `${file}.${process.pid}.tmp`;
  rmSync(work, { force: true });
  const h = openDatabase(sqliteConfig(work, TEMPLATE_PREFIX));
  try {
    await migrate(h);
  } finally {
    await h.close();
  }
  const db = new SQLite(work);
  db.pragma('journal_mode = DELETE');
  db.close();
  // A rename over the old one: a worker copying from it keeps reading the file it opened.
  if (existsSync(file) && !rebuild) rmSync(work, { force: true });
  else renameSync(work, file);
  return file;
}

export function sqliteConfig(file: string, prefix: string): DbConfig {
  return { type: 'sqlite3', host: '', port: 0, user: '', password: '', name: '', db_file: file, table_prefix: prefix, ssl_mode: '', dsn: '' };
}

interface SqliteObject {
  type: string;
  name: string;
  sql: string;
}

function sqliteRecipe(file: string): Omit<Recipe, 'current'> {
  const db = new SQLite(file, { readonly: true });
  try {
    const objects = db.prepare("select type, name, sql from sqlite_master where sql is not null order by rowid").all() as SqliteObject[];
    const virtual = objects.filter((o) => o.type === 'table' && /^create virtual table/i.test(o.sql)).map((o) => o.name);
    // A virtual table makes its shadow tables itself; sqlite_sequence comes with the first AUTOINCREMENT table.
    const shadow = (name: string) => virtual.some((v) => name.startsWith(`${v}_`));
    const made = objects.filter((o) => !shadow(o.name) && o.name !== 'sqlite_sequence');
    const tables = made.filter((o) => o.type === 'table' && !virtual.includes(o.name) && isTemplate(o.name)).map((o) => o.name.slice(TEMPLATE_PREFIX.length));
    return { ddl: made.map((o) => o.sql), tables, serials: [], file };
  } finally {
    db.close();
  }
}

function cloneSqlite(template: string, file: string, prefix: string, ddl: string[], tables: string[]): void {
  if (existsSync(file)) throw new Error(`${file} exists already`);
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new SQLite(file);
  try {
    db.pragma('journal_mode = WAL');
    db.prepare('attach database ? as tpl').run(template);
    db.transaction(() => {
      for (const s of ddl) db.exec(s);
      for (const t of tables) db.exec(`insert into main."${prefix}${t}" select * from tpl."${TEMPLATE_PREFIX}${t}"`);
      const seq = db.prepare("select 1 from tpl.sqlite_master where name = 'sqlite_sequence'").get();
      if (seq) db.prepare('insert into main.sqlite_sequence (name, seq) select replace(name, ?, ?), seq from tpl.sqlite_sequence').run(TEMPLATE_PREFIX, prefix);
    })();
    db.exec('detach database tpl');
  } finally {
    db.close();
  }
}

// ---- PostgreSQL: tables, constraints and indexes from the catalogs, in one transaction ----

function pgClient(c: DbConfig): Pg.Client {
  const pg = require('pg') as typeof Pg;
  return new pg.Client({ host: c.host, port: c.port, user: c.user || undefined, password: c.password || undefined, database: c.name || undefined });
}

const pgIdent = (s: string) => `"${s.replaceAll('"', '""')}"`;

async function postgresRecipe(c: DbConfig): Promise<Omit<Recipe, 'current'>> {
  const client = pgClient(c);
  await client.connect();
  try {
    const q = async <T>(text: string, values: unknown[] = []) => (await client.query(text, values)).rows as T[];
    const rels = await q<{ oid: number; relname: string }>(
      `select c.oid, c.relname from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and starts_with(c.relname, $1) order by c.relname`,
      [TEMPLATE_PREFIX],
    );
    const ddl: string[] = [];
    const serials: Recipe['serials'] = [];
    for (const r of rels) {
      const table = r.relname.slice(TEMPLATE_PREFIX.length);
      const cols = await q<{ name: string; type: string; notnull: boolean; def: string | null; coll: string | null }>(
        `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as notnull,
           pg_get_expr(d.adbin, d.adrelid) as def,
           case when a.attcollation <> 0 and a.attcollation <> t.typcollation then (select collname from pg_collation where oid = a.attcollation) end as coll
         from pg_attribute a join pg_type t on t.oid = a.atttypid
         left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
         where a.attrelid = $1 and a.attnum > 0 and not a.attisdropped order by a.attnum`,
        [r.oid],
      );
      const parts = cols.map((col) => {
        const serial = col.def !== null && col.type === 'integer' && col.def === `nextval('${r.relname}_${col.name}_seq'::regclass)`;
        if (serial) serials.push({ table, column: col.name });
        let s = `${pgIdent(col.name)} ${serial ? 'serial' : col.type}`;
        if (col.coll) s += ` collate ${pgIdent(col.coll)}`;
        if (col.notnull && !serial) s += ' not null';
        if (col.def !== null && !serial) s += ` default ${col.def}`;
        return s;
      });
      const cons = await q<{ name: string; def: string }>(`select conname as name, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = $1 order by contype, conname`, [r.oid]);
      for (const k of cons) parts.push(`constraint ${pgIdent(k.name)} ${k.def}`);
      ddl.push(`create table ${pgIdent(r.relname)} (${parts.join(', ')})`);
      const idx = await q<{ def: string }>(
        `select pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class x on x.oid = i.indexrelid
         where i.indrelid = $1 and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid) order by x.relname`,
        [r.oid],
      );
      for (const i of idx) ddl.push(i.def);
      const trg = await q<{ def: string }>(`select pg_get_triggerdef(oid) as def from pg_trigger where tgrelid = $1 and not tgisinternal order by tgname`, [r.oid]);
      for (const t of trg) ddl.push(t.def);
    }
    return { ddl, tables: rels.map((r) => r.relname.slice(TEMPLATE_PREFIX.length)), serials };
  } finally {
    await client.end();
  }
}

async function clonePostgres(c: DbConfig, prefix: string, ddl: string[], recipe: Recipe): Promise<void> {
  const copy = recipe.tables.map((t) => `insert into ${pgIdent(prefix + t)} select * from ${pgIdent(TEMPLATE_PREFIX + t)}`);
  const seqs = recipe.serials.map(({ table, column }) => {
    const from = pgIdent(`${TEMPLATE_PREFIX}${table}_${column}_seq`);
    return `select setval('${prefix}${table}_${column}_seq', last_value, is_called) from ${from}`;
  });
  const client = pgClient(c);
  await client.connect();
  try {
    // No parameters: the simple query protocol runs the whole script in one round trip.
    await client.query(['begin', ...ddl, ...copy, ...seqs, 'commit'].join(';\n'));
  } finally {
    await client.end();
  }
}

// ---- MySQL / MariaDB: SHOW CREATE TABLE, in one multi-statement round trip ----

async function mysqlConnection(c: DbConfig): Promise<Mysql2.Connection> {
  const mysql = require('mysql2/promise') as typeof Mysql2;
  return mysql.createConnection({ host: c.host, port: c.port, user: c.user || 'root', password: c.password || undefined, database: c.name || undefined, multipleStatements: true, charset: 'utf8mb4' });
}

const myIdent = (s: string) => `\`${s.replaceAll('`', '``')}\``;

async function mysqlRecipe(c: DbConfig): Promise<Omit<Recipe, 'current'>> {
  const conn = await mysqlConnection(c);
  try {
    const [rows] = await conn.query('select table_name as name from information_schema.tables where table_schema = database() and table_type = ? and table_name like ? order by table_name', [
      'BASE TABLE',
      `${TEMPLATE_PREFIX.replaceAll('_', '\\_')}%`,
    ]);
    const names = (rows as Array<{ name: string }>).map((r) => r.name);
    const ddl: string[] = [];
    for (const n of names) {
      const [show] = await conn.query(`show create table ${myIdent(n)}`);
      // The counter follows the rows copied in; a fresh table has none.
      ddl.push(String((show as Array<Record<string, string>>)[0]!['Create Table']).replace(/ AUTO_INCREMENT=\d+/, ''));
    }
    return { ddl, tables: names.map((n) => n.slice(TEMPLATE_PREFIX.length)), serials: [] };
  } finally {
    await conn.end();
  }
}

async function cloneMysql(c: DbConfig, prefix: string, ddl: string[], tables: string[]): Promise<void> {
  // DDL commits by itself on MySQL; the copy follows once every table exists.
  const copy = tables.map((t) => `insert into ${myIdent(prefix + t)} select * from ${myIdent(TEMPLATE_PREFIX + t)}`);
  const conn = await mysqlConnection(c);
  try {
    await conn.query([...ddl, ...copy].join(';\n'));
  } finally {
    await conn.end();
  }
}
