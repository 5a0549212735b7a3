import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { serverForSuite, type TestServer } from '../helpers/server.js';

describe.each(BACKENDS)('users admin on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  serverForSuite(backend, (started, token) => {
    s = started;
    admin = token;
  });

  it('lists the seeded admin and guest in id order, paged', async () => {
    const all = await s.api('GET', '/api/admin/user/list', { token: admin });
    expect(all.data.total).toBe(2);
    expect(all.data.content.map((u: any) => [u.username, u.role, u.disabled])).toEqual([
      ['admin', 2, false],
      ['guest', 1, true],
    ]);
    expect(all.data.content.every((u: any) => u.password === '')).toBe(true);
    const page2 = await s.api('GET', '/api/admin/user/list?page=2&per_page=1', { token: admin });
    expect(page2.data).toMatchObject({ total: 2, content: [{ username: 'guest' }] });
  });

  it('creates, reads, updates and deletes a user', async () => {
    const created = await s.api('POST', '/api/admin/user/create', {
      token: admin,
      body: { username: 'ann', password: 'secret', base_path: '/ann\\docs/', permission: 0x18, disabled: false },
    });
    expect(created).toEqual({ code: 200, message: 'success', data: null });
    const list = await s.api('GET', '/api/admin/user/list', { token: admin });
    const ann = list.data.content.find((u: any) => u.username === 'ann');
    expect(ann).toMatchObject({ base_path: '/ann/docs', permission: 24, role: 0, password: '', sso_id: '' });
    const got = await s.api('GET', `/api/admin/user/get?id=${ann.id}`, { token: admin });
    expect(got.data).toEqual(ann);

    const tAnn = await s.login('ann', 'secret');
    // Editing without a password keeps the password and the sessions.
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...ann, permission: 0x3f8, password: '' } })).code).toBe(200);
    expect((await s.api('GET', '/api/me', { token: tAnn })).data.permission).toBe(0x3f8);
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'ann', password: 'secret' } })).code).toBe(200);

    expect((await s.api('POST', `/api/admin/user/delete?id=${ann.id}`, { token: admin })).code).toBe(200);
    expect(await s.api('GET', `/api/admin/user/get?id=${ann.id}`, { token: admin })).toEqual({ code: 404, message: 'user not found', data: null });
  });

  it('refuses what the original refuses', async () => {
    const users = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content;
    const adminUser = users.find((u: any) => u.role === 2);
    const guest = users.find((u: any) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'x', password: 'p', role: 2 } })).message).toBe(
      'admin or guest user can not be created',
    );
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'y', password: 'p', role: 1 } })).message).toBe(
      'admin or guest user can not be created',
    );
    expect((await s.api('POST', `/api/admin/user/delete?id=${adminUser.id}`, { token: admin })).message).toBe('cannot delete admin or guest');
    expect((await s.api('POST', `/api/admin/user/delete?id=${guest.id}`, { token: admin })).message).toBe('cannot delete admin or guest');
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, role: 0 } })).message).toBe('role can not be changed');
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...adminUser, disabled: true } })).message).toBe(
      'admin user can not be disabled',
    );
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dup', password: 'p' } });
    const dup = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dup', password: 'p' } });
    expect(dup).toMatchObject({ code: 400, message: 'username dup is already taken' });
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { password: 'p' } })).message).toBe('username is required');
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'z' } })).message).toBe('password is required');
    expect((await s.api('GET', '/api/admin/user/get?id=abc', { token: admin })).code).toBe(400);
    expect((await s.api('GET', '/api/admin/user/get', { token: admin })).message).toBe('id is required');
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: 99999, username: 'n' } })).code).toBe(404);
    expect((await s.api('POST', '/api/admin/user/del_cache?username=nobody', { token: admin })).code).toBe(404);
    expect((await s.api('POST', '/api/admin/user/del_cache?username=admin', { token: admin })).code).toBe(200);
  });

  it('admin-only routes answer 403 to general users and the guest', async () => {
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'plain', password: 'p', permission: 0xffff } });
    const plain = await s.login('plain', 'p');
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.role === 1);
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false } });
    try {
      const routes: Array<[string, string]> = [
        ['GET', '/api/admin/user/list'],
        ['GET', '/api/admin/user/get?id=1'],
        ['POST', '/api/admin/user/create'],
        ['POST', '/api/admin/user/update'],
        ['POST', '/api/admin/user/delete?id=1'],
        ['POST', '/api/admin/user/cancel_2fa?id=1'],
        ['POST', '/api/admin/user/del_cache?username=admin'],
      ];
      for (const [method, url] of routes) {
        for (const token of [plain, undefined]) {
          const r = await s.api(method, url, { token, body: method === 'POST' ? { username: 'h', password: 'h' } : undefined });
          expect(r, `${method} ${url}`).toEqual({ code: 403, message: 'You are not an admin', data: null });
        }
      }
      // The guest, once enabled, browses without a header.
      expect((await s.api('GET', '/api/me')).data).toMatchObject({ username: 'guest', role: 1 });
      expect((await s.api('POST', '/api/me/update', { body: { password: 'x' } })).message).toBe('Guest user can not update profile');
    } finally {
      await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } });
    }
  });

  it('refuses look-alikes of an existing name: invisible characters, compatibility forms, case', async () => {
    const tries: Array<[string, string]> = [
      ['admin\u200b', 'username must not contain invisible or control characters'],
      ['ad\u00admin', 'username must not contain invisible or control characters'],
      ['\u202eadmin', 'username must not contain invisible or control characters'],
      ['\uff41\uff44\uff4d\uff49\uff4e', 'username \uff41\uff44\uff4d\uff49\uff4e is too like the existing user admin'],
      ['\uff21DMIN', 'username \uff21DMIN is too like the existing user admin'],
      ['ADMIN', 'username ADMIN is already taken'],
    ];
    for (const [username, message] of tries) {
      expect(await s.api('POST', '/api/admin/user/create', { token: admin, body: { username, password: 'p' } })).toMatchObject({ code: 400, message });
    }
    const names = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.map((u: any) => u.username);
    expect(names.filter((n: string) => n.normalize('NFKC').replace(/[^a-z]/gi, '').toLowerCase() === 'admin')).toEqual(['admin']);
    // Renames are held to the same rule; a name of other letters that merely normalises differently is fine.
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'ren\u00e9', password: 'p' } });
    const t = await s.login('ren\u00e9', 'p');
    expect((await s.api('POST', '/api/me/update', { token: t, body: { username: 'gu\uff45st' } })).message).toBe('username gu\uff45st is too like the existing user guest');
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'rene\u0301', password: 'p' } })).message).toBe('username rene\u0301 is too like the existing user ren\u00e9');
  });

  it('me/update renames the caller and keeps the name unique', async () => {
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'hal', password: 'p' } });
    const t = await s.login('hal', 'p');
    expect((await s.api('POST', '/api/me/update', { token: t, body: { username: 'admin' } })).message).toBe('username admin is already taken');
    // A typed sso_id is not a binding (only the provider's ticket is: test/api/sso.test.ts); nothing changes.
    expect((await s.api('POST', '/api/me/update', { token: t, body: { username: 'hal2', sso_id: 'sso-1' } })).code).toBe(400);
    expect((await s.api('GET', '/api/me', { token: t })).data).toMatchObject({ username: 'hal', sso_id: '' });
    expect((await s.api('POST', '/api/me/update', { token: t, body: { username: 'hal2', sso_id: '' } })).code).toBe(200);
    const t2 = await s.login('hal2', 'p');
    expect((await s.api('GET', '/api/me', { token: t2 })).data).toMatchObject({ username: 'hal2', sso_id: '' });
  });
});
