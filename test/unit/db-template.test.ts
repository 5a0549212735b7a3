import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, describe, expect, test } from 'vitest';
import { type DbHandle, openDatabase } from '../../src/db/index.js';
import { dropAll, MIGRATIONS, migrate } from '../../src/db/migrations.js';
import { BACKENDS, type Backend } from '../helpers/backends.js';
import { cloneMigrated, TEMPLATE_PREFIX, templateKey } from '../helpers/db-template.js';

// The test servers' databases are copies of a template the migrations made once per engine
// (test/helpers/db-template.ts). Here a copy must be the very schema a fresh migration makes:
// every table, column (type, nullability, default, collation), key, index, trigger, sequence and
// row, described by the engine's own catalogs, the prefix aside. A migration adding a kind of
// object the copy does not carry fails here, not in some later test.

type AnyDb = Kysely<any>;
const P = '<P>';

interface Described {
  objects: string[];
  rows: Record<string, unknown[]>;
}

const norm = (prefix: string, v: unknown) => JSON.parse(JSON.stringify(v).replaceAll(prefix, P));

async function describeSchema(h: DbHandle): Promise<Described> {
  const db = h.db.withoutPlugins() as unknown as AnyDb;
  const prefix = h.prefix;
  const objects: string[] = [];
  const mine = (n: string) => n.startsWith(prefix);
  if (h.type === 'sqlite3') {
    const rows = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`select type, name, tbl_name, sql from sqlite_master order by type, name`.execute(db);
    for (const r of rows.rows) if (mine(r.tbl_name) || r.name === 'sqlite_sequence') objects.push(JSON.stringify(r));
  } else if (h.type === 'postgres') {
    const cols = await sql`select table_name, column_name, ordinal_position, data_type, character_maximum_length, is_nullable, column_default, collation_name
      from information_schema.columns where table_schema = current_schema() and starts_with(table_name, ${prefix}) order by table_name, ordinal_position`.execute(db);
    const cons = await sql`select c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid) as def from pg_constraint k join pg_class c on c.oid = k.conrelid
      where c.relnamespace = current_schema()::regnamespace and starts_with(c.relname, ${prefix}) order by c.relname, k.conname`.execute(db);
    const idx = await sql`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() and starts_with(tablename, ${prefix}) order by tablename, indexname`.execute(db);
    const trg = await sql`select c.relname, t.tgname, pg_get_triggerdef(t.oid) as def from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where not t.tgisinternal and starts_with(c.relname, ${prefix}) order by c.relname, t.tgname`.execute(db);
    const seq = await sql`select sequencename, data_type, start_value, increment_by, max_value, cycle, last_value from pg_sequences
      where schemaname = current_schema() and starts_with(sequencename, ${prefix}) order by sequencename`.execute(db);
    const owned = await sql`select c.relname, a.attname, pg_get_serial_sequence(quote_ident(c.relname), a.attname) as seq from pg_attribute a join pg_class c on c.oid = a.attrelid
      where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and starts_with(c.relname, ${prefix}) and a.attnum > 0 and not a.attisdropped order by c.relname, a.attname`.execute(db);
    for (const r of [...cols.rows, ...cons.rows, ...idx.rows, ...trg.rows, ...seq.rows, ...owned.rows]) objects.push(JSON.stringify(r));
  } else {
    const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = database() and left(table_name, ${prefix.length}) = ${prefix} order by table_name`.execute(db);
    for (const t of tables.rows) {
      const show = await sql<Record<string, string>>`show create table ${sql.table(t.name)}`.execute(db);
      objects.push(show.rows[0]!['Create Table']!);
    }
    const cols = await sql`select table_name, column_name, ordinal_position, column_type, is_nullable, column_default, collation_name, extra
      from information_schema.columns where table_schema = database() and left(table_name, ${prefix.length}) = ${prefix} order by table_name, ordinal_position`.execute(db);
    const trg = await sql`select trigger_name, event_object_table, action_statement from information_schema.triggers where trigger_schema = database() and left(event_object_table, ${prefix.length}) = ${prefix}`.execute(db);
    for (const r of [...cols.rows, ...trg.rows]) objects.push(JSON.stringify(r));
  }
  const rows: Record<string, unknown[]> = {};
  for (const t of await db.introspection.getTables()) {
    if (!mine(t.name) || /_fts(_|$)/.test(t.name)) continue;
    const all = await db.selectFrom(t.name).selectAll().execute();
    // When a migration ran differs (the template's is older); what it wrote does not.
    rows[t.name] = all.map((r) => JSON.stringify(Object.entries(r).filter(([k]) => k !== 'applied_at'))).sort();
  }
  return norm(prefix, { objects: objects.sort(), rows });
}

function config(backend: Backend, prefix: string, dir: string) {
  const c = backend.database(prefix, dir);
  return backend.name === 'sqlite' ? { ...c, db_file: path.join(dir, 'data.db') } : c;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('the template is named after the migration sources', () => {
  const sources = ['src/db/migrations.ts', 'src/db/search-ddl.ts'].map((f) => readFileSync(f, 'utf8'));
  expect(TEMPLATE_PREFIX).toBe(`tpl${templateKey(sources)}_`);
  // Any change to a migration names another template (rebuilt, never the old one reused).
  expect(templateKey([`${sources[0]} `, sources[1]!])).not.toBe(templateKey(sources));
});

describe.each(BACKENDS)('a cloned schema is the migrated one on $name', (backend) => {
  const handles: DbHandle[] = [];
  const open = async (tag: string, how: 'migrate' | 'clone') => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-tpl-test-'));
    dirs.push(dir);
    const c = config(backend, `${tag}${Math.random().toString(36).slice(2, 8)}_`, dir);
    if (how === 'clone') expect(await cloneMigrated(c), 'the template records the migrations this run loaded (were they edited during the run?)').toBe(true);
    const h = openDatabase(c);
    handles.push(h);
    if (how === 'migrate') expect(await migrate(h)).toEqual(MIGRATIONS.map((m) => m.version));
    return h;
  };
  afterAll(async () => {
    for (const h of handles) {
      await dropAll(h);
      await h.close();
    }
  });

  test('same tables, columns, keys, indexes, triggers and rows; migrate then applies nothing', async () => {
    const fresh = await open('f', 'migrate');
    const clone = await open('c', 'clone');
    const a = await describeSchema(fresh);
    const b = await describeSchema(clone);
    expect(a.objects.length).toBeGreaterThan(30);
    expect(Object.keys(a.rows)).toContain(`${P}schema_migrations`);
    expect(b).toEqual(a);
    expect(await migrate(clone)).toEqual([]);
  });

  test('the comparison sees a missing index', async () => {
    const fresh = await open('g', 'migrate');
    const clone = await open('d', 'clone');
    const raw = clone.db.withoutPlugins() as unknown as AnyDb;
    const index = sql.table(`${clone.prefix}sessions_expires`);
    await (backend.name === 'mysql' ? sql`drop index ${index} on ${sql.table(`${clone.prefix}sessions`)}` : sql`drop index ${index}`).execute(raw);
    expect((await describeSchema(clone)).objects).not.toEqual((await describeSchema(fresh)).objects);
  });
});
