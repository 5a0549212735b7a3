import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BACKEND } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { registerUrlDriver } from '../helpers/url-driver.js';

const BODY = Buffer.from('remote bytes 0123456789');
let upstream: http.Server;
let upstreamUrl = '';
const seen: http.IncomingHttpHeaders[] = [];

/** A driver whose files live behind URLs, as cloud drivers' do. */
registerUrlDriver('TestUrl', { name: 'remote.bin', size: BODY.length, isDir: false, modified: new Date(1700000000000) }, (addition) => ({
  url: `${upstreamUrl}/blob?x=1`,
  header: { 'x-upstream-token': String(addition.token) },
}));

describe.each(ONE_BACKEND)('links to URLs on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      seen.push(req.headers);
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (range) {
        const [a, b] = [Number(range[1]), Number(range[2])];
        res.writeHead(206, { 'content-range': `bytes ${a}-${b}/${BODY.length}`, 'content-length': b - a + 1, 'content-type': 'application/x-test' });
        return res.end(BODY.subarray(a, b + 1));
      }
      res.writeHead(200, { 'content-length': BODY.length, 'content-type': 'application/x-test' });
      res.end(BODY);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    s = await startServer(backend);
    admin = await s.login();
    const body = { mount_path: '/url', driver: 'TestUrl', addition: JSON.stringify({ token: 'tok-1' }), webdav_policy: '302_redirect' };
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body })).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    await new Promise((r) => upstream.close(r));
  });

  const sign = () => encodeURIComponent(s.core.signer.sign('/url/remote.bin'));

  it('/d redirects to the driver link with no-referrer and no-cache', async () => {
    const res = await s.inject({ method: 'GET', url: `/d/url/remote.bin?sign=${sign()}` });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${upstreamUrl}/blob?x=1`);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('max-age=0, no-cache, no-store, must-revalidate');
    const got = await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/url/remote.bin' } });
    expect(got.data.raw_url).toBe(`${upstreamUrl}/blob?x=1`);
  });

  it('/p proxies the URL with the link headers, minus the client credentials, and passes ranges', async () => {
    await s.core.settings.set('proxy_types', 'bin');
    try {
      seen.length = 0;
      const res = await s.inject({ method: 'GET', url: `/p/url/remote.bin?sign=${sign()}`, headers: { authorization: 'secret-token', range: 'bytes=2-5', 'accept-encoding': 'gzip' } });
      expect(res.statusCode).toBe(206);
      expect(res.rawPayload.equals(BODY.subarray(2, 6))).toBe(true);
      expect(res.headers['content-range']).toBe(`bytes 2-5/${BODY.length}`);
      expect(seen[0]!['x-upstream-token']).toBe('tok-1');
      expect(seen[0]!.authorization).toBeUndefined();
      expect(seen[0]!['accept-encoding'] ?? '').not.toContain('gzip');
      // With web proxy on, /d proxies instead of redirecting
      const st = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: any) => x.mount_path === '/url');
      await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, web_proxy: true } });
      const d = await s.inject({ method: 'GET', url: `/d/url/remote.bin?sign=${sign()}` });
      expect(d.statusCode).toBe(200);
      expect(d.rawPayload.equals(BODY)).toBe(true);
      expect((await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/url/remote.bin' } })).data.raw_url).toMatch(/\/p\/url\/remote\.bin\?sign=/);
      await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, web_proxy: false } });
    } finally {
      await s.core.settings.set('proxy_types', 'm3u8');
    }
  });

  it('/p refuses storages and types that may not be proxied', async () => {
    const res = await s.inject({ method: 'GET', url: `/p/url/remote.bin?sign=${sign()}`, headers: { accept: 'application/json' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 403, message: 'proxy not allowed', data: null });
  });

  it('down_proxy_url sends /p to the external proxy with a sign', async () => {
    const st = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: any) => x.mount_path === '/url');
    await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, web_proxy: true, down_proxy_url: 'https://proxy.example/\nhttps://second.example' } });
    try {
      const res = await s.inject({ method: 'GET', url: `/p/url/remote.bin?sign=${sign()}` });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(`https://proxy.example/url/remote.bin?sign=${s.core.signer.sign('/url/remote.bin')}`);
      const got = await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/url/remote.bin' } });
      expect(got.data.raw_url).toBe(`https://proxy.example/url/remote.bin?sign=${s.core.signer.sign('/url/remote.bin')}`);
    } finally {
      await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, web_proxy: false, down_proxy_url: '' } });
    }
  });
});
