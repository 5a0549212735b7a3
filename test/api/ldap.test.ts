import { Client as FtpClient } from 'basic-ftp';
import { createClient } from 'webdav';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { escapeFilterValue } from '../../src/auth/ldap.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, startSftp } from '../helpers/sftp.js';
import { hasSlapd, LDAP_BASE, LDAP_MANAGER_DN, LDAP_MANAGER_PASSWORD, type Slapd, startSlapd } from '../helpers/slapd.js';
import { listen } from '../webdav/dav-helpers.js';
import { rmSync } from 'node:fs';

const enabled = hasSlapd();
if (!enabled) {
  if (process.env.CI) throw new Error('CI needs slapd, ldap-utils and openssl (.ci/packages.sh installs them)');
  console.warn('\n*** SKIPPING LDAP tests: slapd is not installed ***\n');
}
const PERMS = 256 | 512 | 1024 | 2048;

it('escapes filter values (RFC 4515)', () => {
  expect(escapeFilterValue('a*(b)\\c')).toBe('a\\2a\\28b\\29\\5cc');
});

describe.runIf(enabled)('LDAP sign-in against slapd', () => {
  let s: TestServer;
  let admin: string;
  let dir: Slapd;
  let root: string;
  let base: string;
  let ftp: ProtocolListener;
  let sftp: ProtocolListener;
  const save = async (items: Record<string, string>) => {
    const r = await s.api('POST', '/api/admin/setting/save', { token: admin, body: Object.entries(items).map(([key, value]) => ({ key, value })) });
    expect(r.code, r.message).toBe(200);
  };
  const ldapLogin = (username: string, password: string) => s.api('POST', '/api/auth/login/ldap', { body: { username, password } });

  beforeAll(async () => {
    dir = await startSlapd({ alice: 'alice-dir-pw', bob: 'bob-dir-pw', carol: 'carol-dir-pw' });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({ 'team/notes.txt': 'team notes' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    await save({
      ldap_server: dir.url,
      ldap_manager_dn: LDAP_MANAGER_DN,
      ldap_manager_password: LDAP_MANAGER_PASSWORD,
      ldap_user_search_base: `ou=people,${LDAP_BASE}`,
      ldap_user_search_filter: '(uid=%s)',
      ldap_default_dir: '/s/team',
      ldap_default_permission: String(PERMS),
    });
    base = await listen(s);
    ftp = await startFtpServer(s.core, '127.0.0.1:0');
    sftp = await startSftp(s);
  });
  afterAll(async () => {
    await ftp?.close();
    await sftp?.close();
    await s?.destroy();
    await dir?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('is refused while ldap_login_enabled is off', async () => {
    expect(await ldapLogin('alice', 'alice-dir-pw')).toMatchObject({ code: 403, message: 'ldap is not enabled' });
    expect(await s.core.repos.users.byUsername('alice')).toBeUndefined();
  });

  it('first login creates the user with the default path and permission; wrong password and unknown user refused', async () => {
    await save({ ldap_login_enabled: 'true' });
    expect(await ldapLogin('alice', 'wrong')).toMatchObject({ code: 400, message: 'password is incorrect' });
    expect(await ldapLogin('nobody', 'x')).toMatchObject({ code: 400, message: 'password is incorrect' });
    expect(await ldapLogin('alice', '')).toMatchObject({ code: 400, message: 'password is incorrect' });
    expect(await ldapLogin('*', 'alice-dir-pw')).toMatchObject({ code: 400, message: 'password is incorrect' });
    expect(await s.core.repos.users.byUsername('alice')).toBeUndefined();
    const ok = await ldapLogin('alice', 'alice-dir-pw');
    expect(ok.code).toBe(200);
    const me = (await s.api('GET', '/api/me', { token: ok.data.token })).data;
    expect(me).toMatchObject({ username: 'alice', base_path: '/s/team', permission: PERMS, allow_ldap: true, role: 0 });
    // the local password of the created user is random: the plain login does not take the directory's
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'alice', password: 'alice-dir-pw' } })).code).toBe(400);
    // a second login finds the same user
    expect((await ldapLogin('alice', 'alice-dir-pw')).code).toBe(200);
    expect((await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.filter((u: any) => u.username === 'alice')).toHaveLength(1);
  });

  it('keeps allow_ldap false given at creation: that user can not sign in through the directory', async () => {
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'local-pw', allow_ldap: false } })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/user/get?id=${(await s.core.repos.users.byUsername('bob'))!.id}`, { token: admin })).data.allow_ldap).toBe(false);
    expect(await ldapLogin('bob', 'bob-dir-pw')).toMatchObject({ code: 403, message: 'login via ldap is not allowed' });
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'bob', password: 'local-pw' } })).code).toBe(200);
  });

  it('an LDAP user signs in to WebDAV, FTP and SFTP with the directory password', async () => {
    const dav = createClient(`${base}/dav`, { username: 'alice', password: 'alice-dir-pw' });
    expect(await dav.getFileContents('/notes.txt', { format: 'text' })).toBe('team notes');
    await expect(createClient(`${base}/dav`, { username: 'alice', password: 'nope' }).getFileContents('/notes.txt', { format: 'text' })).rejects.toThrow(/401/);
    const c = new FtpClient(10_000);
    try {
      await c.access({ host: '127.0.0.1', port: ftp.port, user: 'alice', password: 'alice-dir-pw' });
      expect((await c.list('/')).map((e) => e.name)).toEqual(['notes.txt']);
    } finally {
      c.close();
    }
    // carol has never signed in: a protocol login creates her too
    const session = await connectSftp(sftp.port, { username: 'carol', password: 'carol-dir-pw' });
    try {
      const list = await call<Array<{ filename: string }>>(session.sftp, 'readdir', '/');
      expect(list.map((e) => e.filename)).toEqual(['notes.txt']);
    } finally {
      session.end();
    }
    expect((await s.core.repos.users.byUsername('carol'))?.basePath).toBe('/s/team');
  });

  it('LDAPS and StartTLS with the test CA; a certificate from another CA is refused', async () => {
    await save({ ldap_server: dir.ldapsUrl, ldap_ca_cert: dir.caPem });
    expect((await ldapLogin('alice', 'alice-dir-pw')).code).toBe(200);
    await save({ ldap_ca_cert: dir.otherCaPem });
    const refused = await ldapLogin('alice', 'alice-dir-pw');
    expect(refused.code).not.toBe(200);
    expect(refused.message).toMatch(/^ldap: /);
    // without a CA of its own the system's CAs are used, which do not know the test CA either
    await save({ ldap_ca_cert: '' });
    expect((await ldapLogin('alice', 'alice-dir-pw')).code).not.toBe(200);
    await save({ ldap_server: dir.url, ldap_start_tls: 'true', ldap_ca_cert: dir.caPem });
    expect((await ldapLogin('alice', 'alice-dir-pw')).code).toBe(200);
    await save({ ldap_ca_cert: dir.otherCaPem });
    expect((await ldapLogin('alice', 'alice-dir-pw')).message).toMatch(/^ldap: /);
    await save({ ldap_start_tls: 'false', ldap_ca_cert: '' });
  });

  it('the admin (allow_ldap false, as created) is never signed in through the directory', async () => {
    expect((await s.core.repos.users.byUsername('admin'))?.allowLdap).toBe(false);
    await dir.addUser('admin', 'dir-admin-pw');
    expect(await ldapLogin('admin', 'dir-admin-pw')).toMatchObject({ code: 403, message: 'login via ldap is not allowed' });
    await expect(s.core.accounts.checkPassword('admin', 'dir-admin-pw', '127.0.0.7')).rejects.toThrow('password is incorrect');
  });

  it('wrong directory passwords count towards the login lockout', async () => {
    expect((await ldapLogin('alice', 'alice-dir-pw')).code).toBe(200); // a success clears earlier failures
    for (let i = 0; i < 5; i++) expect((await ldapLogin('alice', `wrong-${i}`)).code).toBe(400);
    expect((await ldapLogin('alice', 'alice-dir-pw')).code).toBe(429);
  });
});
