import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { type InsertQueryBuilder, type InsertResult, Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import type * as Mysql2 from 'mysql2';
import type Pg from 'pg';
import type { Config, DbType } from '../config/defaults.js';
import { TablePrefixPlugin, withTablePrefix } from './prefix-plugin.js';
import { QueryCounterPlugin } from './query-counter.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { SqliteReader, SqliteReaderDialect } from './sqlite-reader.js';
import { cachingStatements } from './sqlite-statements.js';
import type { Database } from './schema.js';
import { lazyRequire } from '../util/lazy-require.js';

const loadMysql = lazyRequire<typeof Mysql2>('mysql2');
const loadPg = lazyRequire<typeof Pg>('pg');

function pgModule(): typeof Pg {
  const pg = loadPg();
  // BIGINT (int8) columns hold sizes and millisecond times, all below 2^53: read them as numbers.
  pg.types.setTypeParser(20, (v: string) => Number(v));
  // DOUBLE PRECISION (progress) as a number too.
  pg.types.setTypeParser(701, (v: string) => Number(v));
  return pg;
}

export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  type: DbType;
  prefix: string;
  /** Queries answered since the database was opened. */
  queries(): number;
  /** SQLite opened with `checkpointer`: the worker that checkpoints its WAL. */
  checkpointer?: SqliteCheckpointer;
  /**
   * Where long read-only queries go (the search): on SQLite with a file, a connection of its own
   * in a worker thread (sqlite-reader.ts), off the event loop; otherwise (PostgreSQL and MySQL
   * are asynchronous already, or the worker failed) the main database.
   */
  readDb(): Db;
  close(): Promise<void>;
}

/**
 * The PostgreSQL pool: 10 connections; a connection that is not made within 30 s is an error
 * (pg's default waits for ever: a connection attempt left unanswered would hold every query
 * waiting for it), and TCP keep-alive finds a server gone without a word.
 */
const PG_POOL = { max: 10, connectionTimeoutMillis: 30_000, keepAlive: true };

function postgresPool(c: Config['database']): Pg.Pool {
  const pg = pgModule();
  if (c.dsn) return new pg.Pool({ connectionString: c.dsn, ...PG_POOL });
  return new pg.Pool({
    host: c.host || '127.0.0.1',
    port: c.port || 5432,
    user: c.user || undefined,
    password: c.password || undefined,
    database: c.name || undefined,
    ssl: c.ssl_mode && c.ssl_mode !== 'disable' ? { rejectUnauthorized: c.ssl_mode === 'verify-full' } : undefined,
    ...PG_POOL,
  });
}

function mysqlPool(c: Config['database']) {
  const { createPool: createMysqlPool } = loadMysql();
  if (c.dsn) return createMysqlPool({ uri: c.dsn, connectionLimit: 10, supportBigNumbers: true, bigNumberStrings: false });
  return createMysqlPool({
    host: c.host || '127.0.0.1',
    port: c.port || 3306,
    user: c.user || 'root',
    password: c.password || undefined,
    database: c.name || undefined,
    ssl: c.ssl_mode && c.ssl_mode !== 'false' && c.ssl_mode !== 'disable' ? { rejectUnauthorized: c.ssl_mode !== 'skip-verify' } : undefined,
    connectionLimit: 10,
    supportBigNumbers: true,
    bigNumberStrings: false,
    charset: 'utf8mb4',
  });
}

export interface OpenDatabaseOptions {
  /** SQLite: WAL checkpoints in a worker thread, off the event loop (the server; sqlite-checkpointer.ts). */
  checkpointer?: boolean;
}

export function openDatabase(config: Config['database'], opts: OpenDatabaseOptions = {}): DbHandle {
  const counter = new QueryCounterPlugin();
  const prefix = config.table_prefix;
  const plugins = [...(prefix ? [new TablePrefixPlugin()] : []), counter];
  let db: Db;
  let checkpointer: SqliteCheckpointer | undefined;
  let reader: { kysely: Db; worker: SqliteReader } | undefined;
  if (config.type === 'postgres') {
    db = new Kysely<Database>({ dialect: withTablePrefix(new PostgresDialect({ pool: postgresPool(config) }), prefix), plugins });
  } else if (config.type === 'mysql') {
    db = new Kysely<Database>({ dialect: withTablePrefix(new MysqlDialect({ pool: mysqlPool(config) }), prefix), plugins });
  } else {
    mkdirSync(path.dirname(config.db_file), { recursive: true });
    const sqlite = new SQLite(config.db_file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 10000');
    sqlite.pragma('synchronous = NORMAL');
    const worker = opts.checkpointer && !sqlite.memory ? new SqliteCheckpointer(sqlite, path.resolve(config.db_file)) : undefined;
    checkpointer = worker;
    const onWrite = worker && (() => worker.noteWrite());
    db = new Kysely<Database>({ dialect: withTablePrefix(new SqliteDialect({ database: cachingStatements(sqlite, onWrite) }), prefix), plugins });
    if (!sqlite.memory) {
      const worker = new SqliteReader(path.resolve(config.db_file));
      reader = { worker, kysely: new Kysely<Database>({ dialect: withTablePrefix(new SqliteReaderDialect(worker), prefix), plugins }) };
    }
  }
  return {
    db,
    type: config.type,
    prefix: config.table_prefix,
    queries: () => counter.count,
    checkpointer,
    readDb: () => (reader?.worker.usable ? reader.kysely : db),
    close: async () => {
      await checkpointer?.stop();
      await reader?.kysely.destroy();
      await db.destroy();
    },
  };
}

/** Inserts one row and returns its generated id on every back end (MySQL has no RETURNING). */
export async function insertReturningId<T extends keyof Database>(
  handle: DbHandle,
  query: InsertQueryBuilder<Database, T, InsertResult>,
): Promise<number> {
  if (handle.type === 'mysql') {
    const result = await query.executeTakeFirstOrThrow();
    return Number(result.insertId);
  }
  const row = (await query.returning('id' as never).executeTakeFirstOrThrow()) as unknown as { id: number };
  return Number(row.id);
}

export const bool = (v: number | boolean | null | undefined): boolean => Boolean(v);
export const bit = (v: boolean | undefined): number => (v ? 1 : 0);
