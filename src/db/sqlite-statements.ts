import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Prepared statements kept per SQL text (the queries the code builds are a few hundred shapes). */
const MAX_STATEMENTS = 512;

/**
 * A better-sqlite3 database as Kysely's SQLite dialect sees it, with its prepared statements
 * kept: Kysely's driver prepares every statement again on every execution (parse and plan, some
 * 50–100 µs each), and a chunk of a resumable upload runs about ten. The statements are keyed by
 * their SQL text (parameters are bound at each run) and the least recently used is dropped past
 * MAX_STATEMENTS. A statement still iterating a result (`busy`) is not handed out again: that
 * call gets a fresh one. `onWrite` hears of every statement that is not a query (Kysely prepares
 * once per execution), for the WAL checkpointer (sqlite-checkpointer.ts).
 */
export function cachingStatements(db: SQLite.Database, onWrite?: () => void): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string): SqliteStatement {
      let stmt = cache.get(sql);
      if (stmt && !stmt.busy) {
        // Re-inserted: the Map's order is the order of last use.
        cache.delete(sql);
        cache.set(sql, stmt);
      } else {
        const fresh = db.prepare(sql);
        if (!stmt) {
          cache.set(sql, fresh);
          if (cache.size > MAX_STATEMENTS) cache.delete(cache.keys().next().value!);
        }
        stmt = fresh;
      }
      if (onWrite && !stmt.reader) onWrite();
      return stmt as unknown as SqliteStatement;
    },
    close(): void {
      cache.clear();
      db.close();
    },
  };
}
