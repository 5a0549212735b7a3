import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

function keygen(type: string, bits?: string): { pub: string; fingerprint: string; priv: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-key-'));
  try {
    const file = path.join(dir, 'key');
    execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', bits] : []), '-N', '', '-C', `${type}@test`, '-f', file]);
    const fingerprint = execFileSync('ssh-keygen', ['-lf', `${file}.pub`], { encoding: 'utf8' }).split(' ')[1]!;
    return { pub: readFileSync(`${file}.pub`, 'utf8'), fingerprint, priv: readFileSync(file, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(BACKENDS)('SSH public keys on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'k', password: 'p' } });
    user = await s.login('k', 'p');
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('adds keys of every common type with the fingerprint ssh-keygen prints, lists and deletes them', async () => {
    const keys = [keygen('ed25519'), keygen('rsa', '2048'), keygen('ecdsa', '256')];
    for (const [i, k] of keys.entries()) {
      expect((await s.api('POST', '/api/me/sshkey/add', { token: user, body: { title: `key${i}`, key: k.pub } })).code).toBe(200);
    }
    const listed = (await s.api('GET', '/api/me/sshkey/list', { token: user })).data;
    expect(listed.total).toBe(3);
    expect(listed.content.map((x: any) => x.fingerprint)).toEqual(keys.map((k) => k.fingerprint));
    expect(listed.content[0]).toMatchObject({ title: 'key0' });
    expect(Date.parse(listed.content[0].added_time)).toBeGreaterThan(0);
    expect(Date.parse(listed.content[0].last_used_time)).toBeGreaterThan(0);
    // options before the key type (authorized_keys form) are accepted
    const withOptions = keygen('ed25519');
    expect((await s.api('POST', '/api/me/sshkey/add', { token: user, body: { title: 'opts', key: `no-pty,from="127.0.0.1" ${withOptions.pub}` } })).code).toBe(200);
    const id = listed.content[0].id;
    expect((await s.api('POST', `/api/me/sshkey/delete?id=${id}`, { token: user })).code).toBe(200);
    expect((await s.api('GET', '/api/me/sshkey/list', { token: user })).data.total).toBe(3);
    // the admin sees and deletes any user's keys
    const uid = (await s.core.repos.users.byUsername('k'))!.id;
    const adminList = (await s.api('GET', `/api/admin/user/sshkey/list?uid=${uid}`, { token: admin })).data;
    expect(adminList.total).toBe(3);
    expect((await s.api('POST', `/api/admin/user/sshkey/delete?id=${adminList.content[0].id}`, { token: admin })).code).toBe(200);
    expect((await s.api('GET', '/api/me/sshkey/list', { token: user })).data.total).toBe(2);
  });

  it('refuses invalid keys, private keys, duplicate titles, other users\' keys and the guest', async () => {
    const k = keygen('ed25519');
    for (const bad of ['', 'ssh-ed25519', 'ssh-ed25519 AAAAnotbase64!!', 'ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIA==', k.priv, 'hello world']) {
      expect(await s.api('POST', '/api/me/sshkey/add', { token: user, body: { title: 'bad', key: bad } }), bad.slice(0, 30)).toEqual({
        code: 400,
        message: 'provided key invalid',
        data: null,
      });
    }
    expect((await s.api('POST', '/api/me/sshkey/add', { token: user, body: { title: 'dup', key: k.pub } })).code).toBe(200);
    expect((await s.api('POST', '/api/me/sshkey/add', { token: user, body: { title: 'dup', key: keygen('ed25519').pub } })).message).toBe(
      'key with the same title already exists',
    );
    const mine = (await s.api('GET', '/api/me/sshkey/list', { token: user })).data.content.find((x: any) => x.title === 'dup');
    expect((await s.api('POST', `/api/me/sshkey/delete?id=${mine.id}`, { token: admin })).code).toBe(404);
    expect((await s.api('GET', '/api/me/sshkey/list', { token: admin })).data.total).toBe(0);
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.role === 1);
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false } });
    try {
      expect(await s.api('GET', '/api/me/sshkey/list')).toEqual({ code: 401, message: 'user invalid', data: null });
    } finally {
      await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } });
    }
  });
});
