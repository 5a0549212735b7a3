import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as FtpClient } from 'basic-ftp';
import { createClient } from 'webdav';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpNow } from '../../src/auth/totp.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { hasProgram } from '../helpers/daemons.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { serverForSuite, startServer, type TestServer } from '../helpers/server.js';
import { startSftp } from '../helpers/sftp.js';
import { listen } from '../webdav/dav-helpers.js';

const run = promisify(execFile);
const ALL_PERMS = 0xffff;
const PROGRAMS = ['sftp', 'sshpass'];
const missing = PROGRAMS.filter((p) => !hasProgram(p));
if (missing.length > 0) {
  if (process.env.CI) throw new Error(`CI needs ${missing.join(', ')} (.ci/packages.sh installs them)`);
  console.warn(`\n*** SKIPPING app-password SFTP checks: ${missing.join(', ')} not installed ***\n`);
}

/** Creates user `u` with password `pw` and turns 2FA on for it; returns its token. */
async function userWith2fa(s: TestServer, admin: string, username: string): Promise<string> {
  expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username, password: 'pw', permission: ALL_PERMS } })).code).toBe(200);
  const t = await s.login(username, 'pw');
  const gen = await s.api('POST', '/api/auth/2fa/generate', { token: t });
  expect((await s.api('POST', '/api/auth/2fa/verify', { token: t, body: { code: totpNow(gen.data.secret), secret: gen.data.secret } })).code).toBe(200);
  return t;
}

describe.each(BACKENDS)('app passwords API on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  serverForSuite(backend, (started, token) => {
    s = started;
    admin = token;
  });

  it('creates (secret shown once, stored hashed), lists, refuses duplicates and others\' ids, revokes', async () => {
    const t = await userWith2fa(s, admin, 'ann');
    const created = await s.api('POST', '/api/me/app_password/create', { token: t, body: { name: 'laptop rclone' } });
    expect(created.code).toBe(200);
    expect(created.data).toMatchObject({ name: 'laptop rclone', last_used_time: '' });
    expect(created.data.password).toMatch(/^[A-Za-z0-9]{32}$/);
    const stored = await s.core.repos.appPasswords.ofUser((await s.core.repos.users.byUsername('ann'))!.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.secretHash).not.toContain(created.data.password);
    expect(stored[0]!.secretHash).toMatch(/^[0-9a-f]{64}$/);

    const list = await s.api('GET', '/api/me/app_password/list', { token: t });
    expect(list.data.total).toBe(1);
    expect(list.data.content[0]).toEqual({ id: created.data.id, name: 'laptop rclone', added_time: created.data.added_time, last_used_time: '' });
    expect(list.data.content[0].password).toBeUndefined();

    expect((await s.api('POST', '/api/me/app_password/create', { token: t, body: { name: 'laptop rclone' } })).code).toBe(400);
    expect((await s.api('POST', '/api/me/app_password/create', { token: t, body: { name: '  ' } })).message).toBe('name is required');
    expect((await s.api('POST', '/api/me/app_password/create', { token: t, body: {} })).code).toBe(400);

    // another user can not see or revoke it
    expect((await s.api('GET', '/api/me/app_password/list', { token: admin })).data.total).toBe(0);
    expect((await s.api('POST', `/api/me/app_password/delete?id=${created.data.id}`, { token: admin })).code).toBe(404);

    // the password works for the protocols' check, and records its use
    const user = await s.core.accounts.checkPassword('ann', created.data.password, '127.0.0.9');
    expect(user.username).toBe('ann');
    expect(Date.parse((await s.api('GET', '/api/me/app_password/list', { token: t })).data.content[0].last_used_time)).toBeGreaterThan(0);

    expect((await s.api('POST', `/api/me/app_password/delete?id=${created.data.id}`, { token: t })).code).toBe(200);
    expect((await s.api('GET', '/api/me/app_password/list', { token: t })).data.total).toBe(0);
    await expect(s.core.accounts.checkPassword('ann', created.data.password, '127.0.0.9')).rejects.toThrow('password is incorrect');
  });

  it('is refused to the guest and removed with the user', async () => {
    expect((await s.api('POST', '/api/me/app_password/create', { body: { name: 'x' } })).code).toBe(401);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'pw' } })).code).toBe(200);
    const t = await s.login('bob', 'pw');
    expect((await s.api('POST', '/api/me/app_password/create', { token: t, body: { name: 'x' } })).code).toBe(200);
    const id = (await s.core.repos.users.byUsername('bob'))!.id;
    expect((await s.api('POST', `/api/admin/user/delete?id=${id}`, { token: admin })).code).toBe(200);
    expect(await s.core.repos.appPasswords.ofUser(id)).toEqual([]);
  });
});

