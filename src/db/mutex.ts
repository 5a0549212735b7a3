import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { DbHandle } from './index.js';

/** A 32-bit key for PostgreSQL's advisory locks, from the table prefix (each prefix its own). */
export function lockId(prefix: string): number {
  let h = 0x41545249; // "ATRI"
  for (const ch of prefix) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return h;
}

/** Named database-wide locks besides the migrations' (which use the one-key form of lockId). */
const MUTEX_KEYS = { dav_locks: 1 } as const;
export type MutexName = keyof typeof MUTEX_KEYS;

/**
 * Runs `fn` in a transaction that holds a database-wide lock of this name, so that a
 * read-decide-write sequence is atomic across every process on the database: a transaction
 * advisory lock on PostgreSQL (released at the commit), GET_LOCK on MySQL/MariaDB (taken on the
 * connection before the transaction begins and released after it commits, so the next holder
 * reads what it wrote), and on SQLite the transaction itself (one process holds the database:
 * cli/server-lock.ts, and its one connection runs one transaction at a time).
 */
export async function withDbMutex<T>(h: DbHandle, name: MutexName, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (h.type !== 'mysql') {
    return h.db.transaction().execute(async (trx) => {
      if (h.type === 'postgres') await sql`select pg_advisory_xact_lock(${lockId(h.prefix)}, ${MUTEX_KEYS[name]})`.execute(trx);
      return fn(trx);
    });
  }
  const lockName = `atrium_${name}_${h.prefix}`;
  return h.db.connection().execute(async (conn) => {
    const got = await sql<{ got: number | null }>`select get_lock(${lockName}, 30) as got`.execute(conn);
    if (Number(got.rows[0]?.got) !== 1) throw new Error(`the database lock ${name} was not granted within 30 s`);
    try {
      return await conn.transaction().execute(fn);
    } finally {
      await sql`select release_lock(${lockName})`.execute(conn);
    }
  });
}
