// OpenID Connect single sign-on against a real OpenID provider (npm oidc-provider) on loopback:
// the whole code flow over HTTP (redirects followed, the provider's login and consent forms
// posted), binding, auto-registration, compatibility mode, and the attack cases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrations.js';
import { BACKENDS } from '../helpers/backends.js';
import { Jar, type OidcPeer, send, startOidcProvider, throughProvider } from '../helpers/oidc.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { listen } from '../webdav/dav-helpers.js';

const PERMS = 1 | 2;

/** The message the callback page posts to its opener, and the origin it addresses. */
function posted(html: string): { message: Record<string, string>; origin: string } {
  const m = /window\.opener\.postMessage\((\{.*?\}), ("[^"]*")\)/.exec(html);
  if (!m) throw new Error(`no postMessage in: ${html.slice(0, 300)}`);
  return { message: JSON.parse(m[1]!), origin: JSON.parse(m[2]!) };
}

describe.each(BACKENDS)('OpenID Connect SSO on $name', (backend) => {
  let s: TestServer;
  let op: OidcPeer;
  let base: string;
  let admin: string;
  // the attack and protocol cases do not touch the database's dialect: declared once, on SQLite (not skipped elsewhere)
  const itOnce = backend.name === 'sqlite' ? it : () => undefined;
  const save = async (items: Record<string, string>) => {
    const r = await s.api('POST', '/api/admin/setting/save', { token: admin, body: Object.entries(items).map(([key, value]) => ({ key, value })) });
    expect(r.code, r.message).toBe(200);
  };
  /** A sign-in (or binding) through the provider as `login`; the envelope or page Atrium answers at the end. */
  const flow = async (login: string, method = 'sso_get_token', jar = new Jar()) => {
    const { authorize, back } = await throughProvider(jar, `${base}/api/auth/sso?method=${method}`, op.issuer, login);
    const res = await send(jar, back.href);
    return { authorize, back, res, jar, text: await res.text() };
  };
  const signIn = async (login: string) => {
    const r = await flow(login);
    expect(r.res.headers.get('content-type'), r.text).toMatch(/text\/html/);
    const { message, origin } = posted(r.text);
    expect(origin).toBe(new URL(base).origin);
    return message.token!;
  };
  const me = async (token: string) => (await s.api('GET', '/api/me', { token })).data;

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    base = await listen(s);
    op = await startOidcProvider(
      [`${base}/api/auth/sso_callback?method=sso_get_token`, `${base}/api/auth/sso_callback?method=get_sso_id`, `${base}/api/auth/sso_get_token`, `${base}/api/auth/get_sso_id`],
      { 'dana-sub': { name: 'Dana D.', preferred_username: 'dana' }, 'erin-sub': { name: 'Erin E.', preferred_username: 'erin' }, 'frank-sub': { name: 'Frank', preferred_username: 'frank' } },
    );
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dana', password: 'dana-pass-1', permission: PERMS } })).code).toBe(200);
  });
  afterAll(async () => {
    await op?.close();
    await s?.destroy();
  });

  it('is refused while sso_login_enabled is off, and with a bad method or platform', async () => {
    expect(await s.api('GET', '/api/auth/sso?method=sso_get_token')).toMatchObject({ code: 403, message: 'Single sign-on is not enabled' });
    expect(await s.api('GET', '/api/auth/sso_callback?method=sso_get_token&state=x&code=y')).toMatchObject({ code: 403 });
    await save({ sso_login_enabled: 'true', sso_login_platform: 'Github', sso_endpoint_name: op.issuer, sso_client_id: op.clientId, sso_client_secret: op.clientSecret });
    expect(await s.api('GET', '/api/auth/sso?method=sso_get_token')).toMatchObject({ code: 400, message: expect.stringContaining('Github is not supported') });
    await save({ sso_login_platform: 'OIDC' });
    expect(await s.api('GET', '/api/auth/sso')).toMatchObject({ code: 400, message: 'no method provided' });
    expect(await s.api('GET', '/api/auth/sso?method=other')).toMatchObject({ code: 400 });
  });

  it('sends the browser to the provider with PKCE (S256), state, nonce and a browser-bound cookie', async () => {
    const jar = new Jar();
    const res = await send(jar, `${base}/api/auth/sso?method=sso_get_token`);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin).toBe(op.issuer);
    const q = to.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(op.clientId);
    expect(q.get('redirect_uri')).toBe(`${base}/api/auth/sso_callback?method=sso_get_token`);
    expect(q.get('scope')).toBe('openid profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('state')).toMatch(/^[\w-]{43}$/);
    expect(q.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(res.headers.get('set-cookie')).toMatch(/^atrium_sso=[\w-]{43}; Path=\/api\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/);
    // sso_extra_scopes add to openid and profile
    await save({ sso_extra_scopes: 'email  groups openid' });
    const more = await send(jar, `${base}/api/auth/sso?method=get_sso_id`);
    expect(new URL(more.headers.get('location')!).searchParams.get('scope')).toBe('openid profile email groups');
    await save({ sso_extra_scopes: '' });
  });

  it('an unbound identity is refused while auto-registration is off', async () => {
    const r = await flow('dana-sub');
    expect(JSON.parse(r.text)).toMatchObject({ code: 403, message: expect.stringContaining('no account is bound') });
  });

  it('binds an identity to the signed-in account through a single-use ticket; a typed sso_id is refused', async () => {
    const dana = await s.login('dana', 'dana-pass-1');
    // Typing someone's identity is not a binding.
    expect(await s.api('POST', '/api/me/update', { token: dana, body: { username: 'dana', password: '', sso_id: 'frank-sub' } })).toMatchObject({ code: 400 });
    const r = await flow('dana-sub', 'get_sso_id');
    expect(r.back.href.startsWith(`${base}/api/auth/sso_callback?method=get_sso_id&`)).toBe(true);
    const { message, origin } = posted(r.text);
    expect(origin).toBe(new URL(base).origin);
    expect(message.sso_id).toMatch(/^ssob\./);
    expect(r.text).not.toContain('dana-sub');
    expect(r.res.headers.get('cache-control')).toBe('no-store');
    // What the OpenList front end does with it: POST /api/me/update with the value as sso_id.
    expect((await s.api('POST', '/api/me/update', { token: dana, body: { username: 'dana', password: '', sso_id: message.sso_id } })).code).toBe(200);
    expect((await me(dana)).sso_id).toBe('dana-sub');
    // Saving the profile again with the stored value keeps it; the ticket is spent.
    expect((await s.api('POST', '/api/me/update', { token: dana, body: { username: 'dana', password: '', sso_id: 'dana-sub' } })).code).toBe(200);
    const other = await s.login();
    expect(await s.api('POST', '/api/me/update', { token: other, body: { username: 'admin', sso_id: message.sso_id } })).toMatchObject({ code: 400, message: expect.stringContaining('already used') });
    expect((await me(other)).sso_id).toBe('');
  });

  it('signs the bound account in: the token is a session of that user', async () => {
    const token = await signIn('dana-sub');
    expect(await me(token)).toMatchObject({ username: 'dana', sso_id: 'dana-sub', permission: PERMS });
  });

  itOnce('refuses a replayed callback, a wrong state, a missing cookie and a replayed code', async () => {
    const r = await flow('dana-sub');
    expect(posted(r.text).message.token).toBeTruthy();
    // the same callback again (state and code replayed)
    expect(JSON.parse(await (await send(r.jar, r.back.href)).text())).toMatchObject({ code: 400, message: 'incorrect or expired state parameter' });
    // a person's browser (a navigation) reads the reason as a page that tells its opener, for our origin only
    const page = await send(r.jar, r.back.href, { headers: { 'sec-fetch-dest': 'document' } });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('Single sign-on failed: incorrect or expired state parameter');
    expect(posted(html)).toEqual({ message: { sso_error: 'incorrect or expired state parameter' }, origin: new URL(base).origin });
    // a fresh flow whose state is altered
    const jar = new Jar();
    const { back } = await throughProvider(jar, `${base}/api/auth/sso?method=sso_get_token`, op.issuer, 'dana-sub');
    const wrong = new URL(back);
    wrong.searchParams.set('state', `${back.searchParams.get('state')!.slice(0, -2)}AA`);
    expect(JSON.parse(await (await send(jar, wrong.href)).text())).toMatchObject({ code: 400, message: 'incorrect or expired state parameter' });
    // the right callback from another browser (no cookie of the flow)
    const foreign = await send(new Jar(), back.href);
    expect(JSON.parse(await foreign.text())).toMatchObject({ code: 400, message: 'incorrect or expired state parameter' });
    // a state of one method used for the other
    const jar2 = new Jar();
    const bind = await throughProvider(jar2, `${base}/api/auth/sso?method=get_sso_id`, op.issuer, 'dana-sub');
    const swapped = new URL(bind.back);
    swapped.searchParams.set('method', 'sso_get_token');
    expect(JSON.parse(await (await send(jar2, swapped.href)).text())).toMatchObject({ code: 400, message: 'incorrect or expired state parameter' });
    // an old code with a fresh state: the code was spent and belongs to another PKCE verifier
    const jar3 = new Jar();
    const start = await send(jar3, `${base}/api/auth/sso?method=sso_get_token`);
    const fresh = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const replay = new URL(`${base}/api/auth/sso_callback?method=sso_get_token`);
    replay.searchParams.set('code', r.back.searchParams.get('code')!);
    replay.searchParams.set('state', fresh);
    expect(JSON.parse(await (await send(jar3, replay.href)).text())).toMatchObject({ code: 400, message: expect.stringContaining('invalid_grant') });
  });

  itOnce('refuses ID tokens with a wrong nonce, another key, a wrong audience or issuer, an expiry in the past, or no signature', async () => {
    const cases: Array<[string, NonNullable<OidcPeer['tamper']>, RegExp]> = [
      ['wrong nonce', (c, sign) => sign({ ...c, nonce: 'another-nonce' }), /nonce does not match/],
      ['no nonce', (c, sign) => sign({ ...c, nonce: undefined }), /nonce does not match/],
      ['another key', (c, sign) => sign(c, 'other'), /signature verification failed/],
      ['wrong audience', (c, sign) => sign({ ...c, aud: 'another-client' }), /"aud"/],
      ['two audiences, not authorised party', (c, sign) => sign({ ...c, aud: [String(c.aud), 'another-client'], azp: 'another-client' }), /azp/],
      ['wrong issuer', (c, sign) => sign({ ...c, iss: 'http://127.0.0.2:1' }), /"iss"/],
      ['expired', (c, sign) => sign({ ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), /"exp"/],
      ['unsigned (alg none)', async (c) => `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'test-key' })).toString('base64url')}.${Buffer.from(JSON.stringify(c)).toString('base64url')}.`, /not valid/],
    ];
    try {
      for (const [name, tamper, message] of cases) {
        op.tamper = tamper;
        const r = await flow('dana-sub');
        const body = JSON.parse(r.text);
        expect(body.code, name).toBe(400);
        expect(body.message, name).toMatch(message);
      }
      // the untouched token, re-signed by the provider's key, still passes (the cases can fail)
      op.tamper = (c, sign) => sign(c);
      expect(await me(await signIn('dana-sub'))).toMatchObject({ username: 'dana' });
    } finally {
      op.tamper = undefined;
    }
  });

  it('refuses a disabled user', async () => {
    const dana = (await s.core.repos.users.byUsername('dana'))!;
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: dana.id, username: 'dana', disabled: true, permission: PERMS } })).code).toBe(200);
    try {
      const r = await flow('dana-sub');
      expect(JSON.parse(r.text)).toMatchObject({ code: 401, message: 'Current user is disabled, replace please' });
    } finally {
      expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: dana.id, username: 'dana', disabled: false, permission: PERMS } })).code).toBe(200);
    }
  });

  it('auto-registers with the default base path and permission, never into an existing account', async () => {
    await save({ sso_auto_register: 'true', sso_default_dir: '/team', sso_default_permission: String(PERMS) });
    expect(await me(await signIn('erin-sub'))).toMatchObject({ username: 'erin', sso_id: 'erin-sub', base_path: '/team', permission: PERMS, role: 0 });
    // a second sign-in finds the same account
    expect((await me(await signIn('erin-sub'))).username).toBe('erin');
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'frank', password: 'frank-pass-1' } })).code).toBe(200);
    expect(await me(await signIn('frank-sub'))).toMatchObject({ username: 'frank_frank-sub', sso_id: 'frank-sub' });
    expect((await s.core.repos.users.byUsername('frank'))!.ssoId).toBe('');
    await save({ sso_auto_register: 'false' });
  });

  itOnce('compatibility mode: the provider returns to /api/auth/<method> and the answer is a redirect to this site', async () => {
    await save({ sso_compatibility_mode: 'true' });
    try {
      const r = await flow('dana-sub');
      expect(r.authorize.searchParams.get('redirect_uri')).toBe(`${base}/api/auth/sso_get_token`);
      expect(r.res.status).toBe(302);
      const to = new URL(r.res.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).toBe(`${base}/@login`);
      expect(await me(to.searchParams.get('token')!)).toMatchObject({ username: 'dana' });
      const b = await flow('dana-sub', 'get_sso_id');
      const bound = new URL(b.res.headers.get('location')!);
      expect(`${bound.origin}${bound.pathname}`).toBe(`${base}/@manage`);
      expect(bound.searchParams.get('sso_id')).toMatch(/^ssob\./);
    } finally {
      await save({ sso_compatibility_mode: 'false' });
    }
  });

  itOnce('never sends the browser to a foreign origin: site_url wins over the Host header, and the provider refuses unknown redirect URIs', async () => {
    const foreign = base.replace('127.0.0.1', '127.0.0.2');
    // Without site_url the Host header names the redirect URI; the provider does not know it.
    const jar = new Jar();
    const start = await send(jar, `${base}/api/auth/sso?method=sso_get_token`, { headers: { 'x-forwarded-host': new URL(foreign).host } });
    const to = new URL(start.headers.get('location')!);
    expect(to.searchParams.get('redirect_uri')).toBe(`${foreign}/api/auth/sso_callback?method=sso_get_token`);
    const refused = await send(jar, to.href);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();
    expect(await refused.text()).toMatch(/redirect_uri/);
    // With site_url, a spoofed Host changes nothing: redirect URI and postMessage origin stay ours.
    const restarted = s;
    restarted.core.config.site_url = base;
    try {
      const r = await flow('dana-sub', 'sso_get_token', new Jar());
      expect(r.authorize.searchParams.get('redirect_uri')).toBe(`${base}/api/auth/sso_callback?method=sso_get_token`);
      const jar2 = new Jar();
      const spoofed = await send(jar2, `${base}/api/auth/sso?method=sso_get_token`, { headers: { 'x-forwarded-host': new URL(foreign).host } });
      expect(new URL(spoofed.headers.get('location')!).searchParams.get('redirect_uri')).toBe(`${base}/api/auth/sso_callback?method=sso_get_token`);
      expect(posted(r.text).origin).toBe(new URL(base).origin);
    } finally {
      restarted.core.config.site_url = '';
    }
  });

  itOnce('Casdoor is served as an OpenID Connect provider at its endpoint', async () => {
    await save({ sso_login_platform: 'Casdoor' });
    try {
      expect(await me(await signIn('dana-sub'))).toMatchObject({ username: 'dana' });
    } finally {
      await save({ sso_login_platform: 'OIDC' });
    }
  });

  it('a flow started on one process finishes on another sharing the database, once', async () => {
    const b = await startServer(backend, { dataDir: s.dataDir });
    try {
      const baseB = await listen(b);
      const jar = new Jar();
      const { back } = await throughProvider(jar, `${base}/api/auth/sso?method=sso_get_token`, op.issuer, 'dana-sub');
      const cookie = `atrium_sso=${jar.get(new URL(base).host, 'atrium_sso')}`;
      const onB = new URL(`${back.pathname}${back.search}`, baseB).href;
      const res = await send(new Jar(), onB, { headers: { cookie } });
      const { message, origin } = posted(await res.text());
      expect(origin).toBe(new URL(base).origin);
      expect(await me(message.token!)).toMatchObject({ username: 'dana' });
      // taken on B: A refuses it
      expect(JSON.parse(await (await send(jar, back.href)).text())).toMatchObject({ code: 400, message: 'incorrect or expired state parameter' });
    } finally {
      await b.stop();
    }
  });

  itOnce('bounds pending attempts per address (429), other addresses unaffected', async () => {
    const start = (ip: string) => s.inject({ method: 'GET', url: '/api/auth/sso?method=sso_get_token', remoteAddress: ip });
    let accepted = 0;
    for (let i = 0; i < 40; i++) {
      const r = await start('127.0.0.7');
      if (r.statusCode !== 302) {
        expect(r.json()).toMatchObject({ code: 429 });
        break;
      }
      accepted++;
    }
    expect(accepted).toBe(30);
    expect((await start('127.0.0.8')).statusCode).toBe(302);
    await s.core.db.db.deleteFrom('sso_flows').where('ip', 'in', ['127.0.0.7', '127.0.0.8']).execute();
    expect((await start('127.0.0.7')).statusCode).toBe(302);
  });

  itOnce("migration 10 moves OpenList's `name` identity claim to `sub` once; a later choice of `name` stays", async () => {
    const db = s.core.db.db;
    const stored = async () => (await db.selectFrom('setting_items').select('value').where('key', '=', 'sso_oidc_username_key').executeTakeFirstOrThrow()).value;
    expect(await stored()).toBe('sub');
    await db.updateTable('setting_items').set({ value: 'name' }).where('key', '=', 'sso_oidc_username_key').execute();
    await db.deleteFrom('schema_migrations').where('version', '=', 10).execute();
    await db.schema.dropTable('sso_flows').execute();
    expect(await migrate(s.core.db)).toEqual([10]);
    expect(await stored()).toBe('sub');
    await save({ sso_oidc_username_key: 'name' });
    expect(await migrate(s.core.db)).toEqual([]);
    await s.core.settings.reconcile();
    expect(await stored()).toBe('name');
    // with `name`, the identity is the display name
    await save({ sso_auto_register: 'true' });
    expect(await me(await signIn('erin-sub'))).toMatchObject({ username: 'erin_Erin E.', sso_id: 'Erin E.' });
    await save({ sso_oidc_username_key: 'sub', sso_auto_register: 'false' });
  });

  it('unbinding: an empty sso_id ends SSO sign-in for the account', async () => {
    const dana = await s.login('dana', 'dana-pass-1');
    expect((await s.api('POST', '/api/me/update', { token: dana, body: { username: 'dana', sso_id: '' } })).code).toBe(200);
    expect((await me(dana)).sso_id).toBe('');
    const r = await flow('dana-sub');
    expect(JSON.parse(r.text)).toMatchObject({ code: 403, message: expect.stringContaining('no account is bound') });
  });
});
