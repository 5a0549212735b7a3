import net from 'node:net';
import type { Config } from '../../src/config/defaults.js';

export interface Backend {
  name: 'sqlite' | 'postgres' | 'mysql';
  /** The `database` section for a test instance using `prefix` (SQLite: a file in `dataDir`). */
  database(prefix: string, dataDir: string): Config['database'];
}

const base = { host: '', port: 0, user: '', password: '', name: '', db_file: 'data.db', ssl_mode: '', dsn: '' };

const SQLITE: Backend = {
  name: 'sqlite',
  database: (prefix) => ({ ...base, type: 'sqlite3', table_prefix: prefix }),
};

const POSTGRES: Backend = {
  name: 'postgres',
  database: (prefix) => ({
    ...base,
    type: 'postgres',
    host: process.env.ATRIUM_TEST_PG_HOST ?? '127.0.0.1',
    port: Number(process.env.ATRIUM_TEST_PG_PORT ?? 5432),
    user: process.env.ATRIUM_TEST_PG_USER ?? 'postgres',
    name: process.env.ATRIUM_TEST_PG_DB ?? 'test',
    table_prefix: prefix,
  }),
};

const MYSQL: Backend = {
  name: 'mysql',
  database: (prefix) => ({
    ...base,
    type: 'mysql',
    host: process.env.ATRIUM_TEST_MYSQL_HOST ?? '127.0.0.1',
    port: Number(process.env.ATRIUM_TEST_MYSQL_PORT ?? 3306),
    user: process.env.ATRIUM_TEST_MYSQL_USER ?? 'root',
    name: process.env.ATRIUM_TEST_MYSQL_DB ?? 'test',
    table_prefix: prefix,
  }),
};

export function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1500, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * The back ends to run database tests on: SQLite always; PostgreSQL and MariaDB/MySQL when
 * their servers answer. Under CI a missing server is an error, never a silent skip.
 */
export async function availableBackends(): Promise<Backend[]> {
  const list: Backend[] = [SQLITE];
  for (const b of [POSTGRES, MYSQL]) {
    const d = b.database('x_', '');
    if (await reachable(d.host, d.port)) list.push(b);
    else if (process.env.CI) throw new Error(`CI needs ${b.name} at ${d.host}:${d.port}, which does not answer`);
    else console.warn(`\n*** SKIPPING ${b.name} tests: no server at ${d.host}:${d.port} ***\n`);
  }
  const only = process.env.ATRIUM_TEST_BACKENDS?.split(',');
  return only ? list.filter((b) => only.includes(b.name)) : list;
}

/**
 * Every engine that answers: for the suites where the database decides something (the
 * repositories, migrations, the cluster, uploads' claims, shares' counters, the search, locks),
 * and test/api/fs-write.test.ts as the one full API suite on each engine.
 */
export const BACKENDS = await availableBackends();

/**
 * One engine (SQLite, unless ATRIUM_TEST_BACKENDS leaves it out) for the suites where the database
 * is incidental: the fronts (FTP, SFTP, WebDAV, S3), reading, raw links, access rules, security
 * probes. ATRIUM_TEST_ALL_ENGINES=1 runs them on every engine too.
 */
export const ONE_BACKEND: Backend[] = process.env.ATRIUM_TEST_ALL_ENGINES === '1' ? BACKENDS : BACKENDS.slice(0, 1);
