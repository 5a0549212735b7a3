import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { Client as FtpClient } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpEvent } from '../../src/audit/events.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, startSftp } from '../helpers/sftp.js';
import { waitFor } from '../helpers/wait.js';
import { basic } from '../webdav/dav-helpers.js';
import { client as s3Client, KEY_ID, startS3 } from '../s3/s3-helpers.js';

const ALICE_BITS = 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | (1 << 14);
const READER_BITS = 256 | 1024;

interface Ev {
  id: number;
  time: string;
  user: string;
  front: string;
  op: string;
  path: string;
  dst_path: string;
  bytes: number;
  result: string;
  ip: string;
  request_id: string;
}

describe.each(BACKENDS)('audit log on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let alice: string;
  let root: string;

  /** The events the list route answers for `query` (what was emitted is written first). */
  const events = async (query: Record<string, string>): Promise<{ content: Ev[]; total: number }> => {
    const r = await s.api('GET', '/api/admin/audit/list', { token: admin, query: { per_page: '1000', ...query } });
    expect(r.code, r.message).toBe(200);
    return r.data;
  };
  /** Exactly one event of `op` on `p` since `since` (what the test just did), returned. */
  const one = async (since: string, op: string, p: string, more: Record<string, string> = {}): Promise<Ev> => {
    const { content } = await events({ since, op, ...more });
    const hits = content.filter((e) => e.path === p);
    expect(hits, `${op} ${p}: ${JSON.stringify(content)}`).toHaveLength(1);
    return hits[0]!;
  };
  const now = () => new Date().toISOString();
  /** Waits until a transfer's event (emitted when the response ends) is stored. */
  const oneSoon = async (since: string, op: string, p: string, more: Record<string, string> = {}): Promise<Ev> => {
    await waitFor(async () => (await events({ since, op, ...more })).content.some((e) => e.path === p), 5000);
    return one(since, op, p, more);
  };

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({ 'hello.txt': 'hello audit', 'dir/inner.txt': 'inner', 'big.bin': Buffer.alloc(70_000, 7) });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    for (const u of [
      { username: 'alice', password: 'a-pass', permission: ALICE_BITS },
      { username: 'reader', password: 'r-pass', permission: READER_BITS },
    ]) {
      expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: u })).code).toBe(200);
    }
    alice = await s.login('alice', 'a-pass');
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('API put, list (with audit_log_listings on) and remove: once each, front api, the user, the bytes', async () => {
    const t = now();
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'twelve bytes', headers: { authorization: alice, 'file-path': encodeURIComponent('/s/up.txt') } });
    expect(up.json().code, up.body).toBe(200);
    const put = await one(t, 'upload', '/s/up.txt');
    expect(put).toMatchObject({ user: 'alice', front: 'api', bytes: 12, result: 'ok', ip: '127.0.0.1' });
    expect(put.request_id).not.toBe('');
    expect(Date.parse(put.time)).toBeGreaterThanOrEqual(Date.parse(t));

    // Listings are off by default, then recorded once per listing.
    expect((await s.api('POST', '/api/fs/list', { token: alice, body: { path: '/s' } })).code).toBe(200);
    expect((await events({ since: t, op: 'list' })).total).toBe(0);
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'audit_log_listings', value: 'true' }] })).code).toBe(200);
    expect((await s.api('POST', '/api/fs/list', { token: alice, body: { path: '/s' } })).code).toBe(200);
    expect(await one(t, 'list', '/s')).toMatchObject({ user: 'alice', front: 'api', result: 'ok' });
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'audit_log_listings', value: 'false' }] })).code).toBe(200);

    expect((await s.api('POST', '/api/fs/remove', { token: alice, body: { dir: '/s', names: ['up.txt'] } })).code).toBe(200);
    expect(await one(t, 'remove', '/s/up.txt')).toMatchObject({ user: 'alice', front: 'api', result: 'ok' });
  });

  it('a refused operation is recorded with its kind', async () => {
    const t = now();
    const reader = await s.login('reader', 'r-pass');
    const r = await s.api('POST', '/api/fs/remove', { token: reader, body: { dir: '/s', names: ['hello.txt'] } });
    expect(r.code).toBe(403);
    expect(await one(t, 'remove', '/s/hello.txt')).toMatchObject({ user: 'reader', front: 'api', result: 'Forbidden' });
    const mk = await s.api('POST', '/api/fs/mkdir', { token: reader, body: { path: '/s/nope' } });
    expect(mk.code).toBe(403);
    expect(await one(t, 'mkdir', '/s/nope')).toMatchObject({ user: 'reader', result: 'Forbidden' });
  });

  it('sign-in success and failure, with the front', async () => {
    const t = now();
    await s.login('alice', 'a-pass');
    const bad = await s.api('POST', '/api/auth/login', { body: { username: 'alice', password: 'wrong' } });
    expect(bad.code).toBe(400);
    const logins = (await events({ since: t, op: 'login', user: 'alice' })).content;
    expect(logins.map((e) => [e.front, e.result])).toEqual([
      ['api', 'BadRequest'],
      ['api', 'ok'],
    ]);
  });

  it('a /d download: one event, front raw, the bytes sent', async () => {
    const t = now();
    const res = await s.inject({ method: 'GET', url: `/d/s/big.bin?sign=${s.core.signer.sign('/s/big.bin')}` });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.length).toBe(70_000);
    expect(await oneSoon(t, 'download', '/s/big.bin', { front: 'raw' })).toMatchObject({ user: '', bytes: 70_000, result: 'ok' });
    // A range is the bytes of the range.
    const t2 = now();
    const part = await s.inject({ method: 'GET', url: `/d/s/hello.txt?sign=${s.core.signer.sign('/s/hello.txt')}`, headers: { range: 'bytes=0-4' } });
    expect(part.statusCode).toBe(206);
    expect((await oneSoon(t2, 'download', '/s/hello.txt', { front: 'raw' })).bytes).toBe(5);
  });

  it('share creation, a visit and its download', async () => {
    const t = now();
    const made = await s.api('POST', '/api/share/create', { token: alice, body: { files: ['/s/hello.txt'] } });
    expect(made.code, made.message).toBe(200);
    const id = made.data.id as string;
    expect(await one(t, 'share_create', id)).toMatchObject({ user: 'alice', front: 'api', result: 'ok' });
    const dl = await s.inject({ method: 'GET', url: `/sd/${id}/hello.txt` });
    expect(dl.statusCode).toBe(200);
    expect(dl.body).toBe('hello audit');
    expect(await one(t, 'share_visit', id)).toMatchObject({ front: 'share', result: 'ok' });
    expect(await oneSoon(t, 'download', '/s/hello.txt', { front: 'share' })).toMatchObject({ user: 'alice', bytes: 11, result: 'ok' });
  });

  it('WebDAV PUT and GET', async () => {
    const t = now();
    const auth = basic('alice', 'a-pass');
    const put = await s.inject({ method: 'PUT', url: '/dav/s/dav.txt', payload: 'dav body', headers: { authorization: auth } });
    expect([201, 204]).toContain(put.statusCode);
    expect(await one(t, 'upload', '/s/dav.txt', { front: 'webdav' })).toMatchObject({ user: 'alice', bytes: 8 });
    const get = await s.inject({ method: 'GET', url: '/dav/s/dav.txt', headers: { authorization: auth } });
    expect(get.body).toBe('dav body');
    expect(await oneSoon(t, 'download', '/s/dav.txt', { front: 'webdav' })).toMatchObject({ user: 'alice', bytes: 8 });
    // Sign-in per request: one success recorded.
    expect((await events({ since: t, op: 'login', front: 'webdav', user: 'alice' })).total).toBe(1);
  });

  it('SFTP write and read: one event each (a read is one transfer per open handle)', async () => {
    const srv: ProtocolListener = await startSftp(s);
    const t = now();
    const session = await connectSftp(srv.port, { username: 'alice', password: 'a-pass' });
    try {
      await new Promise<void>((resolve, reject) => {
        const w = session.sftp.createWriteStream('/s/sftp.txt');
        w.once('close', () => resolve()).once('error', reject);
        w.end('via sftp!');
      });
      await waitFor(async () => (await events({ since: t, op: 'upload', front: 'sftp' })).total === 1, 5000);
      expect(await one(t, 'upload', '/s/sftp.txt', { front: 'sftp' })).toMatchObject({ user: 'alice', bytes: 9 });
      const got = await new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        session.sftp.createReadStream('/s/big.bin').on('data', (c: Buffer) => chunks.push(c)).once('close', () => resolve(Buffer.concat(chunks))).once('error', reject);
      });
      expect(got.length).toBe(70_000);
      expect(await oneSoon(t, 'download', '/s/big.bin', { front: 'sftp' })).toMatchObject({ user: 'alice', bytes: 70_000, result: 'ok' });
      await call(session.sftp, 'stat', '/s/hello.txt');
      expect((await events({ since: t, op: 'login', front: 'sftp', user: 'alice' })).total).toBe(1);
    } finally {
      session.end();
      await srv.close();
    }
  });

  it('FTP STOR and RETR', async () => {
    const srv = await startFtpServer(s.core, '127.0.0.1:0');
    const c = new FtpClient(10_000);
    const t = now();
    try {
      await c.access({ host: '127.0.0.1', port: srv.port, user: 'alice', password: 'a-pass' });
      await c.uploadFrom(Readable.from([Buffer.from('ftp upload')]), '/s/ftp.txt');
      await waitFor(async () => (await events({ since: t, op: 'upload', front: 'ftp' })).total === 1, 5000);
      expect(await one(t, 'upload', '/s/ftp.txt', { front: 'ftp' })).toMatchObject({ user: 'alice', bytes: 10 });
      const chunks: Buffer[] = [];
      await c.downloadTo(new Writable({ write: (b: Buffer, _e, cb) => (chunks.push(b), cb()) }), '/s/hello.txt');
      expect(Buffer.concat(chunks).toString()).toBe('hello audit');
      expect(await oneSoon(t, 'download', '/s/hello.txt', { front: 'ftp' })).toMatchObject({ user: 'alice', bytes: 11 });
      expect((await events({ since: t, op: 'login', front: 'ftp' })).content.map((e) => [e.user, e.result])).toEqual([['alice', 'ok']]);
    } finally {
      c.close();
      await srv.close();
    }
  });

  it('S3 PutObject and GetObject', async () => {
    const { listener, endpoint } = await startS3(s, [{ name: 'audit-bucket', path: '/s' }]);
    const t = now();
    try {
      const c = s3Client(endpoint);
      await c.send(new PutObjectCommand({ Bucket: 'audit-bucket', Key: 's3.txt', Body: 's3 object' }));
      expect(await one(t, 'upload', '/s/s3.txt', { front: 's3' })).toMatchObject({ user: 'admin', bytes: 9, result: 'ok' });
      const got = await c.send(new GetObjectCommand({ Bucket: 'audit-bucket', Key: 's3.txt' }));
      expect(await got.Body!.transformToString()).toBe('s3 object');
      expect(await oneSoon(t, 'download', '/s/s3.txt', { front: 's3' })).toMatchObject({ user: 'admin', bytes: 9 });
      // S3 signs in on every request: the success once, each failure (wrong secret, unknown key) with its kind.
      await expect(s3Client(endpoint, { secret: 'not-the-secret' }).send(new GetObjectCommand({ Bucket: 'audit-bucket', Key: 's3.txt' }))).rejects.toThrow();
      await expect(s3Client(endpoint, { keyId: 'AKIANOSUCHKEY' }).send(new GetObjectCommand({ Bucket: 'audit-bucket', Key: 's3.txt' }))).rejects.toThrow();
      const logins = (await events({ since: t, op: 'login', front: 's3' })).content;
      expect(logins.map((e) => [e.user, e.path, e.result]).reverse()).toEqual([
        ['admin', KEY_ID, 'ok'],
        ['admin', KEY_ID, 'Unauthorized'],
        ['', 'AKIANOSUCHKEY', 'Unauthorized'],
      ]);
    } finally {
      await listener.close();
    }
  });

  it('a copy (a task): one copy event with source and target', async () => {
    const t = now();
    const r = await s.api('POST', '/api/fs/copy', { token: alice, body: { src_dir: '/s', dst_dir: '/s/dir', names: ['hello.txt'] } });
    expect(r.code, r.message).toBe(200);
    const e = await one(t, 'copy', '/s/hello.txt');
    expect(e).toMatchObject({ user: 'alice', front: 'api', dst_path: '/s/dir/hello.txt', result: 'ok' });
    await waitFor(() => existsSync(path.join(root, 'dir/hello.txt')) && readFileSync(path.join(root, 'dir/hello.txt'), 'utf8') === 'hello audit', 10_000);
  });

  it('admin changes: user create, update and delete by the admin', async () => {
    const t = now();
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'temp', password: 't-pass', permission: 0 } })).code).toBe(200);
    const list = await s.api('GET', '/api/admin/user/list', { token: admin });
    const id = (list.data.content as Array<{ id: number; username: string }>).find((u) => u.username === 'temp')!.id;
    expect((await s.api('POST', `/api/admin/user/delete?id=${id}`, { token: admin })).code).toBe(200);
    expect(await one(t, 'user_create', 'temp')).toMatchObject({ user: 'admin', front: 'api', result: 'ok' });
    expect(await one(t, 'user_delete', 'temp')).toMatchObject({ user: 'admin', result: 'ok' });
    // storages, metas, settings and keys
    const extra = makeTree({ 'x.txt': 'x' });
    const made = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/extra', extra) });
    expect(made.code).toBe(200);
    expect((await s.api('POST', `/api/admin/storage/delete?id=${made.data.id}`, { token: admin })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/s/dir', hide: '^zzz' } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'site_title', value: 'Audited' }] })).code).toBe(200);
    const bad = await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/s/dir', hide: '^zzz' } });
    expect(bad.code).not.toBe(200);
    const key = await s.api('POST', '/api/me/s3key/create', { token: alice, body: { title: 'laptop' } });
    expect(key.code, key.message).toBe(200);
    expect(await one(t, 'storage_create', '/extra')).toMatchObject({ user: 'admin', result: 'ok' });
    expect(await one(t, 'storage_delete', '/extra')).toMatchObject({ user: 'admin', result: 'ok' });
    const metas = (await events({ since: t, op: 'meta_create' })).content;
    expect(metas.map((e) => [e.path, e.result === 'ok'])).toEqual([
      ['/s/dir', false],
      ['/s/dir', true],
    ]);
    expect(await one(t, 'setting_update', 'site_title')).toMatchObject({ user: 'admin', result: 'ok' });
    expect(await one(t, 'key_create', 's3:laptop')).toMatchObject({ user: 'alice', result: 'ok' });
    rmSync(extra, { recursive: true, force: true });
  });

  it('the list route: filters, paging, newest first, bad filters in the envelope', async () => {
    const base = Date.now() - 3_600_000;
    const mk = (i: number): OpEvent => ({ time: base + i * 1000, user: i % 2 ? 'odd' : 'even', front: 'task', op: 'mkdir', path: `/p/${i}`, result: i === 3 ? 'Forbidden' : 'ok', request_id: `task:${i}` });
    await s.core.repos.auditEvents.insert(Array.from({ length: 10 }, (_, i) => mk(i)));
    await s.core.repos.auditEvents.insert([{ ...mk(20), path: '/p0' }, { ...mk(21), path: '/p' }]);
    const since = new Date(base).toISOString();
    const until = new Date(base + 60_000).toISOString();
    const all = await events({ since, until, front: 'task' });
    expect(all.total).toBe(12);
    expect(all.content.map((e) => e.time)).toEqual([...all.content.map((e) => e.time)].sort().reverse());
    expect((await events({ since, until, path: '/p' })).total).toBe(11);
    expect((await events({ since, until, path: '/p/3' })).content.map((e) => e.path)).toEqual(['/p/3']);
    expect((await events({ since, until, user: 'odd', front: 'task' })).total).toBe(6);
    expect((await events({ since, until, result: 'Forbidden' })).content.map((e) => e.request_id)).toEqual(['task:3']);
    const page2 = await s.api('GET', '/api/admin/audit/list', { token: admin, query: { since, until, path: '/p/', per_page: '4', page: '2' } });
    // A trailing slash names the same folder: the folder itself and everything below it.
    expect(page2.data.total).toBe(11);
    expect(page2.data.content.map((e: Ev) => e.path)).toEqual(['/p/6', '/p/5', '/p/4', '/p/3']);
    for (const [q, msg] of [
      [{ since: 'yesterday' }, 'since is not an ISO 8601 time'],
      [{ op: 'dance' }, 'unknown op'],
      [{ front: 'x' }, 'unknown front'],
      [{ per_page: '5000' }, 'per_page must be at most 1000'],
      [{ path: 'rel' }, 'path must start with /'],
    ] as const) {
      const r = await s.api('GET', '/api/admin/audit/list', { token: admin, query: q });
      expect(r.code, JSON.stringify(q)).toBe(400);
      expect(r.message).toContain(msg);
    }
    expect((await s.api('GET', '/api/admin/audit/list', { token: alice })).code).toBe(403);
  });

  it('the retention sweep deletes what is older than audit_log_retention_days', async () => {
    const old = Date.now() - 100 * 86_400_000;
    await s.core.repos.auditEvents.insert([{ time: old, user: 'ancient', front: 'api', op: 'mkdir', path: '/old', result: 'ok' }, { time: Date.now() - 10 * 86_400_000, user: 'ancient', front: 'api', op: 'mkdir', path: '/recent', result: 'ok' }]);
    expect((await events({ user: 'ancient' })).total).toBe(2);
    expect(await s.core.audit.sweep()).toBeGreaterThanOrEqual(1);
    expect((await events({ user: 'ancient' })).content.map((e) => e.path)).toEqual(['/recent']);
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'audit_log_retention_days', value: '5' }] })).code).toBe(200);
    await s.core.audit.sweep();
    expect((await events({ user: 'ancient' })).total).toBe(0);
  });

  it('audit_log_enabled off records nothing; a clean shutdown writes what is held', async () => {
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'audit_log_enabled', value: 'false' }] })).code).toBe(200);
    const t = now();
    expect((await s.api('POST', '/api/fs/mkdir', { token: alice, body: { path: '/s/off' } })).code).toBe(200);
    expect((await events({ since: t, op: 'mkdir' })).total).toBe(0);
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'audit_log_enabled', value: 'true' }] })).code).toBe(200);
    // Held in memory (the timer has not fired), then the process closes cleanly.
    for (let i = 0; i < 5; i++) s.core.events.emit({ time: Date.now(), user: 'closing', front: 'cli', op: 'mkdir', path: `/c${i}`, result: 'ok' });
    await s.stop();
    s = await s.restart();
    admin = await s.login('admin', ADMIN_PASSWORD);
    alice = await s.login('alice', 'a-pass');
    expect((await events({ user: 'closing' })).total).toBe(5);
  });
});
