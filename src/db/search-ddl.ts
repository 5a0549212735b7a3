import { type Kysely, sql } from 'kysely';
import type { DbType } from '../config/defaults.js';

type AnyDb = Kysely<any>;

/**
 * The secondary structures of `search_nodes`: the (parent, name) and name B-trees, on SQLite the
 * triggers that keep the FTS5 trigram table in step, on PostgreSQL the pg_trgm GIN index. A full
 * build drops them, writes the rows, and makes them again in one pass (far faster than updating
 * them row by row); the migration makes them once for an empty table.
 */
export async function createSearchIndexes(db: AnyDb, type: DbType, prefix: string): Promise<void> {
  const name = (n: string) => sql.raw(`${prefix}${n}`);
  const nodes = name('search_nodes');
  if (type === 'mysql') {
    // MySQL has no CREATE INDEX IF NOT EXISTS: only the migration (an empty table) makes these.
    await sql`create index ${name('search_nodes_parent')} on ${nodes} (parent(700), name(64))`.execute(db);
    await sql`create index ${name('search_nodes_name')} on ${nodes} (name(191))`.execute(db);
    return;
  }
  await sql`create index if not exists ${name('search_nodes_parent')} on ${nodes} (parent, name)`.execute(db);
  await sql`create index if not exists ${name('search_nodes_name')} on ${nodes} (name)`.execute(db);
  if (type === 'sqlite3') {
    const fts = name('search_fts');
    await sql`create trigger if not exists ${name('search_nodes_ai')} after insert on ${nodes} begin insert into ${fts}(rowid, name) values (new.id, new.name); end`.execute(db);
    await sql`create trigger if not exists ${name('search_nodes_ad')} after delete on ${nodes} begin insert into ${fts}(${fts}, rowid, name) values ('delete', old.id, old.name); end`.execute(db);
    await sql`create trigger if not exists ${name('search_nodes_au')} after update of name on ${nodes} begin insert into ${fts}(${fts}, rowid, name) values ('delete', old.id, old.name); insert into ${fts}(rowid, name) values (new.id, new.name); end`.execute(
      db,
    );
  }
  if (type === 'postgres') {
    // Without pg_trgm (no privilege to create it) searches still work, scanning the table.
    await sql`create index if not exists ${name('search_nodes_name_trgm')} on ${nodes} using gin (name gin_trgm_ops)`.execute(db).catch(() => undefined);
  }
}

/** Drops what createSearchIndexes made (not on MySQL, where rows are written with the indexes in place). */
export async function dropSearchIndexes(db: AnyDb, type: DbType, prefix: string): Promise<void> {
  if (type === 'mysql') return;
  const name = (n: string) => sql.raw(`${prefix}${n}`);
  if (type === 'sqlite3') {
    for (const t of ['search_nodes_ai', 'search_nodes_ad', 'search_nodes_au']) await sql`drop trigger if exists ${name(t)}`.execute(db);
  }
  for (const i of ['search_nodes_parent', 'search_nodes_name', 'search_nodes_name_trgm']) await sql`drop index if exists ${name(i)}`.execute(db);
}

/** SQLite: re-reads every row into the FTS5 table (after rows were written without the triggers). */
export async function rebuildFts(db: AnyDb, prefix: string): Promise<void> {
  const fts = sql.raw(`${prefix}search_fts`);
  await sql`insert into ${fts}(${fts}) values ('rebuild')`.execute(db);
}
