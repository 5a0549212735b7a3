import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

const BODY = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

describe.each(ONE_BACKEND)('raw links /d and /p on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  const signOf = (p: string) => s.core.signer.sign(p);

  beforeAll(async () => {
    s = await startServer(backend, { config: { cors: { allow_origins: ['*'], allow_methods: ['*'], allow_headers: ['*'] } } });
    admin = await s.login();
    root = makeTree({ 'bin.dat': BODY, 'dir/x.txt': 'x', 'naïve 文件.txt': 'hello', 'm.txt': 'mmm' });
    const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/raw', root) });
    expect(r.code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves the bytes with a valid sign, through /d and /p', async () => {
    for (const prefix of ['d', 'p']) {
      const res = await s.inject({ method: 'GET', url: `/${prefix}/raw/bin.dat?sign=${encodeURIComponent(signOf('/raw/bin.dat'))}` });
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.equals(BODY)).toBe(true);
      expect(res.headers['content-length']).toBe('5000');
      expect(res.headers['accept-ranges']).toBe('bytes');
    }
  });

  it('refuses missing, wrong, malformed and expired signs with the original messages', async () => {
    const cases: Array<[string, string]> = [
      ['', 'expire missing'],
      ['?sign=abc', 'expire missing'],
      ['?sign=abc:xyz', 'expire invalid'],
      [`?sign=${encodeURIComponent(signOf('/raw/other.dat'))}`, 'sign invalid'],
    ];
    for (const [q, message] of cases) {
      const res = await s.inject({ method: 'GET', url: `/d/raw/bin.dat${q}`, headers: { accept: 'application/json' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 401, message, data: null });
    }
    await s.core.settings.set('link_expiration', '1');
    try {
      const past = s.core.signer.sign('/raw/bin.dat', Date.now() - 2 * 3600_000);
      const res = await s.inject({ method: 'GET', url: `/d/raw/bin.dat?sign=${encodeURIComponent(past)}`, headers: { accept: 'application/json' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 401, message: 'sign expired' });
      const fresh = s.core.signer.sign('/raw/bin.dat');
      expect(fresh).toMatch(/:\d{10}$/);
      expect((await s.inject({ method: 'GET', url: `/d/raw/bin.dat?sign=${encodeURIComponent(fresh)}` })).statusCode).toBe(200);
    } finally {
      await s.core.settings.set('link_expiration', '0');
    }
  });

  it('without sign_all and enable_sign, no sign is needed; enable_sign on the storage demands it again', async () => {
    await s.core.settings.set('sign_all', 'false');
    try {
      expect((await s.inject({ method: 'GET', url: '/d/raw/m.txt' })).body).toBe('mmm');
      const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/raw' } });
      expect(listed.data.content.find((o: any) => o.name === 'm.txt').sign).toBe('');
      const st = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: any) => x.mount_path === '/raw');
      await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, enable_sign: true } });
      expect((await s.inject({ method: 'GET', url: '/d/raw/m.txt', headers: { accept: 'application/json' } })).json()).toEqual({ code: 401, message: 'expire missing', data: null });
      await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, enable_sign: false } });
    } finally {
      await s.core.settings.set('sign_all', 'true');
    }
  });

  it('a token reset invalidates every sign', async () => {
    const old = signOf('/raw/m.txt');
    const token = s.core.settings.get('token');
    await s.core.settings.set('token', `${token}x`);
    try {
      const res = await s.inject({ method: 'GET', url: `/d/raw/m.txt?sign=${encodeURIComponent(old)}`, headers: { accept: 'application/json' } });
      expect([res.statusCode, res.json().message]).toEqual([401, 'sign invalid']);
    } finally {
      await s.core.settings.set('token', token);
    }
  });

  it('honours ranges: single, suffix, multiple, unsatisfiable; HEAD sends no body', async () => {
    const url = `/d/raw/bin.dat?sign=${encodeURIComponent(signOf('/raw/bin.dat'))}`;
    const one = await s.inject({ method: 'GET', url, headers: { range: 'bytes=100-199' } });
    expect(one.statusCode).toBe(206);
    expect(one.headers['content-range']).toBe('bytes 100-199/5000');
    expect(one.rawPayload.equals(BODY.subarray(100, 200))).toBe(true);
    const suffix = await s.inject({ method: 'GET', url, headers: { range: 'bytes=-10' } });
    expect(suffix.rawPayload.equals(BODY.subarray(4990))).toBe(true);
    const multi = await s.inject({ method: 'GET', url, headers: { range: 'bytes=0-9,20-29' } });
    expect(multi.statusCode).toBe(206);
    expect(multi.headers['content-type']).toMatch(/^multipart\/byteranges; boundary=/);
    expect(multi.rawPayload.includes(BODY.subarray(20, 30))).toBe(true);
    const bad = await s.inject({ method: 'GET', url, headers: { range: 'bytes=6000-7000' } });
    expect(bad.statusCode).toBe(416);
    expect(bad.headers['content-range']).toBe('bytes */5000');
    const head = await s.inject({ method: 'HEAD', url });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('5000');
    expect(head.rawPayload.length).toBe(0);
    const etag = one.headers.etag as string;
    expect((await s.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode).toBe(304);
  });

  it('names UTF-8 files in Content-Disposition and types by extension', async () => {
    const p = '/raw/naïve 文件.txt';
    const res = await s.inject({ method: 'GET', url: `/d${encodeURI(p)}?sign=${encodeURIComponent(signOf(p))}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('hello');
    expect(res.headers['content-disposition']).toContain(`filename*=UTF-8''na%C3%AFve%20%E6%96%87%E4%BB%B6.txt`);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('answers folders, missing files and traversal attempts without leaking anything', async () => {
    const asJson = { accept: 'application/json' };
    const dir = await s.inject({ method: 'GET', url: `/d/raw/dir?sign=${encodeURIComponent(signOf('/raw/dir'))}`, headers: asJson });
    expect(dir.statusCode).toBe(400);
    expect(dir.json()).toMatchObject({ code: 400, message: 'not a file' });
    const missing = await s.inject({ method: 'GET', url: `/d/raw/none?sign=${encodeURIComponent(signOf('/raw/none'))}`, headers: asJson });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ code: 404, message: 'failed link: object not found', data: null });
    for (const raw of ['/d/raw/%2e%2e/%2e%2e/etc/passwd', '/d/raw/..%2f..%2fetc/passwd', '/d/raw/%252e%252e/x', '/d/raw/..\\..\\etc\\passwd']) {
      const res = await s.inject({ method: 'GET', url: raw, headers: asJson });
      expect(res.body).not.toContain('root:');
      // Either the URL normalises out of /d (404) or it is refused with an error status.
      if (res.statusCode !== 404) {
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.json().code).toBe(res.statusCode);
      }
    }
  });

  it('CORS headers on /d', async () => {
    const res = await s.inject({ method: 'GET', url: `/d/raw/m.txt?sign=${encodeURIComponent(signOf('/raw/m.txt'))}`, headers: { origin: 'https://a.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});
