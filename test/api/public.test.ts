import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/server/app.js';
import { builtinSettings, FLAG } from '../../src/settings/defaults.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe.each(ONE_BACKEND)('public routes and the envelope on $name', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(backend, { config: { cors: { allow_origins: ['https://ui.example'], allow_methods: ['*'], allow_headers: ['*'] } } });
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('/ping, /robots.txt and /favicon.ico', async () => {
    const ping = await s.inject({ method: 'GET', url: '/ping' });
    expect(ping.statusCode).toBe(200);
    expect(ping.body).toBe('pong');
    const robots = await s.inject({ method: 'GET', url: '/robots.txt' });
    expect(robots.body).toBe('User-agent: *\nAllow: /');
    const fav = await s.inject({ method: 'GET', url: '/favicon.ico' });
    expect(fav.statusCode).toBe(302);
    expect(fav.headers.location).toBe(s.core.settings.get('favicon'));
    const logo = await s.inject({ method: 'GET', url: fav.headers.location as string });
    expect(logo.headers['content-type']).toContain('image/svg+xml');
  });

  it('/api/public/settings holds every public and read-only key of the seed, as strings, and nothing private', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const r = await s.api(method, '/api/public/settings');
      expect(r.code).toBe(200);
      const seed = builtinSettings();
      const expected = seed.filter((i) => i.flag === FLAG.PUBLIC || i.flag === FLAG.READONLY).map((i) => i.key);
      expect(Object.keys(r.data).sort()).toEqual(expected.sort());
      expect(Object.values(r.data).every((v) => typeof v === 'string')).toBe(true);
      expect(r.data.token).toBeUndefined();
      expect(r.data.version).toMatch(/^v3\./);
      expect(r.data.sign_all).toBeUndefined();
    }
  });

  it('unknown API routes answer a 404 envelope over HTTP 200', async () => {
    const res = await s.inject({ method: 'GET', url: '/api/nope' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ code: 404, data: null });
  });

  it('error messages are masked by privacy_regs', async () => {
    const res = await s.api('POST', '/api/auth/login', { body: { username: 'admin', password: 'x', otp_code: '' }, headers: {} });
    expect(res.message).toBe('password is incorrect');
    // an unknown-route message carrying an IPv4 address is masked
    const masked = await s.inject({ method: 'GET', url: '/api/10.1.2.3' });
    expect(masked.json().message).toBe('route GET /api/******** not found');
  });

  it('every answer carries X-Request-Id; a JSON body nested deeper than the bound is a 400 envelope, not parsed further', async () => {
    const a = await s.inject({ method: 'GET', url: '/api/public/settings' });
    const b = await s.inject({ method: 'GET', url: '/api/public/settings' });
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f]{16}$/);
    expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id']);
    const token = await s.login();
    const nested = (depth: number) => '{"path":"/","x":' + '['.repeat(depth) + ']'.repeat(depth) + '}';
    const deep = await s.inject({ method: 'POST', url: '/api/fs/list', headers: { authorization: token, 'content-type': 'application/json' }, payload: nested(MAX_JSON_DEPTH + 1) });
    expect(deep.statusCode).toBe(200);
    expect(deep.json()).toMatchObject({ code: 400, message: `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels` });
    expect(deep.headers['x-request-id']).toMatch(/^[0-9a-f]{16}$/);
    const fine = await s.inject({ method: 'POST', url: '/api/fs/list', headers: { authorization: token, 'content-type': 'application/json' }, payload: nested(MAX_JSON_DEPTH - 2) });
    expect(fine.json().code).toBe(200);
  });

  it('CORS follows the config: allowed origin echoed, preflight answered, others get nothing', async () => {
    const pre = await s.inject({
      method: 'OPTIONS',
      url: '/api/fs/list',
      headers: { origin: 'https://ui.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://ui.example');
    expect(pre.headers['access-control-allow-headers']).toBe('authorization,content-type');
    expect(pre.headers['access-control-allow-methods']).toContain('POST');
    const other = await s.inject({ method: 'GET', url: '/api/public/settings', headers: { origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const notApi = await s.inject({ method: 'GET', url: '/ping', headers: { origin: 'https://ui.example' } });
    expect(notApi.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a request id is returned and unexpected failures never leak a stack', async () => {
    const res = await s.inject({ method: 'GET', url: '/api/public/settings' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{16}$/);
    // Force an internal failure: break the database under a route that needs it.
    const saved = s.core.repos.users.byRole.bind(s.core.repos.users);
    s.core.repos.users.byRole = async () => {
      throw new Error('boom: SELECT secret FROM somewhere');
    };
    try {
      const r = await s.inject({ method: 'GET', url: '/api/me' });
      expect(r.statusCode).toBe(200);
      const body = r.json();
      expect(body.code).toBe(500);
      expect(body.message).toMatch(/^internal error \(request [0-9a-f]{16}\)$/);
      expect(r.body).not.toContain('boom');
      expect(r.body).not.toContain('at ');
    } finally {
      s.core.repos.users.byRole = saved;
    }
  });
});
