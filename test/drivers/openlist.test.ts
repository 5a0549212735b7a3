import { rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { atriumPeerTarget, startAtriumPeer } from './atrium-peer.js';
import { driverConformance } from './conformance.js';
import { download, mount, names } from './mount.js';
import { writeTree } from './peer-files.js';

driverConformance('OpenList against a second Atrium process', () => atriumPeerTarget('OpenList'));

describe('OpenList driver', () => {
  let s: TestServer;
  let admin: string;
  let peer: Awaited<ReturnType<typeof startAtriumPeer>>;
  let relay: http.Server;
  let relayBase: string;
  /** Headers of the /api/fs/get calls that went through the relay to the peer. */
  const seen: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    peer = await startAtriumPeer();
    writeTree(path.join(peer.files, 'pub'), { '/a.txt': 'alpha' });
    // A loopback relay in front of the peer that notes what the driver sends with link requests.
    relay = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.url === '/api/fs/get') seen.push(req.headers);
      const headers: Record<string, string> = {};
      for (const k of ['authorization', 'content-type']) if (req.headers[k]) headers[k] = String(req.headers[k]);
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
    expect(await names(s, admin, '/ol')).toEqual(['a.txt']);
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

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=OpenList', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual([
      'root_folder_path', 'url', 'meta_password', 'username', 'password', 'token', 'pass_ip_to_upsteam', 'pass_ua_to_upsteam', 'forward_archive_requests',
    ]);
    for (const n of ['pass_ip_to_upsteam', 'pass_ua_to_upsteam', 'forward_archive_requests']) {
      expect(info.data.additional.find((i: { name: string }) => i.name === n)).toMatchObject({ type: 'bool', default: 'true' });
    }
    expect(info.data.config).toMatchObject({ name: 'OpenList', local_sort: true, default_root: '/' });
  });
});
