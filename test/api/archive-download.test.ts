import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Every entry of a zip: name → bytes (folders end with / and hold nothing). */
function unzip(buf: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true, strictFileNames: true }, (err, zip) => {
      if (err) return reject(err);
      const out: Record<string, string> = {};
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) {
          out[e.fileName] = '';
          return zip.readEntry();
        }
        zip.openReadStream(e, (err2, rs) => {
          if (err2) return reject(err2);
          const chunks: Buffer[] = [];
          rs.on('data', (c: Buffer) => chunks.push(c));
          rs.on('end', () => {
            out[e.fileName] = Buffer.concat(chunks).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

const NO_ACCESS = 'password is incorrect or you have no permission';

describe.each(ONE_BACKEND)('folder and selection download as one zip on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let bob: string; // no see-hidden, no password bypass, base path /s/shared
  let root: string;

  const archive = (token: string | undefined, body: Record<string, unknown>) =>
    s.inject({ method: 'POST', url: '/api/fs/zip', headers: token ? { authorization: token } : {}, payload: body });

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({
      'shared/photos/a.jpg': 'JPEG-A',
      'shared/photos/deep/b.jpg': 'JPEG-B',
      'shared/photos/empty/': '',
      'shared/photos/secret.jpg': 'HIDDEN',
      'shared/notes.txt': 'notes',
      'shared/locked/in.txt': 'locked bytes',
      'outside.txt': 'not for bob',
    });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    for (const m of [
      { path: '/s/shared/photos', hide: '^secret', h_sub: true },
      { path: '/s/shared/locked', password: 'pw', p_sub: true },
    ]) expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: m })).code).toBe(200);
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'b', base_path: '/s/shared', permission: 0 } });
    bob = await s.login('bob', 'b');
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('streams a folder with its sub folders, empty ones included, bytes as on disk', async () => {
    const r = await archive(admin, { dir: '/s/shared', names: ['photos', 'notes.txt'] });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/zip');
    expect(r.headers['content-disposition']).toContain('attachment; filename="shared.zip"');
    expect(await unzip(r.rawPayload)).toEqual({
      'photos/a.jpg': 'JPEG-A',
      'photos/deep/b.jpg': 'JPEG-B',
      'photos/empty/': '',
      'photos/secret.jpg': 'HIDDEN', // the admin sees hidden entries
      'notes.txt': 'notes',
    });
  });

  it('names the archive after a single entry and reports a dry run without bytes', async () => {
    const r = await archive(admin, { dir: '/s/shared', names: ['photos'] });
    expect(r.headers['content-disposition']).toContain('filename="photos.zip"');
    const dry = await s.api('POST', '/api/fs/zip', { token: admin, body: { dir: '/s/shared', names: ['photos'], dry_run: true } });
    expect(dry).toEqual({ code: 200, message: 'success', data: { files: 3, folders: 1, size: 18 } });
  });

  it('applies the user: base path, hidden entries left out, hidden names refused', async () => {
    const r = await archive(bob, { dir: '/', names: ['photos'] });
    expect(r.statusCode).toBe(200);
    expect(Object.keys(await unzip(r.rawPayload)).sort()).toEqual(['photos/a.jpg', 'photos/deep/b.jpg', 'photos/empty/']);
    const hidden = await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/photos', names: ['secret.jpg'] } });
    expect(hidden).toMatchObject({ code: 403, message: NO_ACCESS });
  });

  it('refuses paths outside the user view and names that are paths', async () => {
    expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/..', names: ['outside.txt'] } })).toMatchObject({ code: 403 });
    expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/', names: ['../../outside.txt'] } })).toMatchObject({ code: 400 });
    expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/', names: ['..'] } })).toMatchObject({ code: 400 });
    expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/', names: [] } })).toMatchObject({ code: 400 });
    // bob's "/" is /s/shared: outside.txt (at /s) does not exist there
    expect((await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/', names: ['outside.txt'] } })).code).not.toBe(200);
  });

  it('asks for the folder password, inside the selection too', async () => {
    expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/', names: ['locked'] } })).toMatchObject({ code: 403, message: NO_ACCESS });
    expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/locked', names: ['in.txt'] } })).toMatchObject({ code: 403 });
    const r = await archive(bob, { dir: '/', names: ['locked'], password: 'pw' });
    expect(await unzip(r.rawPayload)).toEqual({ 'locked/in.txt': 'locked bytes' });
  });

  it('is off when the package_download setting is off', async () => {
    const set = (v: string) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'package_download', value: v }] });
    expect((await set('false')).code).toBe(200);
    try {
      expect(await s.api('POST', '/api/fs/zip', { token: bob, body: { dir: '/', names: ['notes.txt'] } })).toMatchObject({ code: 403, message: 'package download is disabled' });
    } finally {
      expect((await set('true')).code).toBe(200);
    }
    expect((await archive(bob, { dir: '/', names: ['notes.txt'] })).statusCode).toBe(200);
  });

  it('takes the session from a browser form (token field, names as JSON) and refuses without one', async () => {
    const form = new URLSearchParams({ dir: '/', names: JSON.stringify(['notes.txt', 'photos']), token: bob }).toString();
    const r = await s.inject({ method: 'POST', url: '/api/fs/zip', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form });
    expect(r.statusCode).toBe(200);
    expect(Object.keys(await unzip(r.rawPayload)).sort()).toEqual(['notes.txt', 'photos/a.jpg', 'photos/deep/b.jpg', 'photos/empty/']);
    const bad = await s.inject({ method: 'POST', url: '/api/fs/zip', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'dir=/&names=notjson&token=' + bob });
    expect(JSON.parse(bad.body)).toMatchObject({ code: 400 });
    // no token and the guest disabled
    expect(JSON.parse((await archive(undefined, { dir: '/', names: ['notes.txt'] })).body)).toMatchObject({ code: 401 });
  });
});
