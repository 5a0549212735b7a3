import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { bootstrap, openCore } from '../src/core.js';
import { openDatabase } from '../src/db/index.js';
import { dropAll } from '../src/db/migrations.js';
import { reachable } from './helpers/backends.js';
import { atrium, freePort, startServerProcess } from './helpers/process.js';

const PG = { host: process.env.ATRIUM_TEST_PG_HOST ?? '127.0.0.1', port: Number(process.env.ATRIUM_TEST_PG_PORT ?? 5432), user: process.env.ATRIUM_TEST_PG_USER ?? 'postgres', db: process.env.ATRIUM_TEST_PG_DB ?? 'test' };
const MY = { host: process.env.ATRIUM_TEST_MYSQL_HOST ?? '127.0.0.1', port: Number(process.env.ATRIUM_TEST_MYSQL_PORT ?? 3306), user: process.env.ATRIUM_TEST_MYSQL_USER ?? 'root', db: process.env.ATRIUM_TEST_MYSQL_DB ?? 'test' };
const PG_DSN = `postgres://${PG.user}@${PG.host}:${PG.port}/${PG.db}`;
const MY_DSN = `mysql://${MY.user}@${MY.host}:${MY.port}/${MY.db}`;

/** A prefix of this run's own, so parallel tests on the shared servers never meet. */
const PREFIX = `mig${Math.random().toString(36).slice(2, 8)}_`;
const servers = (await reachable(PG.host, PG.port)) && (await reachable(MY.host, MY.port));
if (!servers && process.env.CI) throw new Error('the migrate test needs PostgreSQL and MariaDB (CI starts them)');

/** Every table of a SQLite file with the prefix, rows sorted, the tables the migrations keep themselves aside (db/copy.ts SKIPPED). */
function snapshot(file: string, prefix: string): Record<string, unknown[]> {
  const db = new SQLite(file, { readonly: true });
  try {
    const tables = (db.prepare(`select name from sqlite_master where type = 'table' and name like ? and sql not like 'CREATE VIRTUAL%' order by name`).all(`${prefix}%`) as Array<{ name: string }>)
      .map((t) => t.name)
      .filter((n) => !n.includes('search_fts') && n !== `${prefix}schema_migrations` && n !== `${prefix}state_versions`);
    return Object.fromEntries(tables.map((t) => [t.slice(prefix.length), db.prepare(`select * from "${t}" order by 1`).all()]));
  } finally {
    db.close();
  }
}

