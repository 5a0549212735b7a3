import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadToDir, openUrl, type PartialDownload } from '../../src/offline/simple-http.js';
import { isPrivateAddress, resolveTarget } from '../../src/net/url-guard.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';

describe('SSRF guard', () => {
  it('classifies addresses', () => {
    for (const a of ['127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::5', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(a), a).toBe(false);
    }
  });

  it('refuses other schemes and private targets, resolving names first', async () => {
    await expect(resolveTarget('file:///etc/passwd', { allowPrivate: true })).rejects.toThrow('only http and https urls can be downloaded, not file');
    await expect(resolveTarget('ftp://example.com/x', { allowPrivate: true })).rejects.toThrow('not ftp');
    await expect(resolveTarget('gopher://127.0.0.1/', { allowPrivate: true })).rejects.toThrow('not gopher');
    await expect(resolveTarget('not a url', { allowPrivate: true })).rejects.toThrow('invalid url');
    await expect(resolveTarget('http://127.0.0.1:1/x', { allowPrivate: false })).rejects.toThrow('127.0.0.1 is a loopback, private or link-local address');
    await expect(resolveTarget('http://[::1]/x', { allowPrivate: false })).rejects.toThrow('loopback, private or link-local');
    await expect(resolveTarget('http://169.254.169.254/latest/meta-data', { allowPrivate: false })).rejects.toThrow('169.254.169.254');
    // A name is resolved before deciding: localhost is loopback.
    await expect(resolveTarget('http://localhost:8080/', { allowPrivate: false })).rejects.toThrow(/localhost resolves to (127\.0\.0\.1|::1)/);
    // Decimal and hex spellings of loopback are normalised by the URL parser.
    await expect(resolveTarget('http://2130706433/', { allowPrivate: false })).rejects.toThrow('loopback');
    await expect(resolveTarget('http://0x7f.1/', { allowPrivate: false })).rejects.toThrow('loopback');
    expect((await resolveTarget('http://127.0.0.1:1/x', { allowPrivate: true })).address).toBe('127.0.0.1');
    expect((await resolveTarget('magnet:?xt=urn:btih:abc', { allowPrivate: false, extraSchemes: ['magnet:'] })).address).toBeUndefined();
    await expect(resolveTarget('magnet:?xt=urn:btih:abc', { allowPrivate: false })).rejects.toThrow('not magnet');
  });
});

describe('SimpleHttp downloader', () => {
  let server: FileServer;
  let dir: string;
  const payload = randomBytes(300_000);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-dl-'));
    server = await startFileServer({
      files: {
        '/files/data.bin': { body: payload, etag: '"v1"' },
        '/named': { body: Buffer.from('hello'), disposition: `attachment; filename="plain.txt"; filename*=UTF-8''%E4%BD%A0%E5%A5%BD.txt` },
      },
      redirects: { '/go': '/hop', '/hop': '/files/data.bin', '/loop': '/loop', '/to-other-host': 'http://127.0.0.2:1/secret' },
    });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const common = (sub: string) => {
    const d = path.join(dir, sub);
    return { dir: d, allowPrivate: true, maxBytes: 0, signal: new AbortController().signal, onStart: async () => {}, onProgress: () => {} };
  };

  it('follows redirects and names the file from the URL or Content-Disposition', async () => {
    const a = common('a');
    await import('node:fs/promises').then((f) => f.mkdir(a.dir, { recursive: true }));
    expect(await downloadToDir({ ...a, url: `${server.base}/go` })).toBe('data.bin');
    expect(readFileSync(path.join(a.dir, 'data.bin')).equals(payload)).toBe(true);
    expect(await downloadToDir({ ...a, url: `${server.base}/named` })).toBe('你好.txt');
    expect(readFileSync(path.join(a.dir, '你好.txt'), 'utf8')).toBe('hello');
  });

  it('re-checks every redirect target', async () => {
    // 127.0.0.1 (the test server) is let through; 127.0.0.2, where the redirect points, is not.
    const blocked = (address: string) => address !== '127.0.0.1';
    const opened = await openUrl(`${server.base}/files/data.bin`, { allowPrivate: false, blocked, signal: new AbortController().signal });
    opened.res.resume();
    expect(opened.res.statusCode).toBe(200);
    await expect(openUrl(`${server.base}/to-other-host`, { allowPrivate: false, blocked, signal: new AbortController().signal })).rejects.toThrow('127.0.0.2 is a loopback');
    await expect(openUrl(`${server.base}/loop`, { allowPrivate: true, signal: new AbortController().signal })).rejects.toThrow('more than 10 redirects');
  });

  it('enforces the size limit and reports HTTP errors', async () => {
    const b = common('b');
    await import('node:fs/promises').then((f) => f.mkdir(b.dir, { recursive: true }));
    await expect(downloadToDir({ ...b, maxBytes: 1000, url: `${server.base}/files/data.bin` })).rejects.toThrow('more than the limit of 1000 bytes');
    await expect(downloadToDir({ ...b, url: `${server.base}/missing` })).rejects.toThrow('HTTP 404');
  });

  it('continues a partial file with a Range request, and starts over when the file changed', async () => {
    const c = common('c');
    await import('node:fs/promises').then((f) => f.mkdir(c.dir, { recursive: true }));
    writeFileSync(path.join(c.dir, 'data.bin'), payload.subarray(0, 100_000));
    const partial: PartialDownload = { name: 'data.bin', etag: '"v1"' };
    let seen = 0;
    await downloadToDir({ ...c, url: `${server.base}/files/data.bin`, partial, onProgress: (b) => (seen = b) });
    expect(readFileSync(path.join(c.dir, 'data.bin')).equals(payload)).toBe(true);
    expect(seen).toBe(payload.length);
    expect(server.ranges.get('/files/data.bin')).toContain('bytes=100000-');
    // A stale validator: the server answers 200 with the whole file, which replaces the part.
    writeFileSync(path.join(c.dir, 'data.bin'), Buffer.from('stale bytes'));
    await downloadToDir({ ...c, url: `${server.base}/files/data.bin`, partial: { name: 'data.bin', etag: '"v0"' } });
    expect(readFileSync(path.join(c.dir, 'data.bin')).equals(payload)).toBe(true);
  });
});
