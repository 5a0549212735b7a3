import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FileServer, startFileServer } from './helpers/file-server.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from './helpers/process.js';
import { waitFor } from './helpers/wait.js';

const SIZE = 200 * 1024 * 1024;

const sha256 = (file: string) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (c) => h.update(c))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });

/**
 * The server process is killed with SIGKILL in the middle of a 200 MB offline download. The task
 * must neither vanish nor leave a partial file under the target name; after a restart it goes on
 * from the bytes already in the temp folder (a Range request) and ends with the whole file.
 */
describe('kill -9 during an offline download', () => {
  let data: string;
  let source: string;
  let digest: string;
  let web: FileServer;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-crash-'));
    source = path.join(data, 'source.bin');
    const fd = openSync(source, 'w');
    const block = randomBytes(1024 * 1024);
    for (let i = 0; i < SIZE / block.length; i++) {
      block.writeUInt32BE(i, 0);
      writeSync(fd, block);
    }
    closeSync(fd);
    digest = await sha256(source);
    // Slow enough (about 8 s in all) to be killed mid-way.
    web = await startFileServer({ files: { '/big.bin': { file: source, etag: '"big-1"' } }, rate: 25 * 1024 * 1024 });
    await atrium('admin', 'set', 'crash-pass', '--data', path.join(data, 'srv'));
  });
  afterAll(async () => {
    await server?.kill9().catch(() => {});
    await web.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('leaves a truthful task and no partial target, and finishes after the restart', async () => {
    const dataDir = path.join(data, 'srv');
    const port = await freePort();
    server = await startServerProcess(dataDir, port);
    const api = (method: string, route: string, body?: unknown) => callApi(server!.base, method, route, { token, body });
    let token = '';
    token = (await api('POST', '/api/auth/login', { username: 'admin', password: 'crash-pass' })).data.token;
    expect((await api('POST', '/api/admin/setting/save', [{ key: 'offline_download_allow_private', value: 'true' }])).code).toBe(200);
    const added = await api('POST', '/api/fs/add_offline_download', { urls: [`${web.base}/big.bin`], path: '/dl', tool: 'SimpleHttp', delete_policy: 'delete_on_upload_succeed' });
    expect(added.code, added.message).toBe(200);
    const id = added.data.tasks[0].id as string;

    await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/offline_download/info?tid=${id}`);
      return info.data.state === 1 && info.data.progress > 20 ? info : undefined;
    }, 30_000, 100);
    await server.kill9();
    server = undefined;

    const target = path.join(dataDir, 'files/dl/big.bin');
    expect(existsSync(target)).toBe(false);
    const tempRoot = path.join(dataDir, 'temp/SimpleHttp');
    const [folder] = readdirSync(tempRoot);
    const partial = statSync(path.join(tempRoot, folder!, 'big.bin')).size;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(SIZE);

    server = await startServerProcess(dataDir, port);
    token = (await api('POST', '/api/auth/login', { username: 'admin', password: 'crash-pass' })).data.token;
    const firstSeen = await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/offline_download/info?tid=${id}`);
      return info.code === 200 ? info.data : undefined;
    }, 10_000, 100);
    // Not lost, not falsely done: queued again or running.
    expect([0, 1]).toContain(firstSeen.state);

    const finished = await waitFor(async () => {
      const info = await api('POST', `/api/admin/task/offline_download/info?tid=${id}`);
      return [2, 4, 7].includes(info.data.state) ? info.data : undefined;
    }, 60_000, 100);
    expect(finished).toMatchObject({ state: 2, error: '', progress: 100 });
    const transfer = await waitFor(async () => {
      const done = await api('GET', '/api/admin/task/offline_download_transfer/done');
      return done.data.length > 0 ? done.data[0] : undefined;
    }, 60_000, 100);
    expect(transfer).toMatchObject({ state: 2, error: '' });
    // It went on from where it was, not from byte 0.
    const ranges = web.ranges.get('/big.bin')!;
    expect(ranges[0]).toBe('');
    expect(ranges.some((r) => /^bytes=[1-9]\d*-$/.test(r))).toBe(true);
    expect(statSync(target).size).toBe(SIZE);
    expect(await sha256(target)).toBe(digest);
    expect(existsSync(path.join(tempRoot, folder!))).toBe(false);
  });
});
