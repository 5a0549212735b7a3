import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTree } from '../helpers/files.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { filesBelow } from '../sync/files.js';

const PASS = 'pass word 1';
// the write bit: the API put only
const WRITE = 8;

/**
 * A quota's usage after a kill -9 (issue #41): the server is killed while a stream of unknown
 * size is being stored into the user's root; a file is written on the disk while it is down.
 * After `atrium quota scan --user` the usage is what the disk holds, and the next write is
 * decided on it.
 */
describe('quota usage after kill -9', () => {
  let data: string;
  let root: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-quota-crash-'));
    root = makeTree({ 'zoe/.keep': '' });
    await atrium('admin', 'set', 'crash-pass', '--data', data);
  });
  afterAll(async () => {
    await server?.kill9().catch(() => {});
    for (const d of [data, root]) rmSync(d, { recursive: true, force: true });
  });

  it('a scan repairs the usage: what the disk holds, whatever the killed upload and the down time left', async () => {
    server = await startServerProcess(data, await freePort());
    let admin = '';
    const api = (method: string, route: string, body?: unknown, token = admin) => callApi(server!.base, method, route, { token, body });
    admin = (await api('POST', '/api/auth/login', { username: 'admin', password: 'crash-pass' })).data.token;
    expect((await api('POST', '/api/admin/storage/create', { mount_path: '/disk', driver: 'Local', addition: JSON.stringify({ root_folder_path: root }), trash: 'off' })).code).toBe(200);
    const made = await api('POST', '/api/admin/user/create', { username: 'zoe', password: PASS, base_path: '/disk/zoe', permission: WRITE, quota_bytes: 1_000_000 });
    expect(made.code, made.message).toBe(200);
    const zoe = (await api('POST', '/api/auth/login', { username: 'zoe', password: PASS })).data.token as string;
    const put = await fetch(`${server.base}/api/fs/put`, { method: 'PUT', headers: { authorization: zoe, 'file-path': encodeURIComponent('/kept.bin') }, body: Buffer.alloc(1000, 1) });
    expect(((await put.json()) as { code: number }).code).toBe(200);

    // a stream of unknown size (chunked), 300 000 bytes sent, then the server is killed
    const cut = http.request(`${server.base}/api/fs/put`, { method: 'PUT', headers: { authorization: zoe, 'file-path': encodeURIComponent('/cut.bin'), 'transfer-encoding': 'chunked' } });
    cut.on('error', () => undefined);
    for (let i = 0; i < 30; i++) cut.write(Buffer.alloc(10_000, 2));
    await new Promise((r) => setTimeout(r, 500));
    await server.kill9();
    server = undefined;
    // while it is down, a file lands on the disk
    writeFileSync(path.join(root, 'zoe', 'outside.bin'), Buffer.alloc(5000, 3));

    const scanned = await atrium('quota', 'scan', '--user', 'zoe', '--data', data);
    expect(scanned.stdout).toMatch(/zoe/);
    const onDisk = filesBelow(path.join(root, 'zoe')).filter((f) => !path.basename(f).startsWith('.'));
    // the killed upload left nothing under its name
    expect(onDisk).toEqual(['kept.bin', 'outside.bin']);

    server = await startServerProcess(data, await freePort());
    const me = await callApi(server.base, 'GET', '/api/me', { token: (await callApi(server.base, 'POST', '/api/auth/login', { body: { username: 'zoe', password: PASS } })).data.token });
    expect(me.data).toMatchObject({ used_bytes: 6000, used_files: 3 });
  }, 120_000);
});
