import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.js';
import { SqliteCheckpointer } from '../../src/db/sqlite-checkpointer.js';
import { cachingStatements } from '../../src/db/sqlite-statements.js';
import { defaultConfig } from '../../src/config/defaults.js';
import { waitUntil } from '../helpers/wait.js';

const dirs: string[] = [];
const open: SQLite.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function walDatabase(): { db: SQLite.Database; file: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-sqlite-'));
  dirs.push(dir);
  const file = path.join(dir, 'data.db');
  const db = new SQLite(file);
  open.push(db);
  db.pragma('journal_mode = WAL');
  return { db, file };
}

const autocheckpoint = (db: SQLite.Database) => db.pragma('wal_autocheckpoint', { simple: true });

describe('cached prepared statements', () => {
  it('hands out the prepared statement of a SQL text again, and a fresh one while it iterates', () => {
    const { db } = walDatabase();
    db.exec('create table t (n integer)');
    const wrapped = cachingStatements(db);
    const insert = wrapped.prepare('insert into t (n) values (?)');
    expect(wrapped.prepare('insert into t (n) values (?)')).toBe(insert);
    for (let i = 0; i < 3; i++) (insert as unknown as SQLite.Statement).run([i]);
    const select = wrapped.prepare('select n from t order by n') as unknown as SQLite.Statement;
    expect(select.all([])).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    // Parameters are bound at each run: a kept statement answers for the new values.
    const one = wrapped.prepare('select n from t where n = ?') as unknown as SQLite.Statement;
    expect(one.all([1])).toEqual([{ n: 1 }]);
    expect((wrapped.prepare('select n from t where n = ?') as unknown as SQLite.Statement).all([2])).toEqual([{ n: 2 }]);
    const iterating = select.iterate([]);
    iterating.next();
    const other = wrapped.prepare('select n from t order by n') as unknown as SQLite.Statement;
    expect(other).not.toBe(select);
    expect(other.all([])).toHaveLength(3);
    iterating.return?.();
    expect(wrapped.prepare('select n from t order by n')).toBe(select);
  });

  it('keeps at most 512 statements, dropping the least recently used', () => {
    const { db } = walDatabase();
    const wrapped = cachingStatements(db);
    const first = wrapped.prepare('select 0');
    const second = wrapped.prepare('select 1');
    for (let i = 2; i < 512; i++) wrapped.prepare(`select ${i}`);
    expect(wrapped.prepare('select 0')).toBe(first); // used again: now the most recent
    wrapped.prepare('select 512'); // one over: `select 1` goes
    expect(wrapped.prepare('select 0')).toBe(first);
    expect(wrapped.prepare('select 1')).not.toBe(second);
  });

  it('tells of statements that write, not of queries', () => {
    const { db } = walDatabase();
    let writes = 0;
    const wrapped = cachingStatements(db, () => writes++);
    (wrapped.prepare('create table t (n integer)') as unknown as SQLite.Statement).run([]);
    wrapped.prepare('select 1');
    wrapped.prepare('insert into t (n) values (1)');
    wrapped.prepare('insert into t (n) values (1)');
    expect(writes).toBe(3);
  });
});

describe('WAL checkpoints in a worker thread', () => {
  it('starts after a few writes, copies the WAL into the database file, and hands the threshold back when stopped', async () => {
    const { db, file } = walDatabase();
    const cp = new SqliteCheckpointer(db, file);
    db.pragma('wal_autocheckpoint = 0'); // only the worker may copy frames back in this test
    db.exec('create table t (n integer, pad text)');
    const sizeBefore = statSync(file).size;
    const insert = db.prepare('insert into t (n, pad) values (?, ?)');
    for (let i = 0; i < 63; i++) {
      insert.run(i, 'x'.repeat(2000));
      cp.noteWrite();
    }
    expect(cp.running).toBe(false);
    insert.run(63, 'x'.repeat(2000));
    cp.noteWrite();
    expect(cp.running).toBe(true);
    expect(autocheckpoint(db)).toBe(16_000);
    // 64 rows of 2 KB: in the WAL only, the database file as it was.
    expect(statSync(file).size).toBe(sizeBefore);
    cp.now();
    await waitUntil(() => cp.checkpointed > 0, 10_000);
    expect(statSync(file).size).toBeGreaterThan(sizeBefore + 64 * 2000);
    await cp.stop();
    expect(cp.running).toBe(false);
    expect(autocheckpoint(db)).toBe(1_000);
    // Stopped for good: more writes start no new worker.
    for (let i = 0; i < 100; i++) cp.noteWrite();
    expect(cp.running).toBe(false);
  });

  it('gives the main connection its own checkpoints back when the worker dies', async () => {
    const { db, file } = walDatabase();
    db.exec('create table t (n integer)');
    const cp = new SqliteCheckpointer(db, file);
    for (let i = 0; i < 64; i++) cp.noteWrite();
    expect(cp.running).toBe(true);
    expect(autocheckpoint(db)).toBe(16_000);
    await (cp as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await waitUntil(() => !cp.running, 5_000);
    expect(autocheckpoint(db)).toBe(1_000);
  });

  it('runs for a database opened with the option, and stops when it is closed', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-sqlite-'));
    dirs.push(dir);
    const config = { ...defaultConfig().database, type: 'sqlite3' as const, db_file: path.join(dir, 'data.db'), table_prefix: '' };
    const handle = openDatabase(config, { checkpointer: true });
    await handle.db.schema.createTable('t').addColumn('n', 'integer').execute();
    for (let i = 0; i < 70; i++) await handle.db.insertInto('t' as never).values({ n: i } as never).execute();
    expect(handle.checkpointer?.running).toBe(true);
    const rows = await handle.db.selectFrom('t' as never).selectAll().execute();
    expect(rows).toHaveLength(70);
    await handle.close();
    expect(handle.checkpointer?.running).toBe(false);
    // Closed cleanly: another connection reads every row from the file.
    const again = new SQLite(config.db_file, { readonly: true });
    open.push(again);
    expect(again.prepare('select count(*) as n from t').get()).toEqual({ n: 70 });
    const plain = openDatabase(config);
    expect(plain.checkpointer).toBeUndefined();
    await plain.close();
  });
});