const dirs: string[] = [];
afterAll(async () => {
  if (servers) {
    for (const database of [
      { type: 'postgres' as const, dsn: PG_DSN },
      { type: 'mysql' as const, dsn: MY_DSN },
    ]) {
      const h = openDatabase({ ...database, host: '', port: 0, user: '', password: '', name: '', db_file: '', table_prefix: PREFIX, ssl_mode: '' });
      await dropAll(h).catch(() => undefined);
      await h.close();
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!servers)('atrium migrate', () => {
  it('moves an installation SQLite → PostgreSQL → MySQL → SQLite with identical data; the server runs on the PostgreSQL copy', async () => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'atrium-migrate-'));
    dirs.push(data);
    // An installation with something in every table: users, storages, metas, SSH keys,
    // sessions, settings, tasks' table left empty, and a search index.
    await atrium('admin', 'set', 'admin-pass-1', '--data', data);
    await atrium('user', 'add', 'ann', 'ann-pass-1', '--permission', '8', '--data', data);
    const media = path.join(data, 'media');
    mkdirSync(path.join(media, 'sub'), { recursive: true });
    for (let i = 0; i < 30; i++) writeFileSync(path.join(media, 'sub', `f${i}.txt`), `${i}`);
    await atrium('storage', 'add', '/media', 'Local', '--set', `root_folder_path=${media}`, '--remark', 'näive ünïcode ✓', '--data', data);
    const core = openCore(loadConfig(data), { quiet: true });
    try {
      await bootstrap(core);
      await core.metas.create({ path: '/media', password: 'pw', p_sub: true, write: false, w_sub: false, hide: 'secret', h_sub: true, readme: 'read me', r_sub: false, header: '', header_sub: false });
      const ann = (await core.repos.users.byUsername('ann'))!;
      await core.repos.sshKeys.create({ userId: ann.id, title: 'laptop', fingerprint: 'SHA256:xyz', keyStr: 'ssh-ed25519 AAAA ann', addedTime: 1_700_000_000_123, lastUsedTime: 0 });
    } finally {
      await core.close();
    }
    await atrium('index', 'build', '--enable', '--data', data);
    const before = snapshot(path.join(data, 'data.db'), 'x_');
    expect(before.users).toHaveLength(3);
    expect(before.search_nodes!.length).toBeGreaterThan(30);
    expect(before.meta).toHaveLength(1);
    expect(before.ssh_public_keys).toHaveLength(1);

    const toPg = await atrium('migrate', '--to', PG_DSN, '--prefix', PREFIX, '--switch', '--data', data);
    const verified = /verified: (\d+) rows in (\d+) tables, identical on both sides \(sha256 ([0-9a-f]{64})\)/.exec(toPg.stdout);
    expect(verified, toPg.stdout).not.toBeNull();
    const total = Object.values(before).reduce((n, rows) => n + rows.length, 0);
    expect(Number(verified![1])).toBe(total);
    expect(JSON.parse(readFileSync(path.join(data, 'config.json'), 'utf8')).database).toMatchObject({ type: 'postgres', dsn: PG_DSN, table_prefix: PREFIX });

    // The server runs on the new database with the same accounts and storages.
    const port = await freePort();
    const server = await startServerProcess(data, port);
    try {
      const res = await fetch(`${server.base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ann', password: 'ann-pass-1' }) });
      expect(((await res.json()) as { code: number }).code).toBe(200);
    } finally {
      await server.stop();
    }
    // A user added on PostgreSQL gets a fresh id (the id sequence was moved past the copy)...
    await atrium('user', 'add', 'pat', 'pat-pass-1', '--data', data);
    await atrium('user', 'passwd', 'pat', 'x-pass-2', '--data', data);
    // ...and is removed again through the accounts code, so the data compared below is the original's.
    const pgCore = openCore(loadConfig(data), { quiet: true });
    try {
      await bootstrap(pgCore);
      const pat = (await pgCore.repos.users.byUsername('pat'))!;
      expect(pat.id).toBe(4);
      await pgCore.accounts.deleteUser(pat.id);
      await pgCore.repos.sessions.deleteExpired(Number.MAX_SAFE_INTEGER);
    } finally {
      await pgCore.close();
    }
    // What was done on PostgreSQL meanwhile went into its audit log (ann's sign-in, pat's changes):
    // those rows go too, so the data compared below is the original's.
    const audited = openCore(loadConfig(data), { quiet: true });
    try {
      const kept = Math.max(0, ...(before.audit_events ?? []).map((r) => Number((r as { id: number }).id)));
      const gone = await audited.db.db.deleteFrom('audit_events').where('id', '>', kept).executeTakeFirst();
      expect(Number(gone.numDeletedRows)).toBeGreaterThan(0);
    } finally {
      await audited.close();
    }

    const toMy = await atrium('migrate', '--to', MY_DSN, '--prefix', PREFIX, '--switch', '--data', data);
    expect(toMy.stdout).toContain(`verified: ${total} rows`);
    const toSqlite = await atrium('migrate', '--to', 'sqlite:back.db', '--prefix', 'x_', '--switch', '--data', data);
    expect(toSqlite.stdout).toContain(`verified: ${total} rows`);
    expect(JSON.parse(readFileSync(path.join(data, 'config.json'), 'utf8')).database).toMatchObject({ type: 'sqlite3', db_file: 'back.db', table_prefix: 'x_' });

    // Identical data, read independently of the code under test.
    const after = snapshot(path.join(data, 'back.db'), 'x_');
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const table of Object.keys(before)) expect(after[table], table).toEqual(before[table]);
    // The same checksum at every step.
    expect(toMy.stdout).toContain(verified![3]);
    expect(toSqlite.stdout).toContain(verified![3]);
  });

  it('refuses a target that holds data, the database in use, and a bad DSN, with exit code 2', async () => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'atrium-migrate-'));
    dirs.push(data);
    await atrium('admin', 'set', 'admin-pass-1', '--data', data);
    const fail = (...args: string[]) =>
      atrium(...args, '--data', data).then(
        (r) => ({ code: 0, stderr: r.stdout }),
        (e: { code: number; stderr: string }) => e,
      );
    // The first test filled PREFIX on PostgreSQL (if it ran); make sure it holds rows either way.
    await atrium('migrate', '--to', PG_DSN, '--prefix', `${PREFIX}r_`, '--data', data);
    const full = await fail('migrate', '--to', PG_DSN, '--prefix', `${PREFIX}r_`);
    expect(full.code).toBe(2);
    expect(full.stderr).toMatch(/the target is not empty \(tables .*users.* hold rows\)/);
    const self = await fail('migrate', '--to', 'sqlite:data.db');
    expect(self).toMatchObject({ code: 2, stderr: expect.stringContaining('the database this installation already uses') });
    expect(await fail('migrate', '--to', 'oracle://x')).toMatchObject({ code: 2, stderr: expect.stringContaining('--to must be') });
    expect(await fail('migrate', '--to', 'sqlite:file.txt')).toMatchObject({ code: 2, stderr: expect.stringContaining('ending in .db') });
    expect(await fail('migrate')).toMatchObject({ code: 2, stderr: expect.stringContaining("required option '--to <dsn>'") });
    const h = openDatabase({ type: 'postgres', dsn: PG_DSN, host: '', port: 0, user: '', password: '', name: '', db_file: '', table_prefix: `${PREFIX}r_`, ssl_mode: '' });
    await dropAll(h);
    await h.close();
  });
});
