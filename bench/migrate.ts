// Area `migrate` (run only when named: it needs PostgreSQL and MariaDB): `atrium migrate` moving
// an installation whose search index holds BENCH_MIGRATE_ROWS rows (default 1 000 000; quick
// 50 000) SQLite → PostgreSQL → MySQL → SQLite, each hop timed as a whole (schema, copy, and the
// verification that reads both sides back). Every hop must end with `verified: N rows`, N the
// installation's total. Databases: PostgreSQL 127.0.0.1:5432 db `test`, MariaDB 127.0.0.1:3306
// db `test`, under a table prefix of the run's own that is dropped at the end.

import os from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { loadConfig } from '../src/config/load.js';
import { bootstrap, openCore } from '../src/core.js';
import { openDatabase } from '../src/db/index.js';
import { dropAll } from '../src/db/migrations.js';
import { makeTempDir, removeTempDir, runCommand } from './lib/proc.js';
import { nowMs } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const PG_DSN = process.env.BENCH_PG_DSN ?? 'postgres://postgres@127.0.0.1:5432/test';
const MY_DSN = process.env.BENCH_MYSQL_DSN ?? 'mysql://root@127.0.0.1:3306/test';
const loadavg = () => os.loadavg().map((v) => v.toFixed(2)).join(' / ');

/** Fills the index table directly: a synthetic tree of folders of 100 files. */
async function fillIndex(dataDir: string, rows: number): Promise<void> {
  const core = openCore(loadConfig(dataDir), { quiet: true });
  try {
    await bootstrap(core, { adminPassword: 'bench-pass' });
    const db = core.db.db.withoutPlugins() as unknown as Kysely<any>;
    const table = `${core.db.prefix}search_nodes`;
    const batch: Array<Record<string, unknown>> = [];
    const flush = async () => {
      if (batch.length) await db.insertInto(table).values(batch.splice(0)).execute();
    };
    await sql`begin`.execute(db);
    for (let i = 0; i < rows; i++) {
      const dir = Math.floor(i / 100);
      batch.push({ parent: `/data/d${Math.floor(dir / 100)}/d${dir}`, name: `file-${i}.bin`, is_dir: 0, size: i * 37, modified: 1_700_000_000_000 + i });
      if (batch.length === 500) await flush();
    }
    await flush();
    await sql`commit`.execute(db);
  } finally {
    await core.close();
  }
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const rows = Number(process.env.BENCH_MIGRATE_ROWS) || (ctx.quick ? 50_000 : 1_000_000);
  const prefix = `bench${Math.random().toString(36).slice(2, 8)}_`;
  result.parameters = { index_rows: rows, hops: 'SQLite → PostgreSQL → MySQL → SQLite', prefix };
  result.environment = { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`, loadavg_at_start: loadavg() };
  const tmp = makeTempDir('atrium-bench-migrate-');
  const bin = path.join(ctx.repoRoot, 'bin', 'atrium.js');
  try {
    const data = path.join(tmp, 'data');
    ctx.log(`filling a SQLite index with ${rows} rows`);
    await fillIndex(data, rows);
    const hops: Array<[string, string, string]> = [
      ['SQLite → PostgreSQL', PG_DSN, prefix],
      ['PostgreSQL → MySQL', MY_DSN, prefix],
      ['MySQL → SQLite', 'sqlite:back.db', 'x_'],
    ];
    const samples: Record<string, number> = {};
    let total: number | undefined;
    for (const [name, to, hopPrefix] of hops) {
      if (ctx.signal.aborted) break;
      ctx.log(name);
      const started = nowMs();
      const out = await runCommand(`migrate ${name}`, process.execPath, [bin, 'migrate', '--to', to, '--prefix', hopPrefix, '--switch', '--data', data], {
        env: { ...process.env, ATRIUM_LOG_ENABLE: 'false' },
        timeoutMs: 60 * 60_000,
      });
      const seconds = (nowMs() - started) / 1000;
      const verified = /verified: (\d+) rows/.exec(out.output);
      if (out.code !== 0 || !verified) {
        result.errors.push({ benchmark: name, subject: 'atrium', message: out.output.split('\n').slice(-4).join(' / ') });
        result.summary.push({ benchmark: `migrate ${name}`, atrium: null, unit: 's', error: 'failed' });
        break;
      }
      total = Number(verified[1]);
      samples[name] = seconds;
      result.summary.push({ benchmark: `migrate ${name}, ${total} rows, copy + verification`, atrium: Number(seconds.toFixed(1)), unit: 's' });
    }
    result.details.push({
      title: 'each hop',
      columns: ['hop', 'seconds', 'rows', 'rows/s'],
      rows: Object.entries(samples).map(([hop, s]) => [hop, Number(s.toFixed(1)), total ?? null, total ? Math.round(total / s) : null]),
    });
    result.raw.seconds = samples;
    result.environment.loadavg_at_end = `${loadavg()} (other work on the machine skews the figures)`;
  } finally {
    for (const dsn of [PG_DSN, MY_DSN]) {
      const type = dsn.startsWith('postgres') ? ('postgres' as const) : ('mysql' as const);
      const h = openDatabase({ type, dsn, host: '', port: 0, user: '', password: '', name: '', db_file: '', table_prefix: prefix, ssl_mode: '' });
      await dropAll(h).catch(() => undefined);
      await h.close();
    }
    removeTempDir(tmp);
  }
}

export const migrateBench: BenchModule = {
  area: 'migrate',
  title: 'atrium migrate: SQLite → PostgreSQL → MySQL → SQLite',
  budgetMs: (quick) => (quick ? 10 : 60) * 60_000,
  onlyWhenNamed: true,
  run,
};
