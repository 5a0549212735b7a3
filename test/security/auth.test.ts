import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpNow } from '../../src/auth/totp.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { appRoutes } from './routes.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const REJECTED = ['token is invalidated', 'token is expired', 'token not active yet'];

/**
 * Tokens that must never work (forged, unsigned, other secret, tampered, expired, revoked, of a
 * deleted or disabled user), the brute-force limits, every admin route for every non-admin
 * role, and no ambient (cookie) authority.
 */
describe('authentication and authorisation hardening', () => {
  let s: TestServer;
  let admin: string;
  let bob: string;
  let bobId: number;
  const me = (token?: string, headers: Record<string, string> = {}) => s.api('GET', '/api/me', { token, headers });
  const createUser = async (username: string, permission: number) => {
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username, password: `${username}-pw`, permission } })).code).toBe(200);
    const list = await s.api('GET', '/api/admin/user/list', { token: admin });
    return list.data.content.find((u: { username: string }) => u.username === username) as { id: number; pwd_ts?: number };
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    bobId = (await createUser('bob', 0xffff)).id;
    bob = await s.login('bob', 'bob-pw');
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('forged, unsigned, re-signed, tampered, expired and not-yet-valid tokens are refused everywhere', async () => {
    const real = decodeJwt(admin);
    const secret = new TextEncoder().encode(s.core.config.jwt_secret);
    const now = Math.floor(Date.now() / 1000);
    const [header, , signature] = admin.split('.');
    const forged: Record<string, string> = {
      garbage: 'not-a-token',
      empty_parts: '..',
      // A valid token may come as `Bearer <token>` (docs/http-api.md: Authentication); a bad one may not.
      bearer_garbage: 'Bearer not-a-token',
      alg_none: `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...real, exp: now + 3600 })}.`,
      alg_none_upper: `${b64({ alg: 'NONE', typ: 'JWT' })}.${b64({ ...real, exp: now + 3600 })}.`,
      hs512_header: `${b64({ alg: 'HS512', typ: 'JWT' })}.${admin.split('.')[1]}.${signature}`,
      other_secret: await new SignJWT({ ...real }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('some-other-secret-123')),
      tampered_payload: `${header}.${b64({ ...real, username: 'bob' })}.${signature}`,
      unknown_session: await new SignJWT({ ...real, jti: 'no-such-session' }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
      expired: await new SignJWT({ ...real, exp: now - 10 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
      not_yet: await new SignJWT({ ...real, nbf: now + 3600 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    };
    for (const [kind, token] of Object.entries(forged)) {
      for (const route of ['/api/me', '/api/admin/user/list', '/api/admin/setting/list']) {
        const r = await s.api('GET', route, { token });
        expect(r.code, `${kind} on ${route}`).toBe(401);
        expect(REJECTED, `${kind} on ${route}: ${r.message}`).toContain(r.message);
      }
      const fs = await s.api('POST', '/api/fs/list', { token, body: { path: '/' } });
      expect(fs.code, kind).toBe(401);
    }
    expect((await me(forged.expired)).message).toBe('token is expired');
    expect((await me(forged.not_yet)).message).toBe('token not active yet');
    // The real token still works: the refusals above are about the tokens, not the routes.
    expect((await me(admin)).data.username).toBe('admin');
  });

  it("a deleted or disabled user's token, a logged-out token and a pre-password-change token stop working", async () => {
    const gone = await createUser('gone', 8);
    const goneToken = await s.login('gone', 'gone-pw');
    expect((await me(goneToken)).code).toBe(200);
    expect((await s.api('POST', `/api/admin/user/delete?id=${gone.id}`, { token: admin })).code).toBe(200);
    expect((await me(goneToken)).code).toBe(401);

    const off = await createUser('off', 8);
    const offToken = await s.login('off', 'off-pw');
    const offUser = (await s.api('GET', `/api/admin/user/get?id=${off.id}`, { token: admin })).data;
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...offUser, disabled: true } })).code).toBe(200);
    expect(await me(offToken)).toEqual({ code: 401, message: 'Current user is disabled, replace please', data: null });

    const out = await s.login('bob', 'bob-pw');
    expect((await s.api('GET', '/api/auth/logout', { token: out })).code).toBe(200);
    expect(await me(out)).toEqual({ code: 401, message: 'token is invalidated', data: null });
    expect((await me(bob)).code).toBe(200);

    const before = await s.login('bob', 'bob-pw');
    const bobUser = (await s.api('GET', `/api/admin/user/get?id=${bobId}`, { token: admin })).data;
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...bobUser, password: 'bob-pw-2' } })).code).toBe(200);
    const after = await me(before);
    expect(after.code).toBe(401);
    expect(['Password has been changed, login please', 'token is invalidated']).toContain(after.message);
    bob = await s.login('bob', 'bob-pw-2');
  });

  it('password and 2FA guessing is cut off after 5 failures per address, even for the right answer', async () => {
    const login = (password: string, ip: string, otp_code?: string) =>
      s.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username: 'bob', password, otp_code }) }).then((r) => r.json());
    for (let i = 0; i < 5; i++) expect((await login(`wrong-${i}`, '10.9.9.1')).code).toBe(400);
    expect((await login('bob-pw-2', '10.9.9.1')).code).toBe(429);
    // Another address is not affected.
    expect((await login('bob-pw-2', '10.9.9.2')).code).toBe(200);

    const gen = await s.api('POST', '/api/auth/2fa/generate', { token: bob });
    expect((await s.api('POST', '/api/auth/2fa/verify', { token: bob, body: { code: totpNow(gen.data.secret), secret: gen.data.secret } })).code).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login('bob-pw-2', '10.9.9.3', String(100000 + i))).code).toBe(402);
    expect((await login('bob-pw-2', '10.9.9.3', totpNow(gen.data.secret, Date.now() + 30_000))).code).toBe(429);
  });

  it('every admin route refuses the guest, a general user and a user holding every permission bit', async () => {
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: { role: number }) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false, permission: 0xffff } })).code).toBe(200);
    await createUser('plain', 0);
    const plain = await s.login('plain', 'plain-pw');
    const routes = appRoutes(s.app).filter((r) => r.url.startsWith('/api/admin/'));
    expect(routes.length).toBeGreaterThan(40);
    let checked = 0;
    for (const { url, methods } of routes) {
      for (const method of methods) {
        for (const [who, token] of [
          ['guest', undefined],
          ['plain', plain],
          ['bob (every bit)', bob],
        ] as const) {
          const r = await s.inject({ method: method as 'GET', url, headers: { ...(token ? { authorization: token } : {}), 'content-type': 'application/json' }, payload: method === 'GET' ? undefined : '{}' });
          expect(r.statusCode, `${who} ${method} ${url}`).toBe(200);
          expect(r.json(), `${who} ${method} ${url}`).toEqual({ code: 403, message: 'You are not an admin', data: null });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(120);
    console.log(`admin routes: ${routes.length} routes, ${checked} refusals checked`);
    // The admin still gets through (e.g. the user list): the 403s are about roles, not broken routes.
    expect((await s.api('GET', '/api/admin/user/list', { token: admin })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } })).code).toBe(200);
  });

  it('no ambient authority: a token in a cookie or the query is not a login, and CORS never allows credentials', async () => {
    expect(await me(undefined, { cookie: `token=${admin}; Authorization=${admin}` })).toEqual({ code: 401, message: 'Guest user is disabled, login please', data: null });
    expect((await s.api('GET', `/api/me?token=${encodeURIComponent(admin)}`)).code).toBe(401);
    const pre = await s.inject({ method: 'OPTIONS', url: '/api/fs/remove', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } });
    expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    const simple = await s.inject({ method: 'POST', url: '/api/fs/remove', headers: { origin: 'https://evil.example', cookie: `token=${admin}`, 'content-type': 'application/json' }, payload: '{"dir":"/","names":["x"]}' });
    expect(simple.headers['access-control-allow-credentials']).toBeUndefined();
    expect(simple.json().code).toBe(401);
  });
});
