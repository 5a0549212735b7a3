import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Client as FtpClient } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { client, startS3 } from '../s3/s3-helpers.js';

const LOCK_BODY = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
const ALL = 8 | 16 | 32 | 128 | 256 | 512 | 1024 | 2048;
const PASS = 'locker pass 1';

/**
 * A WebDAV lock protects the file on every front that submits no token: an API PUT, an SFTP
 * write, an FTP STOR and an S3 PutObject of the locked file are refused with that front's answer
 * and the bytes on disk stay the locked ones; after UNLOCK each of them writes.
 */
describe.each(ONE_BACKEND)('a WebDAV lock on every front ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let sftpSrv: { port: number; close(): Promise<void> };
  let ftpSrv: ProtocolListener;
  let s3: { listener: ProtocolListener; endpoint: string };
  let sftp: SftpSession;
  let ftp: FtpClient;
  const onDisk = () => readFileSync(path.join(root, 'f/locked.txt'), 'utf8');
  const basic = `Basic ${Buffer.from(`locker:${PASS}`).toString('base64')}`;
  const dav = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
    s.inject({ method: method as 'GET', url, headers: { authorization: basic, ...headers }, payload });

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'f/locked.txt': 'v1' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'locker', password: PASS, base_path: '/disk', permission: ALL } })).code).toBe(200);
    sftpSrv = await startSftp(s);
    ftpSrv = await startFtpServer(s.core, '127.0.0.1:0');
    s3 = await startS3(s, [{ name: 'bkt', path: '/disk/f' }]);
    sftp = await connectSftp(sftpSrv.port, { username: 'locker', password: PASS });
    ftp = new FtpClient(10_000);
    await ftp.access({ host: '127.0.0.1', port: ftpSrv.port, user: 'locker', password: PASS });
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

  const attempts = {
    api: async (text: string) => {
      const r = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: admin, 'file-path': encodeURIComponent('/disk/f/locked.txt'), 'content-type': 'application/octet-stream' }, payload: text });
      return JSON.parse(r.body) as { code: number; message: string };
    },
    sftp: async (text: string) => {
      try {
        const h = await call<Buffer>(sftp.sftp, 'open', '/f/locked.txt', 'w');
        await call(sftp.sftp, 'write', h, Buffer.from(text), 0, text.length, 0);
        await call(sftp.sftp, 'close', h);
        return 'ok';
      } catch (err) {
        return `${(err as { code?: number }).code} ${(err as Error).message}`;
      }
    },
    ftp: async (text: string) => {
      try {
        await ftp.uploadFrom(Readable.from([Buffer.from(text)]), '/f/locked.txt');
        return 'ok';
      } catch (err) {
        return (err as Error).message;
      }
    },
    s3: async (text: string) => {
      try {
        await client(s3.endpoint).send(new PutObjectCommand({ Bucket: 'bkt', Key: 'locked.txt', Body: text }));
        return 'ok';
      } catch (err) {
        return (err as { name: string }).name;
      }
    },
  };

  it('refuses each front while the lock is held, and lets each write once it is released', async () => {
    const lock = await dav('LOCK', '/dav/f/locked.txt', { timeout: 'Second-600' }, LOCK_BODY);
    expect(lock.statusCode).toBe(200);
    const token = (lock.headers['lock-token'] as string).replace(/[<>]/g, '');

    expect(await attempts.api('api')).toMatchObject({ code: 403, message: expect.stringContaining('file is locked') });
    expect(await attempts.sftp('sftp')).toBe('3 file is locked'); // SSH_FX_PERMISSION_DENIED
    expect(await attempts.ftp('ftp')).toMatch(/^550/);
    expect(await attempts.s3('s3')).toBe('AccessDenied');
    expect((await dav('PUT', '/dav/f/locked.txt', {}, 'dav')).statusCode).toBe(423);
    expect(onDisk()).toBe('v1');

    expect((await dav('UNLOCK', '/dav/f/locked.txt', { 'lock-token': `<${token}>` })).statusCode).toBe(204);
    expect((await attempts.api('api')).code).toBe(200);
    expect(onDisk()).toBe('api');
    expect(await attempts.sftp('sftp')).toBe('ok');
    expect(onDisk()).toBe('sftp');
    expect(await attempts.ftp('ftp')).toBe('ok');
    expect(onDisk()).toBe('ftp');
    expect(await attempts.s3('s3')).toBe('ok');
    expect(onDisk()).toBe('s3');
  });
});
