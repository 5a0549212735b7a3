import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { callApi, freePort, startServerProcess } from '../helpers/process.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { driverConformance } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { readHostFile, writeTree } from './peer-files.js';
import { PEER_PASSWORD, atriumPeerTarget, startAtriumPeer } from './atrium-peer.js';

const startPeer = startAtriumPeer;

driverConformance('AList V3 against a second Atrium process', () => atriumPeerTarget('AList V3'));

describe('AList V3 driver', () => {
  let s: TestServer;
  let admin: string;
  let peer: Awaited<ReturnType<typeof startPeer>>;
  const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });

  beforeAll(async () => {
    peer = await startPeer();
    writeTree(path.join(peer.files, 'pub'), { '/a.txt': 'alpha', '/secret/s.txt': 'hidden words', '/big.bin': Buffer.alloc(300_000, 9) });
    const meta = await callApi(peer.process.base, 'POST', '/api/admin/meta/create', { token: peer.token, body: { path: '/pub/secret', password: 'meta-pw', p_sub: true } });
    expect(meta.code, meta.message).toBe(200);
    // Admins pass path passwords; a user that may write but not skip them needs the meta password.
    const user = await callApi(peer.process.base, 'POST', '/api/admin/user/create', {
      token: peer.token,
      body: { username: 'writer', password: 'writer-pass', base_path: '/', role: 0, permission: 8, disabled: false },
    });
    expect(user.code, user.message).toBe(200);
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    await peer?.process.stop();
    rmSync(peer.data, { recursive: true, force: true });
  });

  it('logs in with a token alone, stores a refreshed token after a password login', async () => {
    await mount(s, admin, '/bytoken', 'AList V3', { url: `${peer.process.base}/`, token: peer.token, root_folder_path: '/pub' });
    expect(await names(s, admin, '/bytoken')).toEqual(['secret', 'a.txt', 'big.bin']);
    await mount(s, admin, '/bylogin', 'AList V3', { url: peer.process.base, username: 'admin', password: PEER_PASSWORD, root_folder_path: '/pub' });
    const rows = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content;
    const stored = JSON.parse(rows.find((r: any) => r.mount_path === '/bylogin').addition);
    expect(stored.token).toMatch(/^ey/);
    expect((await download(s, '/bylogin/a.txt')).body.toString()).toBe('alpha');
  });

  it('redirects downloads to the peer, ranges included', async () => {
    const d = await s.inject({ method: 'GET', url: `/d/bylogin/big.bin?sign=${s.core.signer.sign('/bylogin/big.bin')}` });
    expect(d.statusCode).toBe(302);
    expect(String(d.headers.location)).toContain(`${peer.process.base}/p/pub/big.bin`);
    const r = await fetch(String(d.headers.location), { headers: { range: 'bytes=1000-1999' } });
    expect(r.status).toBe(206);
    expect(Buffer.from(await r.arrayBuffer()).equals(Buffer.alloc(1000, 9))).toBe(true);
  });

  it('forwards the meta password; without it the peer refuses', async () => {
    const writer = { url: peer.process.base, username: 'writer', password: 'writer-pass', root_folder_path: '/pub' };
    await mount(s, admin, '/nometa', 'AList V3', writer);
    const without = await post('/api/fs/list', { path: '/nometa/secret', refresh: true });
    expect(without.code).toBe(500);
    expect(without.message).toBe('failed get objs: failed get dir: password is incorrect or you have no permission');
    await mount(s, admin, '/withmeta', 'AList V3', { ...writer, meta_password: 'meta-pw' });
    expect(await names(s, admin, '/withmeta/secret')).toEqual(['s.txt']);
    expect((await download(s, '/withmeta/secret/s.txt')).body.toString()).toBe('hidden words');
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'new secret', headers: { authorization: admin, 'file-path': encodeURIComponent('/withmeta/secret/n.txt'), 'content-type': 'text/plain' } });
    expect(up.json().code, up.json().message).toBe(200);
    expect(readHostFile(path.join(peer.files, 'pub'), '/secret/n.txt')?.toString()).toBe('new secret');
  });

  it('a bad peer fails only its own storage, and a peer that went away is reached again when back', async () => {
    const deadPort = await freePort();
    const bad = await post('/api/admin/storage/create', storageRow('/dead', 'AList V3', { url: `http://127.0.0.1:${deadPort}`, token: 'x' }));
    expect(bad.code).toBe(500);
    expect(bad.message).toMatch(/^failed init storage but storage is already created: failed init storage: failed to reach http:\/\/\S+: ECONNREFUSED/);
    const wrongPw = await post('/api/admin/storage/create', storageRow('/wrongpw', 'AList V3', { url: peer.process.base, username: 'admin', password: 'nope' }));
    expect(wrongPw.message).toMatch(/login to .* failed: /);
    expect(await names(s, admin, '/bytoken')).toContain('a.txt');
    // A peer that takes connections and never answers holds up the mount (and the storages
    // mounted after it at start) for 5 s at most.
    // The driver gives up itself: it closes the connection it opened (no wall-clock ceiling here).
    const sockets: Array<{ closed: boolean }> = [];
    const silent = net.createServer((c) => {
      const seen = { closed: false };
      sockets.push(seen);
      c.on('close', () => (seen.closed = true)).resume();
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const hung = await post('/api/admin/storage/create', storageRow('/hung', 'AList V3', { url: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, token: 'x' }));
    expect(hung.message).toMatch(/failed to reach .*: no answer within 5 s$/);
    expect(sockets.length).toBeGreaterThan(0);
    await waitFor(() => sockets.every((c) => c.closed), 10_000);
    silent.close();

    await peer.process.stop();
    const down = await post('/api/fs/list', { path: '/bytoken', refresh: true });
    expect(down.code).toBe(500);
    expect(down.message).toMatch(/failed to reach/);
    peer.process = await startServerProcess(peer.data, peer.port);
    expect(await names(s, admin, '/bytoken')).toContain('a.txt');
    expect((await download(s, '/bytoken/a.txt')).body.toString()).toBe('alpha');
  }, 60_000);

  it('passes /api/fs/other on to the peer, with the peer\'s answer', async () => {
    const r = await post('/api/fs/other', { path: '/bytoken/a.txt', method: 'video_preview', data: {} });
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/not implement$/);
    const missing = await post('/api/fs/other', { path: '/bytoken/nope.txt', method: 'x' });
    expect(missing.message).toMatch(/object not found/);
  });

  it('is listed by the driver endpoints with its items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=AList%20V3', { token: admin });
    expect(info.data.additional.map((i: any) => i.name)).toEqual(['root_folder_path', 'url', 'meta_password', 'username', 'password', 'token']);
    expect(info.data.additional[0]).toMatchObject({ default: '/', required: true });
    expect(info.data.config).toMatchObject({ name: 'AList V3', local_sort: true });
    expect(info.data.common.map((i: any) => i.name)).toContain('proxy_range');
  });
});
