import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Client as FtpClient } from 'basic-ftp';
import { utils as sshUtils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { MSG_CREDENTIAL_REVOKED, MSG_NO_FTP } from '../../src/protocols/live-session.js';
import { MSG_SESSION_PASSWORD_CHANGED, MSG_SESSION_USER_DISABLED, MSG_SESSION_USER_GONE } from '../../src/view/live.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Long-lived sessions are decided at each operation on the account as it is then: each change
 * an admin can make while an SFTP session, an FTP session or a WebDAV lock is held refuses the
 * next operation, and what it would have written is not on disk (neither in the old area nor
 * below a new base path); an unchanged session keeps working.
 */
const PERMS = { write: 8, rename: 16, move: 32, remove: 128, davRead: 256, davManage: 512, ftpRead: 1024, ftpWrite: 2048 };
const ALL = Object.values(PERMS).reduce((a, b) => a | b, 0);
const READ_ONLY = PERMS.davRead | PERMS.ftpRead;
const CHANGES = ['disable', 'delete', 'password', 'narrow', 'write', 'hide', 'folder-password', 'no-ftp-bit'] as const;
type Change = (typeof CHANGES)[number] | 'none';
const FRONTS = ['sftp', 'ftp', 'webdav'] as const;
type Front = (typeof FRONTS)[number];
// Losing bit 1024 ends SFTP/FTP sessions; WebDAV does not use it.
const CASES = [...CHANGES, 'none' as const].flatMap((change) => FRONTS.filter((f) => change !== 'no-ftp-bit' || f !== 'webdav').map((front) => ({ change, front })));
/** The changes that end an SFTP/FTP session, with the reason it is answered with. */
const ENDING: Partial<Record<Change, string>> = {
  disable: MSG_SESSION_USER_DISABLED,
  delete: MSG_SESSION_USER_GONE,
  password: MSG_SESSION_PASSWORD_CHANGED,
  'no-ftp-bit': MSG_NO_FTP,
};
const SFTP_NO_SUCH_FILE = 2;
const SFTP_DENIED = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (name: string, password: string) => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
const FIRST = 'first pass 1';
const LOCK_BODY = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';

describe.each(ONE_BACKEND)('long-lived sessions decided at every operation ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let sftpSrv: ProtocolListener;
  let ftpSrv: ProtocolListener;
  const sessions: SftpSession[] = [];
  const ftpClients: FtpClient[] = [];
  const accounts: Array<{ id: number; name: string; folder: string }> = [];

  const onDisk = (folder: string, rel: string) => path.join(root, folder, rel);
  const nothingLanded = (folder: string, name: string) => {
    expect(existsSync(onDisk(folder, `dir/${name}`)), `${name} in the old area`).toBe(false);
    expect(existsSync(onDisk(folder, `sub/dir/${name}`)), `${name} below the new base path`).toBe(false);
  };

  /** The admin's change to the account. */
  const apply = async (a: { id: number; name: string; folder: string }, change: Change) => {
    const update = (body: Record<string, unknown>) => s.api('POST', '/api/admin/user/update', { token: admin, body: { id: a.id, username: a.name, ...body } });
    const meta = (body: Record<string, unknown>) => s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: `/disk/${a.folder}/dir`, ...body } });
    let r: { code: number; message: string } | undefined;
    switch (change) {
      case 'none':
        return;
      case 'disable':
        r = await update({ disabled: true });
        break;
      case 'delete':
        r = await s.api('POST', '/api/admin/user/delete', { token: admin, query: { id: String(a.id) } });
        break;
      case 'password':
        // Password stamps are seconds: the change must fall in a later second than the login.
        await sleep(1100);
        r = await update({ password: 'second pass 2' });
        break;
      case 'narrow':
        mkdirSync(onDisk(a.folder, 'sub/dir'), { recursive: true });
        r = await update({ base_path: `/disk/${a.folder}/sub` });
        break;
      case 'write':
        r = await update({ permission: READ_ONLY });
        break;
      case 'no-ftp-bit':
        r = await update({ permission: ALL & ~PERMS.ftpRead });
        break;
      case 'hide':
        r = await meta({ hide: '^keep\n^late\n^fresh\n^locked\n^moved', h_sub: true });
        break;
      case 'folder-password':
        r = await meta({ password: 'folder pw', p_sub: true });
        break;
    }
    expect(r!.code, r!.message).toBe(200);
  };

  beforeAll(async () => {
    s = await startServer(backend);
    const tree: Record<string, string> = { 'steady/dir/keep.txt': 'keep', 'cred/dir/keep.txt': 'keep' };
    CASES.forEach((_, i) => (tree[`c${i}/dir/keep.txt`] = 'keep'));
    root = makeTree(tree);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    for (let i = 0; i < CASES.length; i++) {
      const name = `live${i}`;
      const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: FIRST, base_path: `/disk/c${i}`, permission: ALL } });
      expect(created.code, created.message).toBe(200);
      accounts.push({ id: (await s.core.repos.users.byUsername(name))!.id, name, folder: `c${i}` });
    }
    sftpSrv = await startSftp(s);
    ftpSrv = await startFtpServer(s.core, '127.0.0.1:0');
  });
  afterAll(async () => {
    for (const c of ftpClients) c.close();
    for (const x of sessions) x.end();
    await sftpSrv?.close();
    await ftpSrv?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const openSftp = async (name: string, auth: Record<string, unknown> = { password: FIRST }) => {
    const x = await connectSftp(sftpSrv.port, { username: name, ...auth });
    sessions.push(x);
    let closed = false;
    x.client.on('close', () => (closed = true));
    return { ...x, closed: () => closed };
  };
  const openFtp = async (name: string, password = FIRST) => {
    const c = new FtpClient(10_000);
    ftpClients.push(c);
    await c.access({ host: '127.0.0.1', port: ftpSrv.port, user: name, password });
    return c;
  };
  const sftpRead = async (sftp: SftpSession['sftp'], h: Buffer) => {
    const buf = Buffer.alloc(64);
    const n = await call<number>(sftp, 'read', h, buf, 0, 64, 0);
    return buf.subarray(0, n).toString();
  };

  const sftpCase = async (a: (typeof accounts)[number], change: Change) => {
    const x = await openSftp(a.name);
    const reading = await call<Buffer>(x.sftp, 'open', '/dir/keep.txt', 'r');
    const writing = await call<Buffer>(x.sftp, 'open', '/dir/late.txt', 'w');
    await call(x.sftp, 'write', writing, Buffer.from('written before '), 0, 15, 0);
    await apply(a, change);
    if (change === 'none') {
      expect(await sftpRead(x.sftp, reading)).toBe('keep');
      await call(x.sftp, 'write', writing, Buffer.from('and after'), 0, 9, 15);
      await call(x.sftp, 'close', writing);
      expect(readFileSync(onDisk(a.folder, 'dir/late.txt'), 'utf8')).toBe('written before and after');
      expect((await call<Array<{ filename: string }>>(x.sftp, 'readdir', '/dir')).map((e) => e.filename).sort()).toEqual(['keep.txt', 'late.txt']);
      return;
    }
    const ending = ENDING[change];
    if (ending) {
      // The upload completing after the change is refused, and the session ends with it.
      await expect(call(x.sftp, 'close', writing)).rejects.toMatchObject({ code: SFTP_DENIED, message: ending });
      await waitUntil(() => x.closed());
      nothingLanded(a.folder, 'late.txt');
      return;
    }
    // A hidden path is answered as if it did not exist.
    const refusal = change === 'hide' ? SFTP_NO_SUCH_FILE : SFTP_DENIED;
    await expect(call(x.sftp, 'close', writing)).rejects.toMatchObject({ code: refusal });
    nothingLanded(a.folder, 'late.txt');
    if (change === 'write') {
      // Reading is what the account still may do.
      expect(await sftpRead(x.sftp, reading)).toBe('keep');
      expect((await call<{ size: number }>(x.sftp, 'stat', '/dir/keep.txt')).size).toBe(4);
    } else {
      // A read of the old area is refused, on the handle opened before and by name.
      await expect(sftpRead(x.sftp, reading)).rejects.toMatchObject({ code: refusal });
      await expect(call(x.sftp, 'stat', '/dir/keep.txt')).rejects.toMatchObject({ code: change === 'folder-password' ? SFTP_DENIED : SFTP_NO_SUCH_FILE });
    }
    const fresh = call<Buffer>(x.sftp, 'open', '/dir/fresh.txt', 'w');
    if (change === 'narrow') {
      // Client paths now start from the new base path: the file lands there, not in the old area.
      const h = await fresh;
      await call(x.sftp, 'write', h, Buffer.from('new area'), 0, 8, 0);
      await call(x.sftp, 'close', h);
      expect(readFileSync(onDisk(a.folder, 'sub/dir/fresh.txt'), 'utf8')).toBe('new area');
    } else await expect(fresh).rejects.toMatchObject({ code: SFTP_DENIED });
    expect(existsSync(onDisk(a.folder, 'dir/fresh.txt'))).toBe(false);
    expect(x.closed()).toBe(false);
  };

  const ftpCase = async (a: (typeof accounts)[number], change: Change) => {
    const c = await openFtp(a.name);
    // An upload in progress across the change: its end comes after it.
    const body = new PassThrough();
    const upload = c.uploadFrom(body, '/dir/late.txt');
    body.write(Buffer.alloc(64 * 1024, 0x41));
    // The transfer is under way (150 sent, bytes flowing) when the admin acts.
    await sleep(300);
    await apply(a, change);
    body.end(Buffer.from('the end'));
    if (change === 'none') {
      await upload;
      expect(readFileSync(onDisk(a.folder, 'dir/late.txt')).length).toBe(64 * 1024 + 7);
      expect((await c.list('/dir')).map((e) => e.name).sort()).toEqual(['keep.txt', 'late.txt']);
      return;
    }
    const ending = ENDING[change];
    if (ending) {
      await expect(upload).rejects.toMatchObject({ code: 530, message: `530 ${ending}` });
      await expect(c.list('/dir')).rejects.toThrow();
      expect(c.closed).toBe(true);
      nothingLanded(a.folder, 'late.txt');
      return;
    }
    await expect(upload).rejects.toMatchObject({ code: 550 });
    nothingLanded(a.folder, 'late.txt');
    if (change === 'write') expect(await c.size('/dir/keep.txt')).toBe(4);
    else await expect(c.downloadTo(new PassThrough().resume(), '/dir/keep.txt')).rejects.toMatchObject({ code: 550 });
    const fresh = c.uploadFrom(readableOf('new area'), '/dir/fresh.txt');
    if (change === 'narrow') {
      await fresh;
      expect(readFileSync(onDisk(a.folder, 'sub/dir/fresh.txt'), 'utf8')).toBe('new area');
    } else await expect(fresh).rejects.toMatchObject({ code: 550 });
    expect(existsSync(onDisk(a.folder, 'dir/fresh.txt'))).toBe(false);
    expect(c.closed).toBe(false);
  };

  const webdavCase = async (a: (typeof accounts)[number], change: Change) => {
    const auth = basic(a.name, FIRST);
    const dav = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
      s.inject({ method: method as 'GET', url, headers: { authorization: auth, ...headers }, payload });
    expect((await dav('PUT', '/dav/dir/locked.txt', {}, 'v1')).statusCode).toBe(201);
    const lock = await dav('LOCK', '/dav/dir/locked.txt', { timeout: 'Second-600' }, LOCK_BODY);
    expect(lock.statusCode).toBe(200);
    const token = (lock.headers['lock-token'] as string).replace(/[<>]/g, '');
    const withToken = { if: `(<${token}>)` };
    await apply(a, change);
    const put = await dav('PUT', '/dav/dir/locked.txt', withToken, 'v2');
    const move = await dav('MOVE', '/dav/dir/locked.txt', { ...withToken, destination: '/dav/dir/moved.txt' });
    const del = await dav('DELETE', '/dav/dir/locked.txt', withToken);
    if (change === 'none') {
      expect(put.statusCode).toBe(201);
      expect(move.statusCode).toBe(201);
      expect(readFileSync(onDisk(a.folder, 'dir/moved.txt'), 'utf8')).toBe('v2');
      expect(del.statusCode).toBe(404);
      return;
    }
    const expected: Record<Exclude<Change, 'none' | 'no-ftp-bit'>, number[]> = {
      // WebDAV answers a disabled account 403 (webdav/auth.ts), an unknown one or a wrong password 401.
      disable: [403, 403, 403],
      delete: [401, 401, 401],
      password: [401, 401, 401],
      // The old path is not the user's any more: the lock's resource is not there for them.
      narrow: [412, 404, 404],
      write: [403, 403, 403],
      hide: [403, 403, 403],
      'folder-password': [403, 403, 403],
    };
    expect([put.statusCode, move.statusCode, del.statusCode]).toEqual(expected[change as keyof typeof expected]);
    // The locked file is as it was, where it was.
    expect(readFileSync(onDisk(a.folder, 'dir/locked.txt'), 'utf8')).toBe('v1');
    expect(existsSync(onDisk(a.folder, 'dir/moved.txt'))).toBe(false);
    expect(existsSync(onDisk(a.folder, 'sub/dir/locked.txt'))).toBe(false);
  };

  const readableOf = (text: string) => {
    const p = new PassThrough();
    p.end(text);
    return p;
  };

  const run: Record<Front, (a: (typeof accounts)[number], change: Change) => Promise<void>> = { sftp: sftpCase, ftp: ftpCase, webdav: webdavCase };

  it.each(CASES.map((c, i) => ({ ...c, i })))('$change, then the next operation of an open $front session', async ({ change, front, i }) => {
    await run[front](accounts[i]!, change);
  });

  it('steady state: operations of open sessions read the user from the cache, not the database', async () => {
    const name = 'steady';
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: FIRST, base_path: '/disk/steady', permission: ALL } })).code).toBe(200);
    const x = await openSftp(name);
    const c = await openFtp(name);
    const h = await call<Buffer>(x.sftp, 'open', '/dir/keep.txt', 'r');
    // Warm: the first operations fill the cache.
    await call(x.sftp, 'stat', '/dir/keep.txt');
    await c.size('/dir/keep.txt');
    // The sign-ins' audit rows are written before the window opens: it counts what the operations cost.
    await s.core.audit.flush();
    const before = s.core.db.queries();
    const started = Date.now();
    for (let n = 0; n < 100; n++) {
      await call(x.sftp, 'stat', '/dir/keep.txt');
      expect(await sftpRead(x.sftp, h)).toBe('keep');
      expect(await c.size('/dir/keep.txt')).toBe(4);
    }
    const elapsed = Date.now() - started;
    const queries = s.core.db.queries() - before;
    // 300 operations: at most one read of the user per 2 s cache period, not one per operation.
    expect(queries, `${queries} queries in ${elapsed} ms`).toBeLessThanOrEqual(2 * (Math.floor(elapsed / 2000) + 1));
  });

  it('a revoked app password or a removed SSH key ends the sessions signed in with it', async () => {
    const name = 'cred';
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: FIRST, base_path: '/disk/cred', permission: ALL } })).code).toBe(200);
    const token = await s.login(name, FIRST);
    const app = await s.api('POST', '/api/me/app_password/create', { token, body: { name: 'client' } });
    expect(app.code, app.message).toBe(200);
    const keys = sshUtils.generateKeyPairSync('ed25519');
    const added = await s.api('POST', '/api/me/sshkey/add', { token, body: { title: 'laptop', key: keys.public } });
    expect(added.code, added.message).toBe(200);
    const byApp = await openSftp(name, { password: app.data.password });
    const byKey = await openSftp(name, { privateKey: keys.private });
    const byPassword = await openSftp(name);
    const ftpByApp = await openFtp(name, app.data.password);
    for (const x of [byApp, byKey, byPassword]) expect((await call<unknown[]>(x.sftp, 'readdir', '/dir')).length).toBe(1);
    expect((await ftpByApp.list('/dir')).length).toBe(1);

    const [stored] = await s.core.repos.appPasswords.ofUser((await s.core.repos.users.byUsername(name))!.id);
    expect((await s.api('POST', '/api/me/app_password/delete', { token, query: { id: String(stored!.id) } })).code).toBe(200);
    const key = (await s.api('GET', '/api/me/sshkey/list', { token })).data.content[0];
    expect((await s.api('POST', '/api/me/sshkey/delete', { token, query: { id: String(key.id) } })).code).toBe(200);
    // A credential found there is trusted for 2 s, as the cached user.
    await sleep(2100);
    for (const x of [byApp, byKey]) {
      await expect(call(x.sftp, 'readdir', '/dir')).rejects.toMatchObject({ code: SFTP_DENIED, message: MSG_CREDENTIAL_REVOKED });
      await waitUntil(() => x.closed());
    }
    await expect(ftpByApp.list('/dir')).rejects.toMatchObject({ code: 530, message: `530 ${MSG_CREDENTIAL_REVOKED}` });
    // The session signed in with the account password is not concerned.
    expect((await call<unknown[]>(byPassword.sftp, 'readdir', '/dir')).length).toBe(1);
    expect(byPassword.closed()).toBe(false);
  });
});
