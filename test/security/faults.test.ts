import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Every regular file below `dir`, relative, skipping the Local driver's own temp folder. */
const files = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !path.join(e.parentPath, e.name).includes('.atrium-tmp')).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort() : [];

/** SQLite's own check of the database file after a crash: pages, indexes and the WAL replay. */
function integrity(dbFile: string): string {
  const db = new Database(dbFile);
  try {
    return (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('\n');
  } finally {
    db.close();
  }
}

/**
 * The server is killed with SIGKILL in the middle of an upload and of a cross-storage copy task.
 * Afterwards: no partial file under a real name, the SQLite database passes integrity_check, and
 * after a restart the task goes on to a truthful end (the index-build case joins once the search
 * index exists; the offline-download case is test/offline-crash.test.ts).
 */
describe('kill -9 during writes', () => {
  let box: string;
  let data: string;
  let server: ServerProcess | undefined;
  let port: number;
  let token = '';
  let faults = 0;
  const api = (method: string, route: string, body?: unknown) => callApi(server!.base, method, route, { token, body });
  const start = async () => {
    server = await startServerProcess(data, port);
    token = (await api('POST', '/api/auth/login', { username: 'admin', password: 'fault-pass' })).data.token;
  };
  const kill = async () => {
    await server!.kill9();
    server = undefined;
    faults++;
  };

  beforeAll(async () => {
    box = mkdtempSync(path.join(os.tmpdir(), 'atrium-faults-'));
    data = path.join(box, 'srv');
    port = await freePort();
    await atrium('admin', 'set', 'fault-pass', '--data', data);
    mkdirSync(path.join(box, 'a/src'), { recursive: true });
    mkdirSync(path.join(box, 'b'), { recursive: true });
    for (let i = 0; i < 800; i++) writeFileSync(path.join(box, 'a/src', `f${String(i).padStart(4, '0')}.bin`), randomBytes(2048 + (i % 7) * 1000));
    for (let i = 0; i < 3; i++) writeFileSync(path.join(box, 'a/src', `big${i}.bin`), randomBytes(24 * 1024 * 1024));
    await start();
    for (const [mount, dir] of [
      ['/a', 'a'],
      ['/b', 'b'],
    ] as const) {
      const r = await api('POST', '/api/admin/storage/create', { mount_path: mount, driver: 'Local', addition: JSON.stringify({ root_folder_path: path.join(box, dir) }) });
      expect(r.code, r.message).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.kill9().catch(() => undefined);
    rmSync(box, { recursive: true, force: true });
  });

  it('an upload cut by a crash leaves no file under its name, and its temp file goes at the next start', async () => {
    const body = randomBytes(64 * 1024 * 1024);
    const req = http.request(`${server!.base}/api/fs/put`, {
      method: 'PUT',
      headers: { authorization: token, 'file-path': encodeURIComponent('/b/upload.bin'), 'content-length': body.length },
    });
    req.on('error', () => undefined);
    // Half the body, then the process dies while it waits for the rest.
    await new Promise<void>((resolve) => req.write(body.subarray(0, body.length / 2), () => resolve()));
    const temp = path.join(box, 'b/.atrium-tmp');
    await waitFor(async () => (existsSync(temp) && readdirSync(temp).length > 0 ? true : undefined), 10_000, 20);
    await kill();
    req.destroy();
    expect(existsSync(path.join(box, 'b/upload.bin'))).toBe(false);
    expect(integrity(path.join(data, 'data.db'))).toBe('ok');
    await start();
    // Mounting the storage again removes what the dead process left in its temp folder.
    const listed = await api('POST', '/api/fs/list', { path: '/b', refresh: true });
    expect(listed.code).toBe(200);
    expect(existsSync(path.join(box, 'b/.atrium-tmp'))).toBe(false);
    expect(existsSync(path.join(box, 'b/upload.bin'))).toBe(false);
  });

  it('a copy task cut by a crash leaves only whole files, and finishes after the restart', async () => {
    const source = Object.fromEntries(files(path.join(box, 'a/src')).map((f) => [f, sha(readFileSync(path.join(box, 'a/src', f)))]));
    const r = await api('POST', '/api/fs/copy', { src_dir: '/a', dst_dir: '/b', names: ['src'] });
    expect(r.code, r.message).toBe(200);
    const id = (await waitFor(async () => {
      const undone = await api('GET', '/api/admin/task/copy/undone');
      return undone.data?.[0];
    }, 10_000, 20)).id as string;
    await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/copy/info?tid=${id}`);
      return info.data.state === 1 && info.data.progress > 2 ? true : undefined;
    }, 30_000, 20);
    await kill();

    const copied = files(path.join(box, 'b/src'));
    expect(copied.length).toBeLessThan(Object.keys(source).length);
    for (const f of copied) expect(sha(readFileSync(path.join(box, 'b/src', f))), `${f} is partial`).toBe(source[f]);
    expect(integrity(path.join(data, 'data.db'))).toBe('ok');

    await start();
    const after = await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/copy/info?tid=${id}`);
      return info.code === 200 ? info.data : undefined;
    }, 10_000, 20);
    expect([0, 1, 2]).toContain(after.state);
    const end = await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/copy/info?tid=${id}`);
      return [2, 4, 7].includes(info.data.state) ? info.data : undefined;
    }, 120_000, 20);
    expect(end).toMatchObject({ state: 2, error: '' });
    const final = files(path.join(box, 'b/src'));
    expect(final).toEqual(Object.keys(source).sort());
    for (const f of final) expect(sha(readFileSync(path.join(box, 'b/src', f))), f).toBe(source[f]);
    expect(statSync(path.join(box, 'b/src/big2.bin')).size).toBe(24 * 1024 * 1024);
    expect(faults).toBe(2);
  });

  it('an index build cut by a crash resumes after the restart and ends complete, without duplicates', async () => {
    // 40 000 more entries, so that the build is still running when the process dies.
    for (let d = 0; d < 40; d++) {
      const dir = path.join(box, 'a/many', `d${String(d).padStart(2, '0')}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 1000; f++) writeFileSync(path.join(dir, `n-${d}-${f}.txt`), '');
    }
    expect((await api('POST', '/api/admin/setting/save', [{ key: 'search_index', value: 'database' }])).code).toBe(200);
    expect((await api('POST', '/api/admin/index/build', {})).code).toBe(200);
    await waitFor(async () => {
      const p = await api('GET', '/api/admin/index/progress');
      return p.data.obj_count > 0 && !p.data.is_done ? true : undefined;
    }, 30_000, 20);
    await kill();
    expect(integrity(path.join(data, 'data.db'))).toBe('ok');

    await start();
    const done = await waitFor(async () => {
      const p = await api('GET', '/api/admin/index/progress');
      return p.data.is_done ? p.data : undefined;
    }, 120_000, 20);
    expect(done.error).toBe('');
    // Every entry once: the admin's search for one file name finds exactly its one place.
    for (const name of ['n-0-0.txt', 'n-39-999.txt', 'n-17-512.txt', 'f0007.bin']) {
      const r = await api('POST', '/api/fs/search', { parent: '/', keywords: name, scope: 2, page: 1, per_page: 50 });
      expect(r.code, r.message).toBe(200);
      const exact = r.data.content.filter((h: { name: string }) => h.name === name);
      expect(exact.length, name).toBe(name === 'f0007.bin' ? 2 : 1);
    }
    expect(faults).toBe(3);
  });
});
