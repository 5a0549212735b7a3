import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpNow } from '../../src/auth/totp.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Inputs that answered 500 or let a user do what they should not (issue 18, "smaller holes"). */
describe.each(ONE_BACKEND)('input holes on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let box: string;

  beforeAll(async () => {
    box = mkdtempSync(path.join(os.tmpdir(), 'atrium-holes-'));
    s = await startServer(backend);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', box) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'bob-pass', base_path: '/', permission: 8 } })).code).toBe(200);
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(box, { recursive: true, force: true });
  });

  it('a JSON body nested 100 000 deep is a 400, not a 500', async () => {
    const bob = await s.login('bob', 'bob-pass');
    const nested = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const url of ['/api/fs/list', '/api/fs/mkdir', '/api/me/update', '/api/fs/other', '/api/admin/setting/save']) {
      const res = await s.inject({ method: 'POST', url, headers: { authorization: bob, 'content-type': 'application/json' }, payload: `{"path":${nested},"username":${nested}}` });
      expect(res.statusCode, url).toBe(200);
      const body = res.json();
      expect(body.code, url).toBe(400);
      expect(body.message.length, url).toBeLessThan(1000);
    }
  });

  it('PUT /api/fs/form with a multipart type but no boundary is a 400, and stores nothing', async () => {
    const bob = await s.login('bob', 'bob-pass');
    for (const type of ['multipart/form-data', 'multipart/form-data; boundary=']) {
      const res = await s.inject({ method: 'PUT', url: '/api/fs/form', headers: { authorization: bob, 'file-path': encodeURIComponent('/s/f.txt'), 'content-type': type }, payload: 'x' });
      expect(res.json(), type).toMatchObject({ code: 400 });
    }
    expect(readdirSync(box)).toEqual([]);
  });

  it('user names are unique regardless of case: no case variant of admin by update or create', async () => {
    const bob = await s.login('bob', 'bob-pass');
    for (const name of ['ADMIN', 'Admin', 'aDmIn']) {
      expect((await s.api('POST', '/api/me/update', { token: bob, body: { username: name } })).code, name).toBe(400);
      expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: 'x' } })).code, name).toBe(400);
    }
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'BOB', password: 'x' } })).code).toBe(400);
    const list = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.map((u: { username: string }) => u.username);
    expect(list.filter((n: string) => n.toLowerCase() === 'admin')).toEqual(['admin']);
    expect(list.filter((n: string) => n.toLowerCase() === 'bob')).toEqual(['bob']);
    // Changing only the case of one's own name is allowed (it is still one user).
    expect((await s.api('POST', '/api/me/update', { token: bob, body: { username: 'Bob' } })).code).toBe(200);
    expect(await s.login('Bob', 'bob-pass')).toBeTruthy();
  });

  it('replacing an active TOTP secret needs a code of the current one', async () => {
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'carol', password: 'carol-pass', base_path: '/', permission: 0 } })).code).toBe(200);
    const carol = await s.login('carol', 'carol-pass');
    const first = (await s.api('POST', '/api/auth/2fa/generate', { token: carol })).data.secret as string;
    expect((await s.api('POST', '/api/auth/2fa/verify', { token: carol, body: { code: totpNow(first), secret: first } })).code).toBe(200);
    // A stolen session alone can not move the second factor.
    const second = (await s.api('POST', '/api/auth/2fa/generate', { token: carol })).data.secret as string;
    const refused = await s.api('POST', '/api/auth/2fa/verify', { token: carol, body: { code: totpNow(second), secret: second } });
    expect(refused.code).toBe(402);
    expect(refused.message).toMatch(/current_code/);
    const wrong = await s.api('POST', '/api/auth/2fa/verify', { token: carol, body: { code: totpNow(second), secret: second, current_code: totpNow(second) } });
    expect(wrong.code).toBe(402);
    // With a fresh code of the current secret (the next 30 s step: a used code is not taken twice) the replacement goes through.
    const replaced = await s.api('POST', '/api/auth/2fa/verify', { token: carol, body: { code: totpNow(second), secret: second, current_code: totpNow(first, Date.now() + 30_000) } });
    expect(replaced.code).toBe(200);
    const loginNew = await s.api('POST', '/api/auth/login', { body: { username: 'carol', password: 'carol-pass', otp_code: totpNow(second, Date.now() + 30_000) } });
    expect(loginNew.code).toBe(200);
  });
});
