import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { GetObjectCommand, ListBucketsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Client as FtpClient } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { client as s3Client, startS3 } from '../s3/s3-helpers.js';
import { basic } from '../webdav/dav-helpers.js';

const BITS = { write: 8, davRead: 256, ftpRead: 1024, ftpWrite: 2048 };
const PASS = 'pass word 1';
const SFTP_NO_SUCH_FILE = 2;

/**
 * Several roots per user on every front (issue #41): a user in two groups sees their base path
 * with each group's root at `/<name>` in the API, raw links, WebDAV, SFTP, FTP, S3 and search,
 * with the groups' bits; leaving a group removes its root at the next operation of a session
 * that stays open.
 */
describe.each(BACKENDS)('a user in two groups on every front ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let token: string;
  let userId: number;
  let red: number;
  let blue: number;
  let sftpSrv: ProtocolListener;
  let ftpSrv: ProtocolListener;
  let s3: { listener: ProtocolListener; endpoint: string };
  const open: SftpSession[] = [];
  const ftps: FtpClient[] = [];

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({
      'home/mia/own.txt': 'own',
      'teams/red/red.txt': 'red bytes',
      'teams/blue/blue.txt': 'blue bytes',
      'elsewhere/secret.txt': 'not hers',
    });
    admin = await s.login();
    const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
    expect((await post('/api/admin/storage/create', localStorage('/disk', root))).code).toBe(200);
    // The user holds no bit of her own: reading WebDAV, SFTP/FTP and writing come from the groups.
    red = (await post('/api/admin/group/create', { name: 'red team', permission: BITS.davRead | BITS.ftpRead | BITS.write | BITS.ftpWrite, roots: [{ path: '/disk/teams/red', name: 'red' }] })).data.id;
    blue = (await post('/api/admin/group/create', { name: 'blue team', permission: 0, roots: [{ path: '/disk/teams/blue', name: 'blue' }] })).data.id;
    const made = await post('/api/admin/user/create', { username: 'mia', password: PASS, base_path: '/disk/home/mia', permission: 0, group_ids: [red, blue] });
    expect(made.code, made.message).toBe(200);
    userId = (await s.core.repos.users.byUsername('mia'))!.id;
    token = await s.login('mia', PASS);
    expect((await post('/api/admin/setting/save', [{ key: 'search_index', value: 'database' }])).code).toBe(200);
    expect((await post('/api/admin/index/build', {})).code).toBe(200);
    await s.core.search.indexer.idle();
    await s.core.search.indexer.idle();
    sftpSrv = await startSftp(s);
    ftpSrv = await startFtpServer(s.core, '127.0.0.1:0');
    s3 = await startS3(s, []);
  });
  afterAll(async () => {
    for (const c of ftps) c.close();
    for (const x of open) x.end();
    await sftpSrv?.close();
    await ftpSrv?.close();
    await s3?.listener.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const sftp = async () => {
    const x = await connectSftp(sftpSrv.port, { username: 'mia', password: PASS });
    open.push(x);
    return x.sftp;
  };
  const ftp = async () => {
    const c = new FtpClient(10_000);
    ftps.push(c);
    await c.access({ host: '127.0.0.1', port: ftpSrv.port, user: 'mia', password: PASS });
    return c;
  };
  const THREE = ['blue', 'own.txt', 'red'];

  it('API list and get, raw links and search', async () => {
    const list = await s.api('POST', '/api/fs/list', { token, body: { path: '/' } });
    expect(list.data.content.map((o: { name: string }) => o.name).sort()).toEqual(THREE);
    const inRed = await s.api('POST', '/api/fs/list', { token, body: { path: '/red' } });
    expect(inRed.data.content.map((o: { name: string }) => o.name)).toEqual(['red.txt']);
    const got = await s.api('POST', '/api/fs/get', { token, body: { path: '/blue/blue.txt' } });
    expect(got.code, got.message).toBe(200);
    // Raw links name the virtual path, signed (as OpenList's: the link, not the session, is the right to read).
    const raw = new URL(got.data.raw_url);
    expect(raw.pathname).toMatch(/^\/[dp]\/disk\/teams\/blue\/blue\.txt$/);
    const res = await s.inject({ method: 'GET', url: `${raw.pathname}${raw.search}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('blue bytes');
    // nothing outside the tree
    expect((await s.api('POST', '/api/fs/get', { token, body: { path: '/../../elsewhere/secret.txt' } })).code).toBe(403);

    const found = await s.api('POST', '/api/fs/search', { token, body: { parent: '/', keywords: 'bytes', page: 1, per_page: 50 } });
    expect(found.code, found.message).toBe(200);
    const hits = await s.api('POST', '/api/fs/search', { token, body: { parent: '/', keywords: '.txt', page: 1, per_page: 50 } });
    expect(hits.data.content.map((h: { parent: string; name: string }) => `${h.parent}|${h.name}`).sort()).toEqual(['/blue|blue.txt', '/disk/home/mia|own.txt', '/red|red.txt']);
    expect(hits.data.total).toBe(3);
    const inBlue = await s.api('POST', '/api/fs/search', { token, body: { parent: '/blue', keywords: '.txt', page: 1, per_page: 50 } });
    expect(inBlue.data.content.map((h: { name: string }) => h.name)).toEqual(['blue.txt']);
  });

  it('WebDAV PROPFIND and GET', async () => {
    const res = await s.inject({ method: 'PROPFIND' as 'GET', url: '/dav/', headers: { authorization: basic('mia', PASS), depth: '1' } });
    expect(res.statusCode).toBe(207);
    const hrefs = [...res.body.matchAll(/<D:href>([^<]+)<\/D:href>/gi)].map((m) => decodeURIComponent(m[1]!)).sort();
    expect(hrefs).toEqual(['/dav/', '/dav/blue/', '/dav/own.txt', '/dav/red/']);
    const get = await s.inject({ method: 'GET', url: '/dav/red/red.txt', headers: { authorization: basic('mia', PASS) } });
    expect(get.statusCode).toBe(200);
    expect(get.body).toBe('red bytes');
  });

  it('SFTP readdir, read and write into a root', async () => {
    const c = await sftp();
    expect((await call<Array<{ filename: string }>>(c, 'readdir', '/')).map((e) => e.filename).sort()).toEqual(THREE);
    expect((await call<Array<{ filename: string }>>(c, 'readdir', '/red')).map((e) => e.filename)).toEqual(['red.txt']);
    expect(await call<string>(c, 'realpath', '/red/../blue')).toBe('/blue');
    const h = await call<Buffer>(c, 'open', '/red/from-sftp.txt', 'w');
    await call(c, 'write', h, Buffer.from('sftp'), 0, 4, 0);
    await call(c, 'close', h);
    expect(readFileSync(path.join(root, 'teams/red/from-sftp.txt'), 'utf8')).toBe('sftp');
    expect(existsSync(path.join(root, 'home/mia/red'))).toBe(false);
  });

  it('FTP LIST and download', async () => {
    const c = await ftp();
    expect((await c.list('/')).map((e) => e.name).sort()).toEqual(THREE);
    await c.cd('/blue');
    expect(await c.pwd()).toBe('/blue');
    expect((await c.list()).map((e) => e.name)).toEqual(['blue.txt']);
  });

  it('S3 ListBuckets and ListObjects: each root is a bucket', async () => {
    const made = await s.api('POST', '/api/me/s3key/create', { token, body: { title: 'laptop' } });
    expect(made.code, made.message).toBe(200);
    const c = s3Client(s3.endpoint, { keyId: made.data.access_key_id, secret: made.data.secret_access_key });
    expect((await c.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name).sort()).toEqual(['blue', 'red']);
    const listed = await c.send(new ListObjectsV2Command({ Bucket: 'blue' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['blue.txt']);
    const obj = await c.send(new GetObjectCommand({ Bucket: 'red', Key: 'red.txt' }));
    expect(await obj.Body?.transformToString()).toBe('red bytes');
    c.destroy();
  });

  it('leaving a group removes its root at the next operation of an open SFTP and FTP session', async () => {
    const c = await sftp();
    const f = await ftp();
    expect((await call<Array<{ filename: string }>>(c, 'readdir', '/')).map((e) => e.filename).sort()).toEqual(THREE);
    const held = await call<Buffer>(c, 'open', '/blue/blue.txt', 'r');
    const upd = await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: userId, username: 'mia', group_ids: [red] } });
    expect(upd.code, upd.message).toBe(200);
    expect((await call<Array<{ filename: string }>>(c, 'readdir', '/')).map((e) => e.filename).sort()).toEqual(['own.txt', 'red']);
    await expect(call(c, 'stat', '/blue/blue.txt')).rejects.toMatchObject({ code: SFTP_NO_SUCH_FILE });
    // a handle opened before reads no more
    await expect(call<number>(c, 'read', held, Buffer.alloc(16), 0, 16, 0)).rejects.toBeTruthy();
    expect((await f.list('/')).map((e) => e.name).sort()).toEqual(['own.txt', 'red']);
    const dav = await s.inject({ method: 'PROPFIND' as 'GET', url: '/dav/', headers: { authorization: basic('mia', PASS), depth: '1' } });
    expect(dav.body).not.toContain('/dav/blue/');
    // and losing the group with the bits ends what they allowed
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: userId, username: 'mia', group_ids: [] } })).code).toBe(200);
    await expect(call(c, 'readdir', '/')).rejects.toBeTruthy();
  });
});
