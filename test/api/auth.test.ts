import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_CACHE_TTL_MS } from '../../src/auth/auth-cache.js';
import { totpNow } from '../../src/auth/totp.js';
import { BACKENDS } from '../helpers/backends.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

const staticHash = (p: string) => createHash('sha256').update(`${p}-https://github.com/alist-org/alist`).digest('hex');

describe.each(BACKENDS)('auth on $name', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(backend);
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('logs in with the plain password and with the static hash', async () => {
    const a = await s.api('POST', '/api/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    expect(a.code).toBe(200);
    expect(a.message).toBe('success');
    expect(a.data.token.split('.')).toHaveLength(3);
    const b = await s.api('POST', '/api/auth/login/hash', { body: { username: 'admin', password: staticHash(ADMIN_PASSWORD) } });
    expect(b.code).toBe(200);
    const me = await s.api('GET', '/api/me', { token: b.data.token });
    expect(me.data).toMatchObject({ username: 'admin', role: 2, password: '', base_path: '/', otp: false });
  });

  it('answers bad logins with the original codes and messages', async () => {
    const ip = { 'x-forwarded-for': '1.1.1.1' };
    expect(await s.api('POST', '/api/auth/login', { body: { username: 'admin', password: 'nope' }, headers: ip })).toEqual({
      code: 400,
      message: 'password is incorrect',
      data: null,
    });
    const unknown = await s.api('POST', '/api/auth/login', { body: { username: 'ghost', password: 'x' } });
    expect(unknown).toMatchObject({ code: 400, message: 'failed find user: record not found' });
    const empty = await s.api('POST', '/api/auth/login/hash', { body: { username: 'admin', password: '' } });
    expect(empty).toMatchObject({ code: 400, message: 'password is empty' });
    const missing = await s.api('POST', '/api/auth/login', { body: { password: 'x' } });
    expect(missing).toMatchObject({ code: 400, message: 'username is required' });
    const wrongType = await s.api('POST', '/api/auth/login', { body: { username: 42, password: 'x' } });
    expect(wrongType.code).toBe(400);
    expect(wrongType.message).toContain('username');
    const badJson = await s.api('POST', '/api/auth/login', { body: '{"username":', headers: { 'content-type': 'application/json' } });
    expect(badJson.code).toBe(400);
    expect(badJson.message).toMatch(/invalid JSON/);
    // Without a JSON content type the body is not read as JSON (as gin): the username is missing.
    const res = await s.inject({ method: 'POST', url: '/api/auth/login', payload: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }), headers: { 'content-type': 'text/plain' } });
    expect(res.json()).toMatchObject({ code: 400, message: 'username is required' });
    // A form body is read as a form, like gin's binding.
    const form = await s.inject({ method: 'POST', url: '/api/auth/login', payload: `username=admin&password=${ADMIN_PASSWORD}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.json().code).toBe(200);
  });

  it('refuses oversized bodies with a 400 envelope', async () => {
    const big = JSON.stringify({ username: 'admin', password: 'x'.repeat(2 * 1024 * 1024) });
    const res = await s.inject({ method: 'POST', url: '/api/auth/login', payload: big, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ code: 400, message: 'request body is too large', data: null });
  });

  it('locks an IP out after 5 failures for 5 minutes, others unaffected', async () => {
    const server = await startServer(backend, { prefix: `l${Math.random().toString(36).slice(2, 8)}_` });
    try {
      // The test client's address is fixed (inject uses 127.0.0.1), so this instance has its own limiter.
      for (let i = 0; i < 5; i++) {
        const r = await server.api('POST', '/api/auth/login', { body: { username: 'admin', password: 'wrong' } });
        expect(r.code).toBe(400);
      }
      const locked = await server.api('POST', '/api/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
      expect(locked.code).toBe(429);
      expect(locked.message).toBe(
        'Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.',
      );
      server.core.limiter.succeed('127.0.0.1');
      expect((await server.api('POST', '/api/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } })).code).toBe(200);
    } finally {
      await server.destroy();
    }
  });

  it('accepts the bare token and a Bearer token; guest without a header is refused while disabled', async () => {
    const token = await s.login();
    expect((await s.api('GET', '/api/me', { token })).code).toBe(200);
    expect((await s.api('GET', '/api/me', { token: `Bearer ${token}` })).code).toBe(200);
    expect(await s.api('GET', '/api/me')).toEqual({ code: 401, message: 'Guest user is disabled, login please', data: null });
  });

  it('accepts the permanent admin token as admin', async () => {
    const admin = s.core.settings.get('token');
    expect(admin).toMatch(/^alist-/);
    const me = await s.api('GET', '/api/me', { token: admin });
    expect(me.data.username).toBe('admin');
    expect((await s.api('GET', '/api/admin/user/list', { token: admin })).code).toBe(200);
  });

  it('rejects forged, other-secret, alg:none, expired and garbage tokens', async () => {
    const good = await s.login();
    const [h, p] = good.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ username: 'admin', pwd_ts: 0, jti: 'x' })).toString('base64url')}.${good.split('.')[2]}`;
    const otherSecret = await new SignJWT({ username: 'admin', pwd_ts: 0 })
      .setProtectedHeader({ alg: 'HS256' })
      .setJti('abc')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('some-other-secret'));
    for (const t of [none, tampered, otherSecret, 'garbage', 'a.b.c']) {
      expect(await s.api('GET', '/api/me', { token: t })).toEqual({ code: 401, message: 'token is invalidated', data: null });
    }
    const expired = await new SignJWT({ username: 'admin', pwd_ts: 0 })
      .setProtectedHeader({ alg: 'HS256' })
      .setJti('abc')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(s.core.config.jwt_secret));
    expect(await s.api('GET', '/api/me', { token: expired })).toEqual({ code: 401, message: 'token is expired', data: null });
  });

  it('logout revokes the session', async () => {
    const token = await s.login();
    expect((await s.api('GET', '/api/auth/logout', { token })).code).toBe(200);
    expect(await s.api('GET', '/api/me', { token })).toMatchObject({ code: 401, message: 'token is invalidated' });
  });

  it('tokens survive a restart, and logout on one instance holds on another sharing the database', async () => {
    const token = await s.login();
    const second = await startServer(backend, { dataDir: s.dataDir });
    try {
      expect((await second.api('GET', '/api/me', { token })).data.username).toBe('admin');
      await second.api('GET', '/api/auth/logout', { token });
      expect((await s.api('GET', '/api/me', { token })).message).toBe('token is invalidated');
    } finally {
      await second.stop();
    }
  });

  it('a password change ends every token of that user', async () => {
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'carol', password: 'pw-1', permission: 0 } })).code).toBe(200);
    const t1 = await s.login('carol', 'pw-1');
    const t2 = await s.login('carol', 'pw-1');
    expect((await s.api('POST', '/api/me/update', { token: t1, body: { password: 'pw-2' } })).code).toBe(200);
    for (const t of [t1, t2]) expect((await s.api('GET', '/api/me', { token: t })).code).toBe(401);
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'carol', password: 'pw-1' } })).message).toBe('password is incorrect');
    const t3 = await s.login('carol', 'pw-2');
    expect((await s.api('GET', '/api/me', { token: t3 })).data.username).toBe('carol');
  });

  it('a token whose pwd_ts no longer matches is refused with the original message', async () => {
    const admin = await s.login();
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dave', password: 'pw' } });
    const t = await s.login('dave', 'pw');
    const dave = (await s.core.repos.users.byUsername('dave'))!;
    await s.core.repos.users.update({ ...dave, pwdTs: dave.pwdTs + 1 });
    expect(await s.api('GET', '/api/me', { token: t })).toEqual({ code: 401, message: 'Password has been changed, login please', data: null });
  });

  it('a disabled user is refused, at login and with an existing token', async () => {
    const admin = await s.login();
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'erin', password: 'pw' } });
    const t = await s.login('erin', 'pw');
    const erin = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.username === 'erin');
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...erin, disabled: true } });
    expect(await s.api('GET', '/api/me', { token: t })).toEqual({ code: 401, message: 'Current user is disabled, replace please', data: null });
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'erin', password: 'pw' } })).code).toBe(401);
  });

  it('a deleted user\'s token stops working', async () => {
    const admin = await s.login();
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'frank', password: 'pw' } });
    const t = await s.login('frank', 'pw');
    const frank = (await s.core.repos.users.byUsername('frank'))!;
    expect((await s.api('POST', `/api/admin/user/delete?id=${frank.id}`, { token: admin })).code).toBe(200);
    expect((await s.api('GET', '/api/me', { token: t })).code).toBe(401);
  });

  it('throttles wrong 2FA codes like wrong passwords', async () => {
    const server = await startServer(backend, { prefix: `o${Math.random().toString(36).slice(2, 8)}_` });
    try {
      const t = await server.login();
      const { secret } = (await server.api('POST', '/api/auth/2fa/generate', { token: t })).data;
      for (let i = 0; i < 5; i++) {
        expect((await server.api('POST', '/api/auth/2fa/verify', { token: t, body: { code: '000000', secret } })).message).toBe('Invalid 2FA code');
      }
      const locked = await server.api('POST', '/api/auth/2fa/verify', { token: t, body: { code: totpNow(secret), secret } });
      expect(locked.code).toBe(429);
      expect((await server.api('GET', '/api/me', { token: t })).data.otp).toBe(false);
    } finally {
      await server.destroy();
    }
  });

  it('asks for the TOTP code with 402 once 2FA is on, and the admin can cancel it', async () => {
    const admin = await s.login();
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'gina', password: 'pw' } });
    const t = await s.login('gina', 'pw');
    const gen = await s.api('POST', '/api/auth/2fa/generate', { token: t });
    expect(gen.data.qr).toMatch(/^data:image\/png;base64,/);
    expect(gen.data.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect((await s.api('POST', '/api/auth/2fa/verify', { token: t, body: { code: '000000', secret: gen.data.secret } })).message).toBe('Invalid 2FA code');
    expect((await s.api('POST', '/api/auth/2fa/verify', { token: t, body: { code: totpNow(gen.data.secret), secret: gen.data.secret } })).code).toBe(200);
    expect(await s.api('POST', '/api/auth/login', { body: { username: 'gina', password: 'pw' } })).toEqual({ code: 402, message: 'Invalid 2FA code', data: null });
    // The code that turned 2FA on cannot log in again (no replay within its window)...
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'gina', password: 'pw', otp_code: totpNow(gen.data.secret) } })).code).toBe(402);
    // ...the next step's code can, once.
    const next = totpNow(gen.data.secret, Date.now() + 30_000);
    const ok = await s.api('POST', '/api/auth/login', { body: { username: 'gina', password: 'pw', otp_code: next } });
    expect(ok.code).toBe(200);
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'gina', password: 'pw', otp_code: next } })).code).toBe(402);
    expect((await s.api('GET', '/api/me', { token: ok.data.token })).data.otp).toBe(true);
    const gina = (await s.core.repos.users.byUsername('gina'))!;
    await s.api('POST', `/api/admin/user/cancel_2fa?id=${gina.id}`, { token: admin });
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'gina', password: 'pw' } })).code).toBe(200);
  });
  it('steady-state requests touch no database; logout, password and user changes still hold at once', async () => {
    const admin = await s.login();
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'hank', password: 'h1', permission: 0 } });
    const hank = (await s.api('POST', '/api/auth/login', { body: { username: 'hank', password: 'h1' } })).data.token;
    expect((await s.api('GET', '/api/me', { token: hank })).data.username).toBe('hank');
    // The audit rows of the sign-in and of the changes are written before each window opens: it
    // counts what the requests cost. A cached copy is read again once it is AUTH_CACHE_TTL_MS old.
    await s.core.audit.flush();
    const started = Date.now();
    expect((await s.api('GET', '/api/me', { token: hank })).code).toBe(200); // cached at or after `started`
    const before = s.core.db.queries();
    for (let i = 0; i < 20; i++) expect((await s.api('GET', '/api/me', { token: hank })).code).toBe(200);
    expect(s.core.db.queries() - before).toBeLessThanOrEqual(3 * Math.floor((Date.now() - started) / AUTH_CACHE_TTL_MS));
    // after a change drops the cache, concurrent requests share one read of the session and the user
    // (the user's row and their group memberships: a user carries their groups)
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'ivy', password: 'i1', permission: 0 } });
    await s.core.audit.flush();
    const dropped = s.core.db.queries();
    const answers = await Promise.all(Array.from({ length: 20 }, () => s.api('GET', '/api/me', { token: hank })));
    expect(answers.every((a) => a.data.username === 'hank')).toBe(true);
    expect(s.core.db.queries() - dropped).toBe(3);

    const users = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content;
    const row = users.find((u: { username: string }) => u.username === 'hank');
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...row, disabled: true } });
    expect(await s.api('GET', '/api/me', { token: hank })).toMatchObject({ code: 401, message: 'Current user is disabled, replace please' });
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...row, disabled: false } });
    expect((await s.api('GET', '/api/me', { token: hank })).code).toBe(200);
    await s.api('GET', '/api/auth/logout', { token: hank });
    expect(await s.api('GET', '/api/me', { token: hank })).toMatchObject({ code: 401, message: 'token is invalidated' });
  });
});
