import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileEntry, SFTPWrapper } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { basic } from '../webdav/dav-helpers.js';
import { PATH_ATTACKS, SECRETS } from './attacks.js';
import { fingerprint } from './fingerprint.js';

/** Bytes and names of entries the user may not see (hidden by a rule, behind a folder password). */
const HIDDEN_BYTES = 'HIDDEN-BY-RULE-b81d';
const LOCKED_BYTES = 'BEHIND-PASSWORD-4e07';
const HIDDEN_NAMES = ['secret-plans.txt', 'inner-locked.txt'];

/**
 * The same rules on every front: hidden and password-protected entries never show in list, get,
 * dirs, search, raw links, error messages, WebDAV or SFTP for a user who may not see them; and
 * WebDAV and SFTP never reach outside the user's base path or the storage root, whatever the
 * path spelling (dot segments, encodings, Destination headers, renames, symlinks).
 */
describe('disclosure and traversal across the HTTP API, WebDAV and SFTP', () => {
  let s: TestServer;
  let box: string;
  let root: string;
  let admin: string;
  let eve: string;
  let sftpServer: ProtocolListener;
  let sftp: SftpSession;
  const EVE = basic('eve', 'eve-pass');
  let attempts = 0;

  const secretsIn = (text: string) => [...SECRETS, HIDDEN_BYTES, LOCKED_BYTES, ...HIDDEN_NAMES].filter((x) => text.includes(x));
  const dav = async (method: string, url: string, headers: Record<string, string> = {}, body?: string) => {
    attempts++;
    const res = await s.inject({ method: method as 'GET', url, headers: { authorization: EVE, ...headers }, payload: body });
    expect(secretsIn(res.body), `${method} ${url} ${JSON.stringify(headers)}`).toEqual([]);
    // 502 is WebDAV's answer for a Destination outside the server's namespace (RFC 4918 §9.8.5), not a fault.
    if (!((method === 'COPY' || method === 'MOVE') && res.statusCode === 502)) expect(res.statusCode, `${method} ${url} ${JSON.stringify(headers)}`).toBeLessThan(500);
    return res;
  };
  /** Runs an SFTP call that is expected to fail or to stay inside; returns its result or error text. */
  const sftpTry = async (what: string, fn: (c: SFTPWrapper) => Promise<unknown>) => {
    attempts++;
    try {
      const v = await fn(sftp.sftp);
      const text = Buffer.isBuffer(v) ? v.toString() : JSON.stringify(v ?? null);
      expect(secretsIn(text), what).toEqual([]);
      return v;
    } catch (err) {
      expect(secretsIn(String((err as Error).message)), what).toEqual([]);
      return err;
    }
  };
  const readWhole = (c: SFTPWrapper, p: string) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      c.createReadStream(p)
        .on('data', (b: Buffer) => chunks.push(b))
        .on('end', () => resolve(Buffer.concat(chunks)))
        .on('error', reject);
    });
  const writeWhole = (c: SFTPWrapper, p: string, body: string) =>
    new Promise<void>((resolve, reject) => {
      const w = c.createWriteStream(p);
      w.on('error', reject);
      w.on('close', () => resolve());
      w.end(body);
    });

  beforeAll(async () => {
    box = mkdtempSync(path.join(os.tmpdir(), 'atrium-fronts-'));
    root = path.join(box, 'root');
    mkdirSync(path.join(box, 'outside'), { recursive: true });
    writeFileSync(path.join(box, 'outside/secret.txt'), SECRETS[0]!);
    mkdirSync(path.join(root, 'other'), { recursive: true });
    writeFileSync(path.join(root, 'other/private.txt'), SECRETS[1]!);
    mkdirSync(path.join(root, 'u/pub'), { recursive: true });
    mkdirSync(path.join(root, 'u/locked'), { recursive: true });
    writeFileSync(path.join(root, 'u/pub/visible.txt'), 'visible');
    writeFileSync(path.join(root, 'u/pub/secret-plans.txt'), HIDDEN_BYTES);
    writeFileSync(path.join(root, 'u/locked/inner-locked.txt'), LOCKED_BYTES);
    writeFileSync(path.join(root, 'u/file.txt'), 'mine');
    symlinkSync(path.join(box, 'outside'), path.join(root, 'u/link-out'));
    symlinkSync('../../outside/secret.txt', path.join(root, 'u/rel-link.txt'));

    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
    expect((await post('/api/admin/storage/create', localStorage('/s', root))).code).toBe(200);
    expect((await post('/api/admin/meta/create', { path: '/s/u/pub', hide: '^secret', h_sub: true })).code).toBe(200);
    expect((await post('/api/admin/meta/create', { path: '/s/u/locked', password: 'pw', p_sub: true })).code).toBe(200);
    const perms = 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048;
    expect((await post('/api/admin/user/create', { username: 'eve', password: 'eve-pass', base_path: '/s/u', permission: perms })).code).toBe(200);
    eve = await s.login('eve', 'eve-pass');
    expect((await post('/api/admin/setting/save', [{ key: 'search_index', value: 'database' }])).code).toBe(200);
    expect((await post('/api/admin/index/build', {})).code).toBe(200);
    await s.core.search.indexer.idle();
    await s.core.search.indexer.idle();
    sftpServer = await startSftp(s);
    sftp = await connectSftp(sftpServer.port, { username: 'eve', password: 'eve-pass' });
  });
  afterAll(async () => {
    sftp?.end();
    await sftpServer?.close();
    await s?.destroy();
    rmSync(box, { recursive: true, force: true });
  });

  it('hidden and password-protected entries never reach the user, on any front', async () => {
    const api = async (url: string, body: unknown) => {
      attempts++;
      const r = await s.api('POST', url, { token: eve, body });
      expect(secretsIn(JSON.stringify(r)), `${url} ${JSON.stringify(body)}`).toEqual([]);
      return r;
    };
    // Control: the admin does find them, so the checks below are about rules, not missing data.
    const adminHits = await s.api('POST', '/api/fs/search', { token: admin, body: { parent: '/', keywords: 'secret', scope: 0, page: 1, per_page: 50 } });
    expect(JSON.stringify(adminHits.data)).toContain('secret-plans.txt');

    expect((await api('/api/fs/list', { path: '/pub' })).data.content.map((o: { name: string }) => o.name)).toEqual(['visible.txt']);
    expect((await api('/api/fs/get', { path: '/pub/secret-plans.txt' })).code).toBe(403);
    expect((await api('/api/fs/list', { path: '/locked' })).code).toBe(403);
    expect((await api('/api/fs/get', { path: '/locked/inner-locked.txt' })).code).toBe(403);
    await api('/api/fs/dirs', { path: '/' });
    for (const keywords of ['secret', 'inner', 'locked', 'txt', 'plans']) {
      await api('/api/fs/search', { parent: '/', keywords, scope: 0, page: 1, per_page: 100 });
    }
    for (const url of ['/d/s/u/pub/secret-plans.txt', '/p/s/u/pub/secret-plans.txt', '/d/s/u/locked/inner-locked.txt', '/p/s/u/locked/inner-locked.txt']) {
      attempts++;
      const r = await s.inject({ method: 'GET', url, headers: { authorization: eve } });
      expect(secretsIn(r.body), url).toEqual([]);
    }
    // Errors of writes aimed at hidden names say nothing either.
    await api('/api/fs/rename', { path: '/pub/secret-plans.txt', name: 'x.txt' });
    await api('/api/fs/copy', { src_dir: '/pub', dst_dir: '/', names: ['secret-plans.txt'] });

    const listing = await dav('PROPFIND', '/dav/pub', { depth: '1' });
    expect(listing.statusCode).toBe(207);
    expect(listing.body).toContain('visible.txt');
    await dav('PROPFIND', '/dav/', { depth: 'infinity' });
    await dav('GET', '/dav/pub/secret-plans.txt');
    await dav('PROPFIND', '/dav/pub/secret-plans.txt', { depth: '0' });
    await dav('PROPFIND', '/dav/locked', { depth: '1' });
    await dav('GET', '/dav/locked/inner-locked.txt');
    await dav('COPY', '/dav/pub/secret-plans.txt', { destination: '/dav/leak.txt' });
    expect(readdirSync(path.join(root, 'u'))).not.toContain('leak.txt');

    const names = (entries: unknown) => (entries as FileEntry[]).map((e) => e.filename);
    expect(names(await sftpTry('readdir /pub', (c) => call(c, 'readdir', '/pub')))).toEqual(['visible.txt']);
    await sftpTry('readdir /', (c) => call(c, 'readdir', '/'));
    await sftpTry('stat hidden', (c) => call(c, 'stat', '/pub/secret-plans.txt'));
    await sftpTry('read hidden', (c) => readWhole(c, '/pub/secret-plans.txt'));
    await sftpTry('readdir locked', (c) => call(c, 'readdir', '/locked'));
    await sftpTry('read locked', (c) => readWhole(c, '/locked/inner-locked.txt'));
    await sftpTry('rename hidden', (c) => call(c, 'rename', '/pub/secret-plans.txt', '/found.txt'));
    expect(readFileSync(path.join(root, 'u/pub/secret-plans.txt'), 'utf8')).toBe(HIDDEN_BYTES);
  });

  it('WebDAV and SFTP stay inside the base path and the storage root, whatever the path says', async () => {
    const before = fingerprint(box, path.join(root, 'u'));
    for (const raw of PATH_ATTACKS) {
      const enc = raw
        .split('/')
        .map((seg) => (/%[0-9a-f]{2}/i.test(seg) ? seg : encodeURIComponent(seg)))
        .join('/');
      const url = `/dav/${enc.replace(/^\/+/, '')}`;
      for (const method of ['PROPFIND', 'GET', 'HEAD', 'DELETE', 'MKCOL', 'PROPPATCH', 'LOCK']) {
        await dav(method, url, { depth: '1', 'content-type': 'application/xml' }, method === 'LOCK' ? '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>' : undefined);
      }
      await dav('PUT', `${url}/pwned.txt`, {}, 'PWNED');
      await dav('PUT', url, {}, 'PWNED');
      for (const method of ['COPY', 'MOVE']) {
        await dav(method, '/dav/file.txt', { destination: `http://localhost:80${url}/x.txt`, overwrite: 'T' });
        await dav(method, '/dav/file.txt', { destination: url, overwrite: 'T' });
        await dav(method, url, { destination: '/dav/grabbed', overwrite: 'T' });
      }

      const p = raw.replace(/%2e/gi, '.');
      await sftpTry(`realpath ${raw}`, async (c) => {
        const real = await call<string>(c, 'realpath', p);
        // The client's / is the base path: a real path is always inside it, never above.
        expect(real.startsWith('/'), real).toBe(true);
        expect(real.includes('..'), real).toBe(false);
        return real;
      });
      await sftpTry(`stat ${raw}`, (c) => call(c, 'stat', p));
      await sftpTry(`readdir ${raw}`, (c) => call(c, 'readdir', p));
      await sftpTry(`read ${raw}`, (c) => readWhole(c, p));
      await sftpTry(`read ${raw}/secret.txt`, (c) => readWhole(c, `${p}/secret.txt`));
      await sftpTry(`read ${raw}/private.txt`, (c) => readWhole(c, `${p}/private.txt`));
      await sftpTry(`write ${raw}`, (c) => writeWhole(c, `${p}/pwned.txt`, 'PWNED'));
      await sftpTry(`mkdir ${raw}`, (c) => call(c, 'mkdir', `${p}/made`));
      await sftpTry(`rename into ${raw}`, (c) => call(c, 'rename', '/file.txt', `${p}/moved.txt`));
      await sftpTry(`rename from ${raw}`, (c) => call(c, 'rename', `${p}/private.txt`, '/got.txt'));
      await sftpTry(`remove ${raw}`, (c) => call(c, 'unlink', `${p}/private.txt`));
      await sftpTry(`rmdir ${raw}`, (c) => call(c, 'rmdir', p));
      await sftpTry(`setstat ${raw}`, (c) => call(c, 'utimes', `${p}/private.txt`, new Date(0), new Date(0)));
      // Put file.txt back if an attack string happened to name a legitimate place inside.
      if (!readdirSync(path.join(root, 'u')).includes('file.txt')) writeFileSync(path.join(root, 'u/file.txt'), 'mine');
    }
    expect(fingerprint(box, path.join(root, 'u'))).toEqual(before);
    expect(attempts).toBeGreaterThan(900);
    console.log(`fronts: ${attempts} WebDAV and SFTP requests`);
  });
});
