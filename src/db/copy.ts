// Copying a whole installation's database to another back end (`atrium migrate --to DSN`):
// every table of the source's prefix, found by introspection (so tables added by later
// migrations come along), row for row with their ids, then verified by row counts and a
// SHA-256 checksum of each table's rows read back from both sides.

import { createHash } from 'node:crypto';
import { type Kysely, sql, type TableMetadata } from 'kysely';
import type { DbHandle } from './index.js';

type AnyDb = Kysely<any>;

/** Rows per read and per insert (well under every engine's bound-parameter limit). */
const CHUNK = 500;

/**
 * Kept by the migrations themselves on each side; not data: the applied migrations, the
 * cluster's state counters (seeded by their migration; a copy's processes start from its own),
 * and the login throttle's short-lived counters.
 */
const SKIPPED = new Set(['schema_migrations', 'state_versions', 'login_failures']);

export interface TableInfo {
  /** Name without the prefix. */
  name: string;
  columns: string[];
  /** `id` when the table has one (read in id order, in chunks), else its first column. */
  key: string;
  numericKey: boolean;
}

export interface TableCheck {
  name: string;
  rows: number;
  sha256: string;
}

const raw = (h: DbHandle): AnyDb => h.db.withoutPlugins() as unknown as AnyDb;

/**
 * The data tables of `h`'s prefix. Derived structures are left out: SQLite virtual tables (the
 * search index's FTS5 table) and their shadow tables, which the target's triggers refill.
 */
export async function dataTables(h: DbHandle): Promise<TableInfo[]> {
  const db = raw(h);
  const tables = await introspectTables(db);
  let schema: string | undefined;
  if (h.type === 'postgres') schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s;
  const virtual: string[] = [];
  if (h.type === 'sqlite3') {
    const rows = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and sql like 'CREATE VIRTUAL TABLE%'`.execute(db);
    virtual.push(...rows.rows.map((r) => r.name));
  }
  return tables
    .filter((t) => !t.isView && t.name.startsWith(h.prefix) && (schema === undefined || t.schema === schema))
    .filter((t) => !virtual.some((v) => t.name === v || t.name.startsWith(`${v}_`)))
    .map((t) => {
      const columns = t.columns.map((c) => c.name).sort();
      const id = t.columns.find((c) => c.name === 'id');
      return {
        name: t.name.slice(h.prefix.length),
        columns,
        key: id ? 'id' : t.columns[0]!.name,
        numericKey: id !== undefined && /int|serial/i.test(id.dataType),
      };
    })
    .filter((t) => !SKIPPED.has(t.name))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * The database's tables, as Kysely's introspection reads them. On a database other installations
 * (or test runs) share, a table dropped between the catalog listing and the reading of its
 * columns fails the whole read ("relation … does not exist"): it is read again, a few times.
 */
export async function introspectTables(db: AnyDb): Promise<TableMetadata[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.introspection.getTables();
    } catch (err) {
      const gone = /does not exist|doesn't exist|no such table/i.test((err as Error).message);
      if (!gone || attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** Reads a table's rows in key order, chunk by chunk. */
async function* readRows(h: DbHandle, t: TableInfo): AsyncGenerator<Array<Record<string, unknown>>> {
  const db = raw(h);
  const table = `${h.prefix}${t.name}`;
  if (!t.numericKey) {
    // Text keys sort differently per engine and collation: read all, order byte-wise here.
    const rows = await db.selectFrom(table).selectAll().execute();
    rows.sort((a, b) => {
      const x = String(a[t.key]);
      const y = String(b[t.key]);
      return x < y ? -1 : x > y ? 1 : 0;
    });
    for (let i = 0; i < rows.length; i += CHUNK) yield rows.slice(i, i + CHUNK);
    return;
  }
  let last: number | undefined;
  for (;;) {
    let q = db.selectFrom(table).selectAll();
    if (last !== undefined) q = q.where(t.key, '>', last);
    const rows = await q.orderBy(t.key).limit(CHUNK).execute();
    if (rows.length === 0) return;
    yield rows;
    last = Number(rows[rows.length - 1]![t.key]);
  }
}

/** One value as the same text on every engine (numbers may come back as numeric strings). */
function canonical(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.getTime();
  if (Buffer.isBuffer(v)) return v.toString('base64');
  return v;
}

/** Row count and checksum of a table: rows in key order, columns in name order. */
export async function checkTable(h: DbHandle, t: TableInfo): Promise<TableCheck> {
  const hash = createHash('sha256');
  let rows = 0;
  for await (const chunk of readRows(h, t)) {
    for (const row of chunk) {
      hash.update(`${JSON.stringify(t.columns.map((c) => canonical(row[c])))}\n`);
      rows++;
    }
  }
  return { name: t.name, rows, sha256: hash.digest('hex') };
}

/** The tables of `h` that hold rows (a migration target must have none). */
export async function nonEmptyTables(h: DbHandle): Promise<string[]> {
  const out: string[] = [];
  for (const t of await dataTables(h)) {
    const row = await raw(h).selectFrom(`${h.prefix}${t.name}`).select(sql<number>`count(*)`.as('n')).executeTakeFirst();
    if (Number(row?.n ?? 0) > 0) out.push(t.name);
  }
  return out;
}

/**
 * Copies every row of every data table of `from` into `to` (whose schema is already created
 * and empty), then moves PostgreSQL's id sequences past the copied ids.
 */
export async function copyTables(from: DbHandle, to: DbHandle, tables: TableInfo[], onTable?: (name: string, rows: number) => void): Promise<void> {
  const target = raw(to);
  const targetColumns = new Map((await dataTables(to)).map((t) => [t.name, new Set(t.columns)]));
  for (const t of tables) {
    const cols = targetColumns.get(t.name);
    if (!cols) throw new Error(`the target has no table ${to.prefix}${t.name}`);
    const missing = t.columns.filter((c) => !cols.has(c));
    if (missing.length > 0) throw new Error(`the target's table ${t.name} has no column ${missing.join(', ')}`);
    let copied = 0;
    for await (const chunk of readRows(from, t)) {
      const rows = chunk.map((r) => Object.fromEntries(t.columns.map((c) => [c, canonical(r[c])])));
      await target.insertInto(`${to.prefix}${t.name}`).values(rows).execute();
      copied += rows.length;
    }
    if (to.type === 'postgres' && t.numericKey) {
      const table = `${to.prefix}${t.name}`;
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce(max(id), 1), max(id) is not null) from ${sql.table(table)}`.execute(target);
    }
    onTable?.(t.name, copied);
  }
}
