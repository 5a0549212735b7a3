import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, PutObjectCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { Client as FtpClient } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { userOwner } from '../../src/view/quota.js';
import { makeZip } from '../archive/fixtures.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { client as s3Client, startS3 } from '../s3/s3-helpers.js';
import { basic, listen, requireProgram } from '../webdav/dav-helpers.js';
import { rclone, remoteEnv, run } from '../helpers/rclone.js';

// write, rename, move, copy, remove, WebDAV read+manage, FTP/SFTP read+write
const ALL = 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048;
const PASS = 'pass word 1';
const SFTP_FAILURE = 4;

/**
 * Quotas (issue #41): a write past a user's or a group's quota is refused before its bytes are
 * stored, with each front's answer, and leaves nothing; usage follows writes, overwrites, deletes
 * and moves between roots; a group's quota is shared by its members; a scan repairs usage.
 */
describe.each(BACKENDS)('quotas ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let token: string;
  let zoeId: number;
  let sftpSrv: ProtocolListener;
  let ftpSrv: ProtocolListener;
  let s3: { listener: ProtocolListener; endpoint: string };
  const sessions: SftpSession[] = [];
  const ftps: FtpClient[] = [];
  const disk = (rel: string) => path.join(root, rel);
  const me = async (t = token) => (await s.api('GET', '/api/me', { token: t })).data;
  const put = async (p: string, body: string, t = token) => {
    const r = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: t, 'file-path': encodeURIComponent(p), 'content-type': 'application/octet-stream' }, payload: Buffer.from(body) });
    return JSON.parse(r.body) as { code: number; message: string };
  };

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'zoe/.keep': '', 'team/.keep': '', 'other/.keep': '' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    const made = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'zoe', password: PASS, base_path: '/disk/zoe', permission: ALL, quota_bytes: 100, quota_files: 10 } });
    expect(made.code, made.message).toBe(200);
    zoeId = (await s.core.repos.users.byUsername('zoe'))!.id;
    // the .keep file is already there: a scan counts it (0 bytes, 1 file)
    await s.core.quotas.scan(userOwner((await s.core.repos.users.byId(zoeId))!));
    token = await s.login('zoe', PASS);
    sftpSrv = await startSftp(s);
    ftpSrv = await startFtpServer(s.core, '127.0.0.1:0');
    s3 = await startS3(s, [{ name: 'zoe', path: '/disk/zoe' }]);
  });
  afterAll(async () => {
    for (const c of ftps) c.close();
    for (const x of sessions) x.end();
    await sftpSrv?.close();
    await ftpSrv?.close();
    await s3?.listener.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the admin API and /api/me show the quota and the usage', async () => {
    const u = (await s.api('GET', `/api/admin/user/get?id=${zoeId}`, { token: admin })).data;
    expect(u).toMatchObject({ quota_bytes: 100, quota_files: 10 });
    expect(await me()).toMatchObject({ quota_bytes: 100, quota_files: 10, used_bytes: 0, used_files: 1 });
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: zoeId, username: 'zoe', quota_bytes: -1 } })).code).toBe(400);
  });

  it('API: usage follows a put, an overwrite and a delete; a put past the quota is 403 quota exceeded and leaves nothing', async () => {
    const first = await put('/a.bin', 'x'.repeat(60));
    expect(first.code, first.message).toBe(200);
    expect(await me()).toMatchObject({ used_bytes: 60, used_files: 2 });
    const over = await put('/b.bin', 'y'.repeat(41));
    expect(over).toMatchObject({ code: 403, message: 'quota exceeded' });
    expect(existsSync(disk('zoe/b.bin'))).toBe(false);
    // an overwrite counts what it replaces
    expect((await put('/a.bin', 'z'.repeat(90))).code).toBe(200);
    expect(await me()).toMatchObject({ used_bytes: 90, used_files: 2 });
    expect((await s.api('POST', '/api/fs/remove', { token, body: { dir: '/', names: ['a.bin'] } })).code).toBe(200);
    expect(await me()).toMatchObject({ used_bytes: 0, used_files: 1 });
    expect((await put('/b.bin', 'y'.repeat(41))).code).toBe(200);
  });

  it('WebDAV 507, SFTP failure "quota exceeded" for a stream that crosses it, FTP 552, S3 403 QuotaExceeded; nothing left behind', async () => {
    const before = await me();
    const room = 100 - before.used_bytes;
    const dav = await s.inject({ method: 'PUT', url: '/dav/dav.bin', headers: { authorization: basic('zoe', PASS) }, payload: Buffer.alloc(room + 1, 1) });
    expect(dav.statusCode).toBe(507);
    expect(existsSync(disk('zoe/dav.bin'))).toBe(false);

    const x = await connectSftp(sftpSrv.port, { username: 'zoe', password: PASS });
    sessions.push(x);
    const h = await call<Buffer>(x.sftp, 'open', '/sftp.bin', 'w');
    // SFTP declares no size: the bytes pass until they cross the quota
    const write = async () => {
      for (let i = 0; i < 8; i++) await call(x.sftp, 'write', h, Buffer.alloc(16, 2), 0, 16, i * 16);
      await call(x.sftp, 'close', h);
    };
    await expect(write()).rejects.toMatchObject({ code: SFTP_FAILURE, message: 'quota exceeded' });
    expect(existsSync(disk('zoe/sftp.bin'))).toBe(false);

    const f = new FtpClient(10_000);
    ftps.push(f);
    await f.access({ host: '127.0.0.1', port: ftpSrv.port, user: 'zoe', password: PASS });
    await expect(f.uploadFrom(Readable.from([Buffer.alloc(room + 1, 3)]), '/ftp.bin')).rejects.toMatchObject({ code: 552 });
    expect(existsSync(disk('zoe/ftp.bin'))).toBe(false);

    const made = await s.api('POST', '/api/me/s3key/create', { token, body: { title: 'q' } });
    const c = s3Client(s3.endpoint, { keyId: made.data.access_key_id, secret: made.data.secret_access_key });
    await expect(c.send(new PutObjectCommand({ Bucket: 'zoe', Key: 's3.bin', Body: Buffer.alloc(room + 1, 4) }))).rejects.toMatchObject({ name: 'QuotaExceeded', $metadata: { httpStatusCode: 403 } });
    expect(existsSync(disk('zoe/s3.bin'))).toBe(false);
    // a multipart upload is decided when it completes, with the parts' total
    const mp = await c.send(new CreateMultipartUploadCommand({ Bucket: 'zoe', Key: 'mp.bin' }));
    const part = await c.send(new UploadPartCommand({ Bucket: 'zoe', Key: 'mp.bin', UploadId: mp.UploadId, PartNumber: 1, Body: Buffer.alloc(room + 1, 7) }));
    const done = c.send(new CompleteMultipartUploadCommand({ Bucket: 'zoe', Key: 'mp.bin', UploadId: mp.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    await expect(done).rejects.toMatchObject({ name: 'QuotaExceeded', $metadata: { httpStatusCode: 403 } });
    expect(existsSync(disk('zoe/mp.bin'))).toBe(false);
    c.destroy();
    expect(await me()).toMatchObject({ used_bytes: before.used_bytes, used_files: before.used_files });
  });

  it('a quota lowered while an SFTP session is open applies at its next write', async () => {
    const x = await connectSftp(sftpSrv.port, { username: 'zoe', password: PASS });
    sessions.push(x);
    const h1 = await call<Buffer>(x.sftp, 'open', '/live1.bin', 'w');
    await call(x.sftp, 'write', h1, Buffer.alloc(4, 5), 0, 4, 0);
    await call(x.sftp, 'close', h1);
    const used = (await me()).used_bytes;
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: zoeId, username: 'zoe', quota_bytes: used + 2 } })).code).toBe(200);
    const h2 = await call<Buffer>(x.sftp, 'open', '/live2.bin', 'w');
    await call(x.sftp, 'write', h2, Buffer.alloc(3, 6), 0, 3, 0).catch(() => undefined);
    await expect(call(x.sftp, 'close', h2)).rejects.toMatchObject({ code: SFTP_FAILURE, message: 'quota exceeded' });
    expect(existsSync(disk('zoe/live2.bin'))).toBe(false);
    expect((await s.api('POST', '/api/fs/remove', { token, body: { dir: '/', names: ['live1.bin'] } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: zoeId, username: 'zoe', quota_bytes: 100 } })).code).toBe(200);
  });

  it('chunked uploads are refused at init (OpenList multipart and tus)', async () => {
    const room = 100 - (await me()).used_bytes;
    const init = await s.inject({ method: 'POST', url: '/api/fs/multipart/init', headers: { authorization: token, 'file-path': encodeURIComponent('/big.bin'), 'x-file-size': String(room + 1) } });
    expect(JSON.parse(init.body)).toMatchObject({ code: 403, message: 'quota exceeded' });
    const meta = `path ${Buffer.from('/big-tus.bin').toString('base64')}`;
    const tus = await s.inject({ method: 'POST', url: '/api/fs/tus/', headers: { authorization: token, 'tus-resumable': '1.0.0', 'upload-length': String(room + 1), 'upload-metadata': meta } });
    expect(tus.statusCode).toBe(403);
    expect(await s.core.repos.uploads.countReceiving(zoeId)).toBe(0);
  });

  it('the number of files counts too', async () => {
    const u = (await me()).used_files;
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: zoeId, username: 'zoe', quota_files: u + 1 } })).code).toBe(200);
    expect((await put('/one.txt', '1')).code).toBe(200);
    expect(await put('/two.txt', '2')).toMatchObject({ code: 403, message: 'quota exceeded' });
    expect(existsSync(disk('zoe/two.txt'))).toBe(false);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: zoeId, username: 'zoe', quota_files: 10 } })).code).toBe(200);
  });

  it("a group's quota is shared by its members' writes into its root; a move between roots moves the usage", async () => {
    const g = await s.api('POST', '/api/admin/group/create', { token: admin, body: { name: 'team', roots: [{ path: '/disk/team', name: 'team' }], quota_bytes: 50 } });
    expect(g.code, g.message).toBe(200);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: zoeId, username: 'zoe', group_ids: [g.data.id] } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'yan', password: PASS, base_path: '/disk/other', permission: ALL, group_ids: [g.data.id] } })).code).toBe(200);
    const yan = await s.login('yan', PASS);
    expect((await put('/team/z.bin', 'z'.repeat(30))).code).toBe(200);
    expect(await put('/team/y.bin', 'y'.repeat(21), yan)).toMatchObject({ code: 403, message: 'quota exceeded' });
    expect((await put('/team/y.bin', 'y'.repeat(20), yan)).code).toBe(200);
    expect(await s.core.quotas.usage({ kind: 'group', id: g.data.id })).toMatchObject({ bytes: 50, files: 2 });
    // zoe's own quota did not move
    const mine = (await me()).used_bytes;
    // moving a file from the group's root into her own counts it there, and frees the group's
    expect((await s.api('POST', '/api/fs/move', { token, body: { src_dir: '/team', dst_dir: '/', names: ['z.bin'] } })).code).toBe(200);
    await expect.poll(async () => (await me()).used_bytes, { timeout: 10_000 }).toBe(mine + 30);
    // the move is counted by what it carried, at once: the group keeps y.bin
    expect(await s.core.quotas.usage({ kind: 'group', id: g.data.id })).toMatchObject({ bytes: 20, files: 1 });
    // the root's .keep was there before the group had a quota: its first scan counts it
    const groupOwnerNow = (await s.core.quotas.all()).find((o) => o.kind === 'group' && o.id === g.data.id)!;
    expect(await s.core.quotas.scan(groupOwnerNow)).toMatchObject({ bytes: 20, files: 2 });
    expect(existsSync(disk('zoe/z.bin'))).toBe(true);
  });

  it('a scan repairs usage after writes the server did not see (a crash, a write on the disk)', async () => {
    writeFileSync(disk('zoe/behind.bin'), Buffer.alloc(7));
    const before = await me();
    const u = await s.core.quotas.scan(userOwner((await s.core.repos.users.byId(zoeId))!));
    expect(u.bytes).toBe(before.used_bytes + 7);
    expect(await me()).toMatchObject({ used_bytes: before.used_bytes + 7, used_files: before.used_files + 1 });
    expect(readFileSync(disk('zoe/behind.bin')).length).toBe(7);
  });

  it('an extract task into the root is counted: the files it wrote, once the task is done', async () => {
    const admin = { token: await s.login() };
    const raised = await s.api('POST', '/api/admin/user/update', { token: admin.token, body: { id: zoeId, username: 'zoe', quota_bytes: 100_000, quota_files: 100, permission: ALL | 4096 | 8192 } });
    expect(raised.code, raised.message).toBe(200);
    try {
      writeFileSync(disk('zoe/pack.zip'), makeZip({ 'in/a.txt': Buffer.alloc(300, 1), 'in/b.txt': Buffer.alloc(200, 2) }));
      const before = await s.core.quotas.scan(userOwner((await s.core.repos.users.byId(zoeId))!));
      // read archives (4096) and extract (8192) for this test
      const r = await s.api('POST', '/api/fs/archive/decompress', { token, body: { src_dir: '/', dst_dir: '/out', name: ['pack.zip'], put_into_new_dir: false, overwrite: false } });
      expect(r.code, r.message).toBe(200);
      await expect.poll(() => existsSync(disk('zoe/out/in/b.txt')) && readFileSync(disk('zoe/out/in/b.txt')).length, { timeout: 20_000 }).toBe(200);
      // the bytes the task wrote, counted without a walk at each write
      await expect.poll(async () => (await me()).used_bytes, { timeout: 10_000 }).toBe(before.bytes + 500);
      expect((await me()).used_files).toBe(before.files + 2);
    } finally {
      rmSync(disk('zoe/out'), { recursive: true, force: true });
      rmSync(disk('zoe/pack.zip'), { force: true });
      await s.api('POST', '/api/admin/user/update', { token: admin.token, body: { id: zoeId, username: 'zoe', quota_bytes: 100, quota_files: 10, permission: ALL } });
      await s.core.quotas.scan(userOwner((await s.core.repos.users.byId(zoeId))!));
    }
  }, 40_000);

  it("WebDAV's RFC 4331 properties show the quota", async () => {
    const body = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>';
    const res = await s.inject({ method: 'PROPFIND' as 'GET', url: '/dav/', headers: { authorization: basic('zoe', PASS), depth: '0' }, payload: body });
    expect(res.statusCode).toBe(207);
    const used = (await me()).used_bytes;
    expect(res.body).toContain(`<D:quota-used-bytes>${used}</D:quota-used-bytes>`);
    expect(res.body).toContain(`<D:quota-available-bytes>${100 - used}</D:quota-available-bytes>`);
  });

  it.runIf(requireProgram('rclone', 'rclone about over WebDAV'))('rclone about over WebDAV shows the quota', async () => {
    const base = await listen(s);
    const env = remoteEnv({ TYPE: 'webdav', URL: `${base}/dav`, VENDOR: 'other', USER: 'zoe', PASS: (await run('rclone', ['obscure', PASS])).stdout.trim() });
    const about = JSON.parse((await rclone(env, ['about', 'X:', '--json'], 60_000)).stdout) as { used?: number; free?: number };
    const used = (await me()).used_bytes;
    expect(about).toMatchObject({ used, free: 100 - used });
  });
});