describe('app passwords on WebDAV, SFTP and FTP with 2FA on', () => {
  let s: TestServer;
  let admin: string;
  let token: string;
  let base: string;
  let sftp: ProtocolListener;
  let ftp: ProtocolListener;
  let root: string;
  let work: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({ 'hello.txt': 'hello app password' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    token = await userWith2fa(s, admin, 'carol');
    base = await listen(s);
    sftp = await startSftp(s);
    ftp = await startFtpServer(s.core, '127.0.0.1:0');
    work = mkdtempSync(path.join(os.tmpdir(), 'atrium-apppw-'));
  });
  afterAll(async () => {
    await sftp?.close();
    await ftp?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  const webdavRead = (password: string) => createClient(`${base}/dav`, { username: 'carol', password }).getFileContents('/s/hello.txt', { format: 'text' });
  const ftpRead = async (password: string) => {
    const c = new FtpClient(10_000);
    try {
      await c.access({ host: '127.0.0.1', port: ftp.port, user: 'carol', password });
      return (await c.list('/s')).map((e) => e.name);
    } finally {
      c.close();
    }
  };
  const sftpGet = async (password: string) => {
    const batch = path.join(work, 'batch');
    writeFileSync(batch, 'get /s/hello.txt got.txt\n');
    rmSync(path.join(work, 'got.txt'), { force: true });
    await run(
      'sshpass',
      ['-p', password, 'sftp', '-P', String(sftp.port), '-o', 'UserKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=no', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=no', '-o', 'PreferredAuthentications=password', '-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1', '-b', batch, 'carol@127.0.0.1'],
      { cwd: work, timeout: 20_000 },
    );
    return (await import('node:fs')).readFileSync(path.join(work, 'got.txt'), 'utf8');
  };

  it('refuses the account password, takes the app password, and stops taking it once revoked', async () => {
    // account password alone: refused on each protocol
    await expect(webdavRead('pw')).rejects.toThrow(/401/);
    await expect(ftpRead('pw')).rejects.toThrow(/530/);
    if (missing.length === 0) await expect(sftpGet('pw')).rejects.toThrow();

    const created = await s.api('POST', '/api/me/app_password/create', { token, body: { name: 'sync' } });
    const secret: string = created.data.password;
    expect(await webdavRead(secret)).toBe('hello app password');
    expect(await ftpRead(secret)).toEqual(['hello.txt']);
    if (missing.length === 0) expect(await sftpGet(secret)).toBe('hello app password');
    expect((await s.api('GET', '/api/me/app_password/list', { token })).data.content[0].last_used_time).not.toBe('');

    expect((await s.api('POST', `/api/me/app_password/delete?id=${created.data.id}`, { token })).code).toBe(200);
    await expect(webdavRead(secret)).rejects.toThrow(/401/);
    await expect(ftpRead(secret)).rejects.toThrow(/530/);
    if (missing.length === 0) await expect(sftpGet(secret)).rejects.toThrow();
  });

  it('protocol_password_with_2fa restores the password alone; without 2FA the password works as before', async () => {
    // clear the failures of the test above on this address
    const keep = await s.api('POST', '/api/me/app_password/create', { token, body: { name: 'keep' } });
    expect(await webdavRead(keep.data.password)).toBe('hello app password');

    const set = (value: string) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'protocol_password_with_2fa', value, type: 'bool', group: 5, flag: 1 }] });
    expect((await set('true')).code).toBe(200);
    expect(await webdavRead('pw')).toBe('hello app password');
    expect(await ftpRead('pw')).toEqual(['hello.txt']);
    expect((await set('false')).code).toBe(200);
    await expect(webdavRead('pw')).rejects.toThrow(/401/);

    // a user without 2FA keeps using the account password
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dave', password: 'dpw', permission: ALL_PERMS } })).code).toBe(200);
    expect(await createClient(`${base}/dav`, { username: 'dave', password: 'dpw' }).getFileContents('/s/hello.txt', { format: 'text' })).toBe('hello app password');
  });
});
