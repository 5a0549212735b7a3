import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type FileStat } from 'webdav';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';
import { registerUrlDriver } from '../helpers/url-driver.js';
import { basic, hrefs, listen } from './dav-helpers.js';

const REMOTE = Buffer.from('bytes behind a URL 0123456789');
let upstreamUrl = '';

/** A driver whose files live behind URLs, to see webdav_policy redirect or proxy. */
registerUrlDriver('DavTestUrl', { name: 'remote.bin', size: REMOTE.length, isDir: false, modified: new Date(1700000000000) }, () => ({ url: `${upstreamUrl}/blob` }));

const READ = 256;
const MANAGE = 512;
const ALL_WRITE = 8 | 16 | 32 | 64 | 128;

describe.each(ONE_BACKEND)('WebDAV at /dav on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let base: string;
  let root: string;
  let other: string;
  let upstream: http.Server;
  const ADMIN = basic('admin', ADMIN_PASSWORD);
  const READER = basic('reader', 'r-pass');
  const WRITER = basic('writer', 'w-pass');
  const WRITER2 = basic('writer2', 'w2-pass');

  const dav = (method: string, url: string, auth: string | undefined, opts: { headers?: Record<string, string>; body?: string | Buffer } = {}) =>
    s.inject({ method: method as 'GET', url, headers: { ...(auth ? { authorization: auth } : {}), ...opts.headers }, payload: opts.body });
  const propfind = (url: string, auth: string, depth = '1', body?: string) => dav('PROPFIND', url, auth, { headers: { depth }, body });
  const file = (rel: string) => path.join(root, rel);

  beforeAll(async () => {
    upstream = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-length': REMOTE.length });
      res.end(REMOTE);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({
      'a.txt': 'hello webdav',
      'dir/b.txt': 'bee',
      'dir/sub/c.txt': 'sea',
      'secret/s.txt': 'protected bytes',
      'hideme/h.txt': 'hidden',
      'vis/x.tmp': 'tmp',
      'vis/keep.txt': 'keep',
      'ü n#i?.txt': 'odd name',
    });
    other = makeTree({});
    const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
    expect((await post('/api/admin/storage/create', localStorage('/local', root))).code).toBe(200);
    expect((await post('/api/admin/storage/create', localStorage('/other', other))).code).toBe(200);
    expect((await post('/api/admin/storage/create', { mount_path: '/url', driver: 'DavTestUrl', addition: '{}', webdav_policy: '302_redirect' })).code).toBe(200);
    for (const m of [
      { path: '/local', hide: '^hideme$' },
      { path: '/local/vis', hide: '\\.tmp$' },
      { path: '/local/secret', password: 'pw', p_sub: true },
    ]) {
      expect((await post('/api/admin/meta/create', m)).code).toBe(200);
    }
    const users = [
      { username: 'reader', password: 'r-pass', permission: READ },
      { username: 'writer', password: 'w-pass', permission: READ | MANAGE | ALL_WRITE },
      { username: 'writer2', password: 'w2-pass', permission: READ | MANAGE | ALL_WRITE },
      { username: 'uploader', password: 'u-pass', permission: READ | MANAGE | 8 },
      { username: 'nodav', password: 'n-pass', permission: ALL_WRITE },
      { username: 'off', password: 'o-pass', permission: READ, disabled: true },
      { username: 'based', password: 'b-pass', permission: READ | MANAGE | ALL_WRITE, base_path: '/local/dir' },
    ];
    for (const u of users) expect((await post('/api/admin/user/create', u)).code).toBe(200);
    base = await listen(s);
  });
  afterAll(async () => {
    await s.destroy();
    await new Promise((r) => upstream.close(r));
    rmSync(root, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });

  describe('authentication and permission bits', () => {
    it('no credentials: 401 with a Basic challenge; OPTIONS passes as the guest', async () => {
      const res = await dav('PROPFIND', '/dav/', undefined);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="alist"');
      const opt = await dav('OPTIONS', '/dav/local/', undefined);
      expect(opt.statusCode).toBe(200);
      expect(opt.headers.dav).toBe('1, 2');
      // Windows' redirector probes the server root first
      const rootProbe = await dav('OPTIONS', '/', undefined);
      expect(rootProbe.statusCode).toBe(200);
      expect(rootProbe.headers['ms-author-via']).toBe('DAV');
    });

    it('Basic with the password, Bearer with the admin token; a wrong password is 401', async () => {
      expect((await propfind('/dav/local', ADMIN, '0')).statusCode).toBe(207);
      const token = s.core.settings.get('token');
      expect((await propfind('/dav/local', `Bearer ${token}`, '0')).statusCode).toBe(207);
      expect((await propfind('/dav/local', 'Bearer not-the-token', '0')).statusCode).toBe(401);
      // A login token of the HTTP API is not an admin token
      expect((await propfind('/dav/local', `Bearer ${admin}`, '0')).statusCode).toBe(401);
      expect((await propfind('/dav/local', basic('reader', 'wrong'), '0')).statusCode).toBe(401);
    });

    it('without the WebDAV read bit, or disabled: 403', async () => {
      expect((await propfind('/dav/local', basic('nodav', 'n-pass'), '0')).statusCode).toBe(403);
      expect((await propfind('/dav/local', basic('off', 'o-pass'), '0')).statusCode).toBe(403);
    });

    it('the read bit reads; changes need the manage bit', async () => {
      expect((await dav('GET', '/dav/local/a.txt', READER)).body).toBe('hello webdav');
      expect((await dav('PUT', '/dav/local/r.txt', READER, { body: 'x' })).statusCode).toBe(403);
      expect((await dav('MKCOL', '/dav/local/rdir', READER)).statusCode).toBe(403);
      expect((await dav('DELETE', '/dav/local/a.txt', READER)).statusCode).toBe(403);
      expect((await dav('COPY', '/dav/local/a.txt', READER, { headers: { destination: '/dav/local/a2.txt' } })).statusCode).toBe(403);
      expect((await dav('MOVE', '/dav/local/a.txt', READER, { headers: { destination: '/dav/local/a2.txt' } })).statusCode).toBe(403);
      expect((await dav('PROPPATCH', '/dav/local/a.txt', READER, { body: '<D:propertyupdate xmlns:D="DAV:"/>' })).statusCode).toBe(403);
      expect(existsSync(file('r.txt'))).toBe(false);
      expect(existsSync(file('a.txt'))).toBe(true);
    });

    it('the manage bit alone is not enough: each change needs its bit as on the HTTP API', async () => {
      const U = basic('uploader', 'u-pass');
      expect((await dav('PUT', '/dav/local/up.txt', U, { body: 'up' })).statusCode).toBe(201);
      expect(readFileSync(file('up.txt'), 'utf8')).toBe('up');
      expect((await dav('MKCOL', '/dav/local/updir', U)).statusCode).toBe(201);
      // no remove, rename, move or copy bits
      expect((await dav('DELETE', '/dav/local/up.txt', U)).statusCode).toBe(403);
      expect((await dav('MOVE', '/dav/local/up.txt', U, { headers: { destination: '/dav/local/up2.txt' } })).statusCode).toBe(403);
      expect((await dav('MOVE', '/dav/local/up.txt', U, { headers: { destination: '/dav/local/updir/up.txt' } })).statusCode).toBe(403);
      expect((await dav('COPY', '/dav/local/up.txt', U, { headers: { destination: '/dav/local/up3.txt' } })).statusCode).toBe(403);
      expect(readdirSync(root).filter((n) => n.startsWith('up'))).toEqual(['up.txt', 'updir']);
    });

    it('five wrong passwords lock the IP out with 429, as the login route', async () => {
      const fresh = await startServer(backend);
      try {
        for (let i = 0; i < 5; i++) {
          expect((await fresh.inject({ method: 'PROPFIND' as 'GET', url: '/dav/', headers: { authorization: basic('admin', 'nope'), depth: '0' } })).statusCode).toBe(401);
        }
        const locked = await fresh.inject({ method: 'PROPFIND' as 'GET', url: '/dav/', headers: { authorization: basic('admin', ADMIN_PASSWORD), depth: '0' } });
        expect(locked.statusCode).toBe(429);
      } finally {
        await fresh.destroy();
      }
    });
  });

  describe('path rules, as on the HTTP API', () => {
    it('hidden entries are left out of listings and not found; the admin sees them', async () => {
      const listed = hrefs((await propfind('/dav/local/', READER)).body);
      expect(listed).toContain('/dav/local/a.txt');
      expect(listed).toContain('/dav/local/dir/');
      expect(listed).not.toContain('/dav/local/hideme/');
      expect(hrefs((await propfind('/dav/local/vis', READER)).body)).toEqual(['/dav/local/vis/', '/dav/local/vis/keep.txt']);
      expect((await dav('GET', '/dav/local/hideme/h.txt', READER)).statusCode).toBe(404);
      expect((await propfind('/dav/local/hideme', READER, '0')).statusCode).toBe(404);
      expect((await dav('GET', '/dav/local/vis/x.tmp', READER)).statusCode).toBe(404);
      // Depth infinity does not descend into hidden folders either
      expect(hrefs((await propfind('/dav/local/', READER, 'infinity')).body).some((h) => h.includes('hideme'))).toBe(false);
      expect(hrefs((await propfind('/dav/local/', ADMIN)).body)).toContain('/dav/local/hideme/');
      expect((await dav('GET', '/dav/local/hideme/h.txt', ADMIN)).body).toBe('hidden');
    });

    it('changing a hidden entry is refused whatever exists', async () => {
      const W = WRITER;
      expect((await dav('PUT', '/dav/local/vis/new.tmp', W, { body: 'x' })).statusCode).toBe(403);
      expect((await dav('DELETE', '/dav/local/vis/x.tmp', W)).statusCode).toBe(403);
      expect((await dav('DELETE', '/dav/local/vis/gone.tmp', W)).statusCode).toBe(403);
      expect((await dav('MOVE', '/dav/local/vis/x.tmp', W, { headers: { destination: '/dav/local/x.txt' } })).statusCode).toBe(403);
      expect((await dav('COPY', '/dav/local/a.txt', W, { headers: { destination: '/dav/local/vis/a.tmp' } })).statusCode).toBe(403);
      expect(existsSync(file('vis/new.tmp'))).toBe(false);
      expect(existsSync(file('vis/a.tmp'))).toBe(false);
      expect(existsSync(file('vis/x.tmp'))).toBe(true);
    });

    it('a password rule: 403 for users without the bypass bit; the guest passes with the path password', async () => {
      expect((await dav('GET', '/dav/local/secret/s.txt', READER)).statusCode).toBe(403);
      expect((await propfind('/dav/local/secret', READER)).statusCode).toBe(403);
      expect((await dav('GET', '/dav/local/secret/s.txt', ADMIN)).body).toBe('protected bytes');
      const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.role === 1);
      await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false, permission: READ } });
      try {
        expect((await dav('GET', '/dav/local/a.txt', undefined)).body).toBe('hello webdav');
        expect((await dav('GET', '/dav/local/secret/s.txt', undefined)).statusCode).toBe(403);
        expect((await dav('GET', '/dav/local/secret/s.txt', basic(guest.username, 'wrong'))).statusCode).toBe(403);
        expect((await dav('GET', '/dav/local/secret/s.txt', basic(guest.username, 'pw'))).body).toBe('protected bytes');
        expect((await dav('PUT', '/dav/local/g.txt', undefined, { body: 'g' })).statusCode).toBe(403);
      } finally {
        await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } });
      }
      expect((await dav('GET', '/dav/local/a.txt', undefined)).statusCode).toBe(401);
    });

    it('base_path: the user sees their folder as /dav/ and cannot climb out', async () => {
      const B = basic('based', 'b-pass');
      expect(hrefs((await propfind('/dav/', B)).body)).toEqual(['/dav/', '/dav/sub/', '/dav/b.txt']);
      expect((await dav('GET', '/dav/b.txt', B)).body).toBe('bee');
      expect((await dav('GET', '/dav/../a.txt', B)).statusCode).toBe(404);
      expect((await dav('GET', '/dav/%2e%2e/a.txt', B)).statusCode).toBe(404);
      expect((await dav('COPY', '/dav/b.txt', B, { headers: { destination: "http://localhost:80/dav/sub/..%2F..%2Fescaped.txt" } })).statusCode).toBe(201);
      expect(existsSync(file('dir/escaped.txt'))).toBe(true);
      expect(existsSync(file('escaped.txt'))).toBe(false);
    });
  });

  describe('methods', () => {
    it('PROPFIND: depth 0, 1 and infinity, live properties, encoded hrefs, named properties', async () => {
      const d0 = await propfind('/dav/local/a.txt', ADMIN, '0');
      expect(d0.statusCode).toBe(207);
      expect(d0.body).toContain('<D:getcontentlength>12</D:getcontentlength>');
      expect(d0.body).toContain('<D:getcontenttype>text/plain</D:getcontenttype>');
      expect(d0.body).toMatch(/<D:getetag>"[0-9a-f]+c"<\/D:getetag>/);
      expect(hrefs((await propfind('/dav/local/dir', ADMIN, 'infinity')).body)).toEqual(expect.arrayContaining(['/dav/local/dir/', '/dav/local/dir/sub/', '/dav/local/dir/sub/c.txt', '/dav/local/dir/b.txt']));
      expect(hrefs((await propfind('/dav/local/dir', ADMIN, '1')).body)).not.toContain('/dav/local/dir/sub/c.txt');
      const odd = (await propfind('/dav/local', ADMIN)).body;
      expect(odd).toContain('<D:href>/dav/local/%C3%BC%20n%23i%3F.txt</D:href>');
      const named = await propfind('/dav/local/a.txt', ADMIN, '0', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/><D:nope/></D:prop></D:propfind>');
      expect(named.body).toContain('<D:getcontentlength>12</D:getcontentlength>');
      expect(named.body).toMatch(/<D:nope\/><\/D:prop><D:status>HTTP\/1.1 404 Not Found/);
      expect(named.body).not.toContain('getlastmodified');
      // Windows and Kodi start at the mount without a trailing slash, with an empty body
      expect((await propfind('/dav', ADMIN, '1')).statusCode).toBe(207);
      expect(hrefs((await propfind('/dav', ADMIN, '1')).body)).toContain('/dav/local/');
    });

    it('bad requests get 4xx, never 500', async () => {
      expect((await propfind('/dav/local', ADMIN, '0', '<D:propfind xmlns:D="DAV:"><D:prop>')).statusCode).toBe(400);
      expect((await propfind('/dav/local', ADMIN, '2')).statusCode).toBe(400);
      expect((await propfind('/dav/local/missing', ADMIN, '0')).statusCode).toBe(404);
      expect((await dav('COPY', '/dav/local/a.txt', ADMIN)).statusCode).toBe(400);
      expect((await dav('COPY', '/dav/local/a.txt', ADMIN, { headers: { destination: 'http://elsewhere.example/dav/local/x' } })).statusCode).toBe(502);
      expect((await dav('MOVE', '/dav/local/a.txt', ADMIN, { headers: { destination: '/api/fs/list' } })).statusCode).toBe(502);
      expect((await dav('GET', '/dav/local/%E0%A4%A', ADMIN)).statusCode).toBe(400);
      expect((await dav('PUT', '/dav/local/no/parent.txt', ADMIN, { body: 'x' })).statusCode).toBe(409);
      expect((await dav('LOCK', '/dav/local/a.txt', ADMIN, { body: '<D:lockinfo xmlns:D="DAV:"/>' })).statusCode).toBe(400);
      expect((await dav('PUT', '/dav/local/a.txt', ADMIN, { headers: { if: '(<unterminated' }, body: 'x' })).statusCode).toBe(400);
      expect(readFileSync(file('a.txt'), 'utf8')).toBe('hello webdav');
    });

    it('GET with Range, HEAD without a body, GET on a folder 405, HEAD on a folder 200', async () => {
      const part = await dav('GET', '/dav/local/a.txt', ADMIN, { headers: { range: 'bytes=6-11' } });
      expect(part.statusCode).toBe(206);
      expect(part.body).toBe('webdav');
      expect(part.headers['content-range']).toBe('bytes 6-11/12');
      const head = await dav('HEAD', '/dav/local/a.txt', ADMIN);
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-length']).toBe('12');
      expect(head.headers.etag).toMatch(/^"[0-9a-f]+c"$/);
      expect(head.body).toBe('');
      expect((await dav('GET', '/dav/local/dir', ADMIN)).statusCode).toBe(405);
      expect((await dav('HEAD', '/dav/local/dir/', ADMIN)).statusCode).toBe(200);
      const etag = head.headers.etag as string;
      expect((await dav('GET', '/dav/local/a.txt', ADMIN, { headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    });

    it('PUT streams into place: new 201, replaced 201, X-OC-Mtime sets the time, chunked bodies of macOS', async () => {
      expect((await dav('PUT', '/dav/local/put.bin', WRITER, { body: 'first' })).statusCode).toBe(201);
      const res = await dav('PUT', '/dav/local/put.bin', WRITER, { body: 'second version', headers: { 'x-oc-mtime': '1600000000' } });
      expect(res.statusCode).toBe(201);
      expect(res.headers['x-oc-mtime']).toBe('accepted');
      expect(res.headers.etag).toBeTruthy();
      expect(readFileSync(file('put.bin'), 'utf8')).toBe('second version');
      expect(statSync(file('put.bin')).mtimeMs).toBe(1600000000 * 1000);
      // Finder: chunked transfer with the size in X-Expected-Entity-Length
      const status = await rawRequest(base, [
        'PUT /dav/local/finder.txt HTTP/1.1',
        `Host: ${new URL(base).host}`,
        `Authorization: ${WRITER}`,
        'Transfer-Encoding: chunked',
        'X-Expected-Entity-Length: 11',
        'Connection: close',
        '',
        '6\r\nfinder\r\n5\r\n bits\r\n0\r\n\r\n',
      ]);
      expect(status).toBe(201);
      expect(readFileSync(file('finder.txt'), 'utf8')).toBe('finder bits');
      expect((await dav('PUT', '/dav/local/dir', WRITER, { body: 'x' })).statusCode).toBe(405);
    });

    it('an interrupted PUT leaves the old file and no temporary file', async () => {
      await dav('PUT', '/dav/local/keep.bin', WRITER, { body: 'old content' });
      const sock = net.connect(Number(new URL(base).port), '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      sock.write(`PUT /dav/local/keep.bin HTTP/1.1\r\nHost: x\r\nAuthorization: ${WRITER}\r\nContent-Length: 1000000\r\n\r\n`);
      sock.write(Buffer.alloc(300_000, 1));
      await new Promise((r) => setTimeout(r, 200));
      sock.destroy();
      // The server removes the temporary file once it has seen the connection end: a fixed 300 ms
      // was too short under parallel test files; wait for it (5 s at most), then check.
      await waitUntil(() => !existsSync(file('.atrium-tmp'))).catch(() => {});
      expect(readFileSync(file('keep.bin'), 'utf8')).toBe('old content');
      expect(existsSync(file('.atrium-tmp'))).toBe(false);
      // A body longer than declared is refused too
      expect((await dav('PUT', '/dav/local/keep.bin', WRITER, { body: 'x'.repeat(20), headers: { 'x-expected-entity-length': '5' } })).statusCode).toBe(400);
      expect(readFileSync(file('keep.bin'), 'utf8')).toBe('old content');
    });

    it('ignore_system_files refuses .DS_Store and ._ files', async () => {
      await s.core.settings.set('ignore_system_files', 'true');
      try {
        expect((await dav('PUT', '/dav/local/._a.txt', WRITER, { body: 'x' })).statusCode).toBe(403);
        expect((await dav('PUT', '/dav/local/.DS_Store', WRITER, { body: 'x' })).statusCode).toBe(403);
      } finally {
        await s.core.settings.set('ignore_system_files', 'false');
      }
      expect(existsSync(file('._a.txt'))).toBe(false);
    });

    it('MKCOL, DELETE of a folder, MKCOL again on it', async () => {
      expect((await dav('MKCOL', '/dav/local/newdir/', WRITER)).statusCode).toBe(201);
      expect((await dav('MKCOL', '/dav/local/newdir', WRITER)).statusCode).toBe(405);
      expect((await dav('MKCOL', '/dav/local/x/y', WRITER)).statusCode).toBe(409);
      await dav('PUT', '/dav/local/newdir/f.txt', WRITER, { body: 'f' });
      expect((await dav('DELETE', '/dav/local/newdir/', WRITER)).statusCode).toBe(204);
      expect(existsSync(file('newdir'))).toBe(false);
      expect((await dav('DELETE', '/dav/local/newdir', WRITER)).statusCode).toBe(404);
      expect((await dav('DELETE', '/dav/local', WRITER)).statusCode).toBe(403);
      expect(existsSync(root)).toBe(true);
    });

    it('COPY and MOVE: Overwrite, folders, across storages', async () => {
      await dav('PUT', '/dav/local/cm.txt', WRITER, { body: 'copy me' });
      expect((await dav('COPY', '/dav/local/cm.txt', WRITER, { headers: { destination: "http://localhost/dav/local/cm2.txt" } })).statusCode).toBe(201);
      expect((await dav('COPY', '/dav/local/a.txt', WRITER, { headers: { destination: '/dav/local/cm2.txt', overwrite: 'F' } })).statusCode).toBe(412);
      expect((await dav('COPY', '/dav/local/a.txt', WRITER, { headers: { destination: '/dav/local/cm2.txt' } })).statusCode).toBe(204);
      expect(readFileSync(file('cm2.txt'), 'utf8')).toBe('hello webdav');
      // A folder, then renamed within the storage
      expect((await dav('COPY', '/dav/local/dir/', WRITER, { headers: { destination: '/dav/local/dir2/' } })).statusCode).toBe(201);
      expect(readFileSync(file('dir2/sub/c.txt'), 'utf8')).toBe('sea');
      expect((await dav('MOVE', '/dav/local/dir2', WRITER, { headers: { destination: '/dav/local/dir3' } })).statusCode).toBe(201);
      expect(existsSync(file('dir2'))).toBe(false);
      expect(readFileSync(file('dir3/b.txt'), 'utf8')).toBe('bee');
      // A file moved to another storage, inline
      expect((await dav('MOVE', '/dav/local/cm.txt', WRITER, { headers: { destination: '/dav/other/moved.txt' } })).statusCode).toBe(201);
      expect(readFileSync(path.join(other, 'moved.txt'), 'utf8')).toBe('copy me');
      expect(existsSync(file('cm.txt'))).toBe(false);
      // A folder copied to another storage: a copy task
      expect((await dav('COPY', '/dav/local/dir3', WRITER, { headers: { destination: '/dav/other/dir3' } })).statusCode).toBe(201);
      await Promise.all(s.core.tasks.list('copy').map((t) => t.done));
      expect(readFileSync(path.join(other, 'dir3/sub/c.txt'), 'utf8')).toBe('sea');
      // Into itself
      expect((await dav('MOVE', '/dav/local/dir3', WRITER, { headers: { destination: '/dav/local/dir3/in' } })).statusCode).toBe(400);
    });

    it('PROPPATCH stores dead properties; live ones are refused with 403', async () => {
      const body =
        '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop>' +
        '<Z:Win32LastModifiedTime>Wed, 01 Jan 2020 00:00:00 GMT</Z:Win32LastModifiedTime></D:prop></D:set></D:propertyupdate>';
      const res = await dav('PROPPATCH', '/dav/local/a.txt', WRITER, { body });
      expect(res.statusCode).toBe(207);
      expect(res.body).toContain('HTTP/1.1 200 OK');
      const got = await propfind('/dav/local/a.txt', WRITER, '0', '<D:propfind xmlns:D="DAV:"><D:prop><Z:Win32LastModifiedTime xmlns:Z="urn:schemas-microsoft-com:"/></D:prop></D:propfind>');
      expect(got.body).toContain('Wed, 01 Jan 2020 00:00:00 GMT');
      const live = await dav('PROPPATCH', '/dav/local/a.txt', WRITER, { body: '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:getetag>x</D:getetag></D:prop></D:set></D:propertyupdate>' });
      expect(live.body).toContain('HTTP/1.1 403 Forbidden');
    });

    it('LOCK: a lock blocks other writers, and its token works only for the user who took it', async () => {
      await dav('PUT', '/dav/local/locked.txt', WRITER, { body: 'v1' });
      const lockBody = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>writer</D:owner></D:lockinfo>';
      const lock = await dav('LOCK', '/dav/local/locked.txt', WRITER, { body: lockBody, headers: { timeout: 'Second-600' } });
      expect(lock.statusCode).toBe(200);
      const token = (lock.headers['lock-token'] as string).replace(/[<>]/g, '');
      expect(token).toMatch(/^opaquelocktoken:/);
      expect(lock.body).toContain('<D:timeout>Second-600</D:timeout>');
      expect((await dav('PUT', '/dav/local/locked.txt', WRITER2, { body: 'v2' })).statusCode).toBe(423);
      expect((await dav('PUT', '/dav/local/locked.txt', WRITER2, { body: 'v2', headers: { if: `(<${token}>)` } })).statusCode).toBe(423);
      expect((await dav('DELETE', '/dav/local/locked.txt', WRITER2)).statusCode).toBe(423);
      expect((await dav('LOCK', '/dav/local/locked.txt', WRITER2, { body: lockBody })).statusCode).toBe(423);
      expect((await dav('UNLOCK', '/dav/local/locked.txt', WRITER2, { headers: { 'lock-token': `<${token}>` } })).statusCode).toBe(403);
      expect((await dav('PUT', '/dav/local/locked.txt', WRITER, { body: 'v3', headers: { if: `(<${token}>)` } })).statusCode).toBe(201);
      expect(readFileSync(file('locked.txt'), 'utf8')).toBe('v3');
      expect((await propfind('/dav/local/locked.txt', READER, '0')).body).toContain(token);
      expect((await dav('UNLOCK', '/dav/local/locked.txt', WRITER, { headers: { 'lock-token': `<${token}>` } })).statusCode).toBe(204);
      expect((await dav('PUT', '/dav/local/locked.txt', WRITER2, { body: 'v4' })).statusCode).toBe(201);
      // Locking an unmapped URL creates an empty file
      const fresh = await dav('LOCK', '/dav/local/lock-new.txt', WRITER, { body: lockBody });
      expect(fresh.statusCode).toBe(201);
      expect(readFileSync(file('lock-new.txt'), 'utf8')).toBe('');
      expect((await dav('LOCK', '/dav/local/a.txt', READER, { body: lockBody })).statusCode).toBe(403);
    });
  });

  describe('webdav_policy', () => {
    const setPolicy = async (policy: string, downProxy = '') => {
      const st = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: any) => x.mount_path === '/url');
      expect((await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...st, webdav_policy: policy, down_proxy_url: downProxy } })).code).toBe(200);
    };

    it('302_redirect sends the client to the driver link; HEAD answers without it', async () => {
      await setPolicy('302_redirect');
      const res = await dav('GET', '/dav/url/remote.bin', READER);
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(`${upstreamUrl}/blob`);
      const head = await dav('HEAD', '/dav/url/remote.bin', READER);
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-length']).toBe(String(REMOTE.length));
    });

    it('native_proxy streams the bytes through Atrium', async () => {
      await setPolicy('native_proxy');
      const res = await dav('GET', '/dav/url/remote.bin', READER);
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.equals(REMOTE)).toBe(true);
    });

    it('use_proxy_url redirects to the down proxy with a sign, else proxies', async () => {
      await setPolicy('use_proxy_url', 'https://cdn.example/base/\nhttps://second.example');
      const res = await dav('GET', '/dav/url/remote.bin', READER);
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(`https://cdn.example/base/url/remote.bin?sign=${s.core.signer.sign('/url/remote.bin')}`);
      expect(res.headers['cache-control']).toBe('max-age=0, no-cache, no-store, must-revalidate');
      await setPolicy('use_proxy_url', '');
      const proxied = await dav('GET', '/dav/url/remote.bin', READER);
      expect(proxied.statusCode).toBe(200);
      expect(proxied.rawPayload.equals(REMOTE)).toBe(true);
    });
  });

  describe('the webdav npm client', () => {
    it('lists, writes, reads, moves, copies and deletes', async () => {
      const client = createClient(`${base}/dav/local`, { username: 'writer', password: 'w-pass' });
      await client.createDirectory('/npm');
      await client.putFileContents('/npm/one.txt', 'from the client');
      const list = (await client.getDirectoryContents('/npm')) as FileStat[];
      expect(list.map((f) => [f.basename, f.type, f.size])).toEqual([['one.txt', 'file', 15]]);
      expect(await client.getFileContents('/npm/one.txt', { format: 'text' })).toBe('from the client');
      await client.copyFile('/npm/one.txt', '/npm/two.txt');
      await client.moveFile('/npm/one.txt', '/npm/three.txt');
      expect(await client.exists('/npm/one.txt')).toBe(false);
      const st = (await client.stat('/npm/three.txt')) as FileStat;
      expect(st.size).toBe(15);
      await client.deleteFile('/npm/two.txt');
      expect(readdirSync(file('npm'))).toEqual(['three.txt']);
      const reader = createClient(`${base}/dav/local`, { username: 'reader', password: 'r-pass' });
      await expect(reader.putFileContents('/npm/nope.txt', 'x')).rejects.toThrow(/403/);
    });
  });
});

/** Sends a raw HTTP/1.1 request (lines joined with CRLF) and returns the response status. */
async function rawRequest(base: string, lines: string[]): Promise<number> {
  const sock = net.connect(Number(new URL(base).port), '127.0.0.1');
  let data = '';
  sock.on('data', (b) => (data += b));
  sock.write(lines.join('\r\n'));
  await new Promise((r) => sock.once('close', r));
  return Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1]);
}
