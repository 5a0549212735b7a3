import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Client as FtpClient } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { TRASH_DIR } from '../../src/fs/trash.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { client, startS3 } from '../s3/s3-helpers.js';

const ALL = 1 | 2 | 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048;
const PASS = 'trash pass 1';
const DAY = 86_400_000;

/**
 * Each storage's trash: a delete from any front moves the object into the storage's hidden trash
 * folder (bytes on disk), a restore puts identical bytes back, purge and the retention sweep
 * delete for good; users see only their own entries; the trash is reachable through no front.
 */
describe.each(BACKENDS)('the trash on $name', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let alice: string;
  let bob: string;
  let sftpSrv: { port: number; close(): Promise<void> };
  let ftpSrv: ProtocolListener;
  let s3: { listener: ProtocolListener; endpoint: string };
  let sftp: SftpSession;
  let ftp: FtpClient;
  const disk = (rel: string) => path.join(root, rel);
  const trashed = () => (existsSync(disk(TRASH_DIR)) ? readdirSync(disk(TRASH_DIR)).flatMap((id) => readdirSync(disk(`${TRASH_DIR}/${id}`)).map((n) => `${id}/${n}`)) : []);
  const api = (url: string, token: string, body: unknown) => s.api('POST', url, { token, body });
  const basic = (u: string) => `Basic ${Buffer.from(`${u}:${PASS}`).toString('base64')}`;

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'a/api.txt': 'api bytes', 'a/dav.txt': 'dav bytes', 'a/sftp.txt': 'sftp bytes', 'a/ftp.txt': 'ftp bytes', 'a/s3.txt': 's3 bytes', 'a/folder/inner.txt': 'inner', 'b/bob.txt': 'bob bytes', 'a/old.txt': 'old', 'a/perm.txt': 'perm' });
    admin = await s.login();
    expect((await api('/api/admin/storage/create', admin, localStorage('/disk', root, { trash: '' }))).code).toBe(200);
    for (const u of ['alice', 'bob']) expect((await api('/api/admin/user/create', admin, { username: u, password: PASS, base_path: '/disk', permission: ALL })).code).toBe(200);
    alice = await s.login('alice', PASS);
    bob = await s.login('bob', PASS);
    sftpSrv = await startSftp(s);
    ftpSrv = await startFtpServer(s.core, '127.0.0.1:0');
    s3 = await startS3(s, [{ name: 'bkt', path: '/disk/a' }]);
    sftp = await connectSftp(sftpSrv.port, { username: 'alice', password: PASS });
    ftp = new FtpClient(10_000);
    await ftp.access({ host: '127.0.0.1', port: ftpSrv.port, user: 'alice', password: PASS });
  });
  afterAll(async () => {
    ftp?.close();
    sftp?.end();
    await sftpSrv?.close();
    await ftpSrv?.close();
    await s3?.listener.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('a delete from each front lands in the trash with who, where and when; the bytes are kept', async () => {
    expect((await api('/api/fs/remove', alice, { dir: '/a', names: ['api.txt', 'folder'] })).code).toBe(200);
    expect((await s.inject({ method: 'DELETE', url: '/dav/a/dav.txt', headers: { authorization: basic('alice') } })).statusCode).toBe(204);
    await call(sftp.sftp, 'unlink', '/a/sftp.txt');
    await ftp.remove('/a/ftp.txt');
    await client(s3.endpoint).send(new DeleteObjectCommand({ Bucket: 'bkt', Key: 's3.txt' }));
    for (const n of ['api.txt', 'folder', 'dav.txt', 'sftp.txt', 'ftp.txt', 's3.txt']) expect(existsSync(disk(`a/${n}`)), n).toBe(false);
    const inTrash = trashed();
    expect(inTrash.map((t) => t.split('/')[1]).sort()).toEqual(['api.txt', 'dav.txt', 'folder', 'ftp.txt', 's3.txt', 'sftp.txt']);
    const api1 = inTrash.find((t) => t.endsWith('/api.txt'))!;
    expect(readFileSync(disk(`${TRASH_DIR}/${api1}`), 'utf8')).toBe('api bytes');
    expect(readFileSync(disk(`${TRASH_DIR}/${inTrash.find((t) => t.endsWith('/folder'))!}/inner.txt`), 'utf8')).toBe('inner');

    const listed = await api('/api/fs/trash/list', alice, { path: '/a' });
    expect(listed.code).toBe(200);
    // S3 signs in with the server's key pair, which acts as the admin: that entry is the admin's
    expect(listed.data.total).toBe(5);
    const byName = new Map(listed.data.content.map((e: { name: string }) => [e.name, e]));
    expect(byName.get('api.txt')).toMatchObject({ path: '/a/api.txt', size: 9, is_dir: false, deleted_by: 'alice', front: 'api' });
    expect(byName.get('folder')).toMatchObject({ is_dir: true, front: 'api' });
    expect(byName.get('dav.txt')).toMatchObject({ front: 'webdav' });
    expect(byName.get('sftp.txt')).toMatchObject({ front: 'sftp' });
    expect(byName.get('ftp.txt')).toMatchObject({ front: 'ftp' });
    expect(byName.has('s3.txt')).toBe(false);
    const all = await api('/api/fs/trash/list', admin, { path: '/disk/a' });
    expect(all.data.content.find((e: { name: string }) => e.name === 's3.txt')).toMatchObject({ path: '/disk/a/s3.txt', front: 's3', deleted_by: 'admin' });
  });

  it('no front lists or reaches the trash folder', async () => {
    const names = (r: { data: { content: Array<{ name: string }> | null } }) => (r.data.content ?? []).map((o) => o.name);
    expect(names(await api('/api/fs/list', admin, { path: '/disk', refresh: true }))).not.toContain(TRASH_DIR);
    expect((await api('/api/fs/list', admin, { path: `/disk/${TRASH_DIR}` })).code).not.toBe(200);
    expect((await api('/api/fs/get', admin, { path: `/disk/${TRASH_DIR}` })).code).not.toBe(200);
    expect((await api('/api/fs/mkdir', admin, { path: `/disk/${TRASH_DIR}/x` })).code).not.toBe(200);
    const id = trashed()[0]!;
    expect((await s.inject({ method: 'GET', url: `/d/disk/${TRASH_DIR}/${id}?sign=${encodeURIComponent(s.core.signer.sign(`/disk/${TRASH_DIR}/${id}`))}` })).statusCode).toBeGreaterThanOrEqual(400);
    const dav = await s.inject({ method: 'PROPFIND', url: '/dav/', headers: { authorization: basic('alice'), depth: '1' } });
    expect(dav.statusCode).toBe(207);
    expect(dav.body).not.toContain(TRASH_DIR);
    expect((await s.inject({ method: 'PROPFIND', url: `/dav/${TRASH_DIR}/`, headers: { authorization: basic('alice'), depth: '1' } })).statusCode).toBe(404);
    const entries = await call<Array<{ filename: string }>>(sftp.sftp, 'readdir', '/');
    expect(entries.map((e) => e.filename)).not.toContain(TRASH_DIR);
    expect((await ftp.list('/')).map((e) => e.name)).not.toContain(TRASH_DIR);
    const s3all = await client(s3.endpoint).send(new ListObjectsV2Command({ Bucket: 'bkt' }));
    expect((s3all.Contents ?? []).map((c) => c.Key)).not.toContain(TRASH_DIR);
    // the search index, built over the whole tree, holds nothing of the trash
    expect((await api('/api/admin/setting/save', admin, [{ key: 'search_index', value: 'database' }])).code).toBe(200);
    expect((await api('/api/admin/index/build', admin, {})).code).toBe(200);
    for (let i = 0; i < 200 && (await s.api('GET', '/api/admin/index/progress', { token: admin })).data.is_done !== true; i++) await new Promise((r) => setTimeout(r, 50));
    const found = await api('/api/fs/search', admin, { parent: '/', keywords: '.txt', scope: 0, page: 1, per_page: 100 });
    expect(found.code, found.message).toBe(200);
    expect(found.data.total).toBeGreaterThan(0);
    expect(JSON.stringify(found.data)).not.toContain(TRASH_DIR);
  });

  it('a user sees, restores and purges only their own entries; an admin sees all', async () => {
    expect((await api('/api/fs/remove', bob, { dir: '/b', names: ['bob.txt'] })).code).toBe(200);
    const bobs = await api('/api/fs/trash/list', bob, { path: '/' });
    expect(bobs.data.content.map((e: { name: string }) => e.name)).toEqual(['bob.txt']);
    const alices = await api('/api/fs/trash/list', alice, { path: '/' });
    expect(alices.data.content.map((e: { name: string }) => e.name)).not.toContain('bob.txt');
    expect((await api('/api/fs/trash/list', admin, { path: '/disk' })).data.total).toBe(7);
    const bobId = bobs.data.content[0].id as string;
    expect((await api('/api/fs/trash/restore', alice, { ids: [bobId] })).code).toBe(404);
    expect((await api('/api/fs/trash/purge', alice, { ids: [bobId] })).code).toBe(404);
    expect(existsSync(disk('b/bob.txt'))).toBe(false);
    expect((await api('/api/fs/trash/restore', bob, { ids: [bobId] })).data).toEqual({ restored: 1 });
    expect(readFileSync(disk('b/bob.txt'), 'utf8')).toBe('bob bytes');
  });

  it('restores identical bytes to where they were, or into dst_dir; a name there follows conflict_policy', async () => {
    const list = (await api('/api/fs/trash/list', alice, { path: '/' })).data.content as Array<{ id: string; name: string }>;
    const id = (n: string) => list.find((e) => e.name === n)!.id;
    expect((await api('/api/fs/trash/restore', alice, { ids: [id('api.txt'), id('folder')] })).data).toEqual({ restored: 2 });
    expect(readFileSync(disk('a/api.txt'), 'utf8')).toBe('api bytes');
    expect(readFileSync(disk('a/folder/inner.txt'), 'utf8')).toBe('inner');
    expect((await api('/api/fs/trash/restore', alice, { ids: [id('dav.txt')], dst_dir: '/b' })).data).toEqual({ restored: 1 });
    expect(readFileSync(disk('b/dav.txt'), 'utf8')).toBe('dav bytes');
    // a new sftp.txt in the way
    expect((await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: alice, 'file-path': encodeURIComponent('/a/sftp.txt'), 'content-type': 'application/octet-stream' }, payload: 'newer' })).statusCode).toBe(200);
    const clash = await api('/api/fs/trash/restore', alice, { ids: [id('sftp.txt')] });
    expect(clash.code).not.toBe(200);
    expect(readFileSync(disk('a/sftp.txt'), 'utf8')).toBe('newer');
    expect((await api('/api/fs/trash/restore', alice, { ids: [id('sftp.txt')], conflict_policy: 'skip' })).data).toEqual({ restored: 0 });
    expect((await api('/api/fs/trash/restore', alice, { ids: [id('sftp.txt')], conflict_policy: 'overwrite' })).data).toEqual({ restored: 1 });
    expect(readFileSync(disk('a/sftp.txt'), 'utf8')).toBe('sftp bytes');
    // what it replaced went to the trash in its turn
    const after = (await api('/api/fs/trash/list', alice, { path: '/' })).data.content as Array<{ name: string; size: number }>;
    expect(after.some((e) => e.name === 'sftp.txt' && e.size === 5)).toBe(true);
  });

  it('purge deletes for good; permanent deletes skip the trash (admins only); the sweep purges past trash_days', async () => {
    const list = (await api('/api/fs/trash/list', alice, { path: '/' })).data.content as Array<{ id: string; name: string }>;
    const ftpId = list.find((e) => e.name === 'ftp.txt')!.id;
    expect((await api('/api/fs/trash/purge', alice, { ids: [ftpId] })).code).toBe(200);
    expect(trashed().some((t) => t.startsWith(`${ftpId}/`))).toBe(false);
    expect((await api('/api/fs/trash/list', alice, { path: '/' })).data.content.map((e: { id: string }) => e.id)).not.toContain(ftpId);

    expect((await api('/api/fs/remove', alice, { dir: '/a', names: ['perm.txt'], permanent: true })).code).toBe(403);
    expect(existsSync(disk('a/perm.txt'))).toBe(true);
    const before = trashed().length;
    expect((await api('/api/fs/remove', admin, { dir: '/disk/a', names: ['perm.txt'], permanent: true })).code).toBe(200);
    expect(existsSync(disk('a/perm.txt'))).toBe(false);
    expect(trashed().length).toBe(before);

    expect((await api('/api/fs/remove', alice, { dir: '/a', names: ['old.txt'] })).code).toBe(200);
    const oldId = ((await api('/api/fs/trash/list', alice, { path: '/' })).data.content as Array<{ id: string; name: string }>).find((e) => e.name === 'old.txt')!.id;
    // 31 days later (trash_days 30): the sweep purges it, on disk and in the list
    await s.core.db.db.updateTable('trash_entries').set({ deleted_at: Date.now() - 31 * DAY }).where('id', '=', oldId).execute();
    expect(await s.core.trash.sweep()).toBe(1);
    expect(trashed().some((t) => t.startsWith(`${oldId}/`))).toBe(false);
    expect((await api('/api/fs/trash/list', alice, { path: '/' })).data.content.map((e: { id: string }) => e.id)).not.toContain(oldId);
  });

  it("a storage with trash 'off' deletes for good", async () => {
    const other = makeTree({ 'x.txt': 'x' });
    try {
      expect((await api('/api/admin/storage/create', admin, { ...localStorage('/off', other), trash: 'off' })).code).toBe(200);
      expect((await api('/api/fs/remove', admin, { dir: '/off', names: ['x.txt'] })).code).toBe(200);
      expect(existsSync(path.join(other, 'x.txt'))).toBe(false);
      expect(existsSync(path.join(other, TRASH_DIR))).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
