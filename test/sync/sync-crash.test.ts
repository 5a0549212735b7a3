import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTree } from '../helpers/files.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { filesBelow } from './files.js';

const FILES = 120;
const SIZE = 64 * 1024;

/**
 * The server is killed with SIGKILL in the middle of a sync run (held back by the job's bandwidth
 * limit). No file under its own name is torn; after the restart the run resumes by itself and
 * copies only what had not arrived: the files already there keep their inode (never written
 * again) and the resumed run's report counts just the rest.
 */
describe('kill -9 during a sync run', () => {
  let data: string;
  let src: string;
  let dst: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-sync-crash-'));
    src = makeTree(Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`p${i % 6}/blob-${i}.bin`, randomBytes(SIZE)])));
    dst = makeTree({});
    await atrium('admin', 'set', 'crash-pass', '--data', path.join(data, 'srv'));
  });
  afterAll(async () => {
    await server?.kill9().catch(() => {});
    for (const d of [data, src, dst]) rmSync(d, { recursive: true, force: true });
  });

  it('leaves no torn file and resumes without copying again what arrived', async () => {
    const dataDir = path.join(data, 'srv');
    let port = await freePort();
    server = await startServerProcess(dataDir, port);
    let token = '';
    const api = (method: string, route: string, body?: unknown) => callApi(server!.base, method, route, { token, body });
    token = (await api('POST', '/api/auth/login', { username: 'admin', password: 'crash-pass' })).data.token;
    for (const [mount, root] of [['/src', src], ['/dst', dst]]) {
      const r = await api('POST', '/api/admin/storage/create', { mount_path: mount, driver: 'Local', addition: JSON.stringify({ root_folder_path: root }), trash: 'off' });
      expect(r.code, r.message).toBe(200);
    }
    // 7.5 MiB at 1 MiB/s: about 8 s, killed past a third.
    const job = await api('POST', '/api/admin/sync/create', { name: 'crashy', src: '/src', dst: '/dst/copy', mode: 'sync', options: { bandwidth_limit: 1024, transfers: 2 } });
    expect(job.code, job.message).toBe(200);
    const started = await api('POST', `/api/admin/sync/run?id=${job.data.id}`);
    expect(started.code, started.message).toBe(200);
    const tid = started.data.task.id as string;
    await waitFor(async () => filesBelow(path.join(dst, 'copy')).length > FILES / 3, 60_000, 100);
    await server.kill9();
    server = undefined;

    const arrived = filesBelow(path.join(dst, 'copy'));
    expect(arrived.length).toBeGreaterThan(0);
    expect(arrived.length).toBeLessThan(FILES);
    // Every file under its own name is whole: the puts wrote temporary files and renamed them.
    for (const rel of arrived) expect(readFileSync(path.join(dst, 'copy', rel)).equals(readFileSync(path.join(src, rel))), rel).toBe(true);
    const inodes = new Map(arrived.map((rel) => [rel, statSync(path.join(dst, 'copy', rel)).ino]));

    port = await freePort();
    server = await startServerProcess(dataDir, port);
    token = (await api('POST', '/api/auth/login', { username: 'admin', password: 'crash-pass' })).data.token;
    const done = await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/sync/info?tid=${tid}`);
      return info.data && [2, 7].includes(info.data.state) ? info.data : undefined;
    }, 120_000, 250);
    expect(done.state, done.error).toBe(2);
    expect(filesBelow(path.join(dst, 'copy'))).toEqual(filesBelow(src));
    for (const rel of filesBelow(src)) expect(readFileSync(path.join(dst, 'copy', rel)).equals(readFileSync(path.join(src, rel))), rel).toBe(true);
    for (const [rel, ino] of inodes) expect(statSync(path.join(dst, 'copy', rel)).ino, `${rel} was written again`).toBe(ino);
    const got = await api('GET', `/api/admin/sync/get?id=${job.data.id}`);
    const [report] = got.data.reports;
    expect(report.state).toBe('succeeded');
    expect(report.report.copied.files).toBe(FILES - arrived.length);
    expect(report.report.skipped.files).toBe(arrived.length);
    expect(existsSync(path.join(dst, '.atrium-tmp')) ? filesBelow(path.join(dst, '.atrium-tmp')) : []).toEqual([]);
  }, 240_000);
});
