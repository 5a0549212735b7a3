import { mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { remoteArchives } from '../archive/fixtures.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { atriumPeerTarget, startAtriumPeer } from './atrium-peer.js';
import { driverConformance } from './conformance.js';
import { download, mount, names } from './mount.js';
import { readHostFile, writeTree } from './peer-files.js';
import { waitFor } from '../helpers/wait.js';

driverConformance('OpenList against a second Atrium process', () => atriumPeerTarget('OpenList'));

describe('OpenList driver', () => {
  let s: TestServer;
  let admin: string;
  let peer: Awaited<ReturnType<typeof startAtriumPeer>>;
  let relay: http.Server;
  let relayBase: string;
  /** Headers of the /api/fs/get calls that went through the relay to the peer. */
  const seen: http.IncomingHttpHeaders[] = [];
  /** Every request (method and URL) that went through the relay. */
  const routes: string[] = [];
  /** The bodies of the /api/fs/list calls that went through the relay. */
  const lists: Array<{ path: string; refresh: boolean }> = [];

  const { parts, zip, locked } = remoteArchives();

  beforeAll(async () => {
    peer = await startAtriumPeer();
    writeTree(path.join(peer.files, 'pub'), { '/a.txt': 'alpha', '/arch.zip': zip, '/locked.zip': locked });
    // A loopback relay in front of the peer that notes what the driver sends with link requests.
    relay = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.url === '/api/fs/get') seen.push(req.headers);
      if (req.url === '/api/fs/list') lists.push(JSON.parse(Buffer.concat(chunks).toString()));
      routes.push(`${req.method} ${req.url}`);
      const headers: Record<string, string> = {};
      // The driver's own headers (uploads carry theirs), not the connection's.
      for (const [k, v] of Object.entries(req.headers)) if (!['host', 'connection', 'content-length', 'transfer-encoding'].includes(k) && v !== undefined) headers[k] = String(v);
      const r = await fetch(`${peer.process.base}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await r.arrayBuffer()));
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    relayBase = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    relay?.close();
    await peer?.process.stop();
    rmSync(peer.data, { recursive: true, force: true });
  });

  const rawWith = (p: string, headers: Record<string, string>) =>
    s.inject({ method: 'GET', url: `/d${p}?sign=${encodeURIComponent(s.core.signer.sign(p))}`, headers, remoteAddress: '127.0.0.7' });

  it('passes the client\'s address and user agent to the peer when asking for a link', async () => {
    await mount(s, admin, '/ol', 'OpenList', { url: relayBase, token: peer.token, root_folder_path: '/pub' });
    expect(await names(s, admin, '/ol')).toEqual(['a.txt', 'arch.zip', 'locked.zip']);
    seen.length = 0;
    const d = await rawWith('/ol/a.txt', { 'user-agent': 'Kodi/21.0' });
    expect(d.statusCode).toBe(302);
    expect(String(d.headers.location)).toContain('/p/pub/a.txt');
    const last = seen.at(-1)!;
    expect(last['x-forwarded-for']).toBe('127.0.0.7');
    expect(last['x-real-ip']).toBe('127.0.0.7');
    expect(last['user-agent']).toBe('Kodi/21.0');
    expect((await download(s, '/ol/a.txt')).body.toString()).toBe('alpha');
  });

  it('passes neither when both switches are off', async () => {
    await mount(s, admin, '/quiet', 'OpenList', { url: relayBase, token: peer.token, root_folder_path: '/pub', pass_ip_to_upsteam: false, pass_ua_to_upsteam: false });
    seen.length = 0;
    expect((await rawWith('/quiet/a.txt', { 'user-agent': 'Kodi/21.0' })).statusCode).toBe(302);
    const last = seen.at(-1)!;
    expect(last['x-forwarded-for']).toBeUndefined();
    expect(last['user-agent']).not.toBe('Kodi/21.0');
  });

  it('pass_refresh_flag_to_upsteam: a client\'s refresh reaches the peer\'s listing only when on', async () => {
    await mount(s, admin, '/fresh', 'OpenList', { url: relayBase, token: peer.token, root_folder_path: '/pub', pass_refresh_flag_to_upsteam: true });
    await mount(s, admin, '/stale', 'OpenList', { url: relayBase, token: peer.token, root_folder_path: '/pub' });
    const listVia = async (p: string, refresh: boolean) => {
      lists.length = 0;
      expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: p, refresh } })).code).toBe(200);
      return lists.map((l) => [l.path, l.refresh]);
    };
    expect(await listVia('/fresh', true)).toEqual([['/pub', true]]);
    expect(await listVia('/fresh', false)).toEqual([['/pub', false]]);
    expect(await listVia('/stale', true)).toEqual([['/pub', false]]);
  });

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=OpenList', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual([
      'root_folder_path', 'url', 'meta_password', 'username', 'password', 'token', 'pass_ip_to_upsteam', 'pass_ua_to_upsteam', 'forward_archive_requests', 'pass_refresh_flag_to_upsteam',
    ]);
    expect(info.data.additional.find((i: { name: string }) => i.name === 'pass_refresh_flag_to_upsteam')).toMatchObject({ type: 'bool', default: 'false' });
    for (const n of ['pass_ip_to_upsteam', 'pass_ua_to_upsteam', 'forward_archive_requests']) {
      expect(info.data.additional.find((i: { name: string }) => i.name === n)).toMatchObject({ type: 'bool', default: 'true' });
    }
    expect(info.data.config).toMatchObject({ name: 'OpenList', local_sort: true, default_root: '/' });
  });

  describe('archives on the peer', () => {
    const api = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
    const entry = (p: string, inner: string, pass = '') =>
      s.inject({ method: 'GET', url: `/ae${p}?inner=${encodeURIComponent(inner)}&pass=${encodeURIComponent(pass)}&sign=${encodeURIComponent(s.core.signer.sign(p))}`, headers: { accept: 'application/json' } });
    /** The tree the peer itself answers for an archive. */
    const peerMeta = async (p: string) => (await fetch(`${peer.process.base}/api/fs/archive/meta`, { method: 'POST', headers: { authorization: peer.token, 'content-type': 'application/json' }, body: JSON.stringify({ path: p }) }).then((r) => r.json())) as { data: { content: unknown } };

    it('forwards meta, listings and entries to the peer: the archive is never downloaded here', async () => {
      await mount(s, admin, '/olz', 'OpenList', { url: relayBase, token: peer.token, root_folder_path: '/pub' });
      const open = vi.spyOn(s.core.archives, 'open');
      routes.length = 0;
      try {
        const m = await api('/api/fs/archive/meta', { path: '/olz/arch.zip', refresh: true });
        expect(m.code, m.message).toBe(200);
        expect(m.data.content).toEqual((await peerMeta('/pub/arch.zip')).data.content);
        expect(m.data.raw_url).toMatch(/\/ae\/olz\/arch\.zip$/);
        const l = await api('/api/fs/archive/list', { path: '/olz/arch.zip', inner_path: '/part', page: 2, per_page: 10 });
        expect(l.code, l.message).toBe(200);
        expect(l.data.total).toBe(40);
        expect(l.data.content.map((n: { name: string }) => n.name)).toEqual(Array.from({ length: 10 }, (_, i) => `f${10 + i}.bin`));
        const res = await entry('/olz/arch.zip', '/part/f17.bin');
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-length']).toBe(String(100 * 1024));
        expect(res.rawPayload.equals(parts['part/f17.bin']!)).toBe(true);
        const missing = await entry('/olz/arch.zip', '/part/nope.bin');
        expect([missing.statusCode, missing.json()]).toMatchObject([404, { code: 404, message: '/part/nope.bin is not a file in the archive' }]);
        expect(open).not.toHaveBeenCalled();
      } finally {
        open.mockRestore();
      }
      expect(routes).toContain('POST /api/fs/archive/meta');
      expect(routes).toContain('POST /api/fs/archive/list');
      // Nothing asked the peer for the archive's own bytes.
      expect(routes.filter((r) => /^GET \/(d|p)\//.test(r))).toEqual([]);
    });

    it('the peer checks archive passwords: a wrong one answers 202, the right one reads', async () => {
      const m = await api('/api/fs/archive/meta', { path: '/olz/locked.zip', refresh: true });
      expect(m.code, m.message).toBe(200);
      expect(m.data.encrypted).toBe(true);
      expect((await entry('/olz/locked.zip', '/inner/secret.txt', 'wrong')).json()).toMatchObject({ code: 202, message: 'wrong archive password' });
      expect((await entry('/olz/locked.zip', '/inner/secret.txt')).json()).toMatchObject({ code: 202 });
      const good = await entry('/olz/locked.zip', '/inner/secret.txt', 'zip-pass');
      expect(good.statusCode).toBe(200);
      expect(good.body).toBe('locked words\n');
    });

    it('extracts on the peer when source and target are on the mount: no task here, the files appear there', async () => {
      const r = await api('/api/fs/archive/decompress', { src_dir: '/olz', name: ['arch.zip'], dst_dir: '/olz/out', inner_path: '/part', overwrite: true });
      expect(r.code, r.message).toBe(200);
      expect(r.data.task).toEqual([]);
      const onPeer = await waitFor(() => readHostFile(path.join(peer.files, 'pub'), 'out/part/f05.bin'), 20_000);
      expect(onPeer.equals(parts['part/f05.bin']!)).toBe(true);
      await waitFor(async () => (await names(s, admin, '/olz/out/part')).length === 40, 20_000);
      for (const [rel, body] of Object.entries(parts)) expect(readHostFile(path.join(peer.files, 'pub'), `out/${rel}`)?.equals(body), rel).toBe(true);
    });

    it('extracts here as tasks when the target is another storage', async () => {
      const local = path.join(peer.data, 'local-target');
      mkdirSync(local);
      await mount(s, admin, '/loc', 'Local', { root_folder_path: local });
      const r = await api('/api/fs/archive/decompress', { src_dir: '/olz', name: ['arch.zip'], dst_dir: '/loc', inner_path: '/part/f21.bin' });
      expect(r.code, r.message).toBe(200);
      expect(r.data.task).toHaveLength(1);
      const got = await waitFor(() => readHostFile(local, 'f21.bin'), 20_000);
      expect(got.equals(parts['part/f21.bin']!)).toBe(true);
    });

    it('with forward_archive_requests off, this server reads the archive through the file\'s link', async () => {
      await mount(s, admin, '/oll', 'OpenList', { url: relayBase, token: peer.token, root_folder_path: '/pub', forward_archive_requests: false });
      const open = vi.spyOn(s.core.archives, 'open');
      routes.length = 0;
      try {
        const m = await api('/api/fs/archive/meta', { path: '/oll/arch.zip', refresh: true });
        expect(m.code, m.message).toBe(200);
        expect(m.data.content).toEqual((await peerMeta('/pub/arch.zip')).data.content);
        expect(open).toHaveBeenCalled();
        const res = await entry('/oll/arch.zip', '/part/f03.bin');
        expect(res.rawPayload.equals(parts['part/f03.bin']!)).toBe(true);
      } finally {
        open.mockRestore();
      }
      expect(routes.filter((r) => r.includes('/api/fs/archive/'))).toEqual([]);
      const r = await api('/api/fs/archive/decompress', { src_dir: '/oll', name: ['arch.zip'], dst_dir: '/oll/out2', inner_path: '/part/f09.bin' });
      expect(r.data.task).toHaveLength(1);
      const got = await waitFor(() => readHostFile(path.join(peer.files, 'pub'), 'out2/f09.bin'), 20_000);
      expect(got.equals(parts['part/f09.bin']!)).toBe(true);
    });
  });
});
