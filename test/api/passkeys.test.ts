import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_PER_ASKER, MSG_CHALLENGE, MSG_COUNTER, MSG_NOT_ENABLED, MSG_UNAVAILABLE, relyingParty } from '../../src/auth/passkeys.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

const SITE = 'http://localhost:5244';

interface Envelope {
  code: number;
  message: string;
  data: any;
}

describe.each(BACKENDS)('passkeys (WebAuthn) on $name', (backend) => {
  let s: TestServer;
  let admin: string;

  /** A request from a client address of the test's choosing (the lockout counts per address). */
  async function call(method: 'GET' | 'POST', url: string, o: { token?: string; body?: unknown; session?: string; ip?: string } = {}): Promise<Envelope & { headers: Record<string, unknown> }> {
    const headers: Record<string, string> = {};
    if (o.token) headers.authorization = o.token;
    if (o.session !== undefined) headers.session = o.session;
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const res = await s.inject({ method, url, headers, payload: o.body === undefined ? undefined : JSON.stringify(o.body), remoteAddress: o.ip ?? '127.0.0.1' });
    expect(res.statusCode).toBe(200);
    return { ...res.json(), headers: res.headers };
  }

  async function newUser(username: string): Promise<{ token: string; id: number }> {
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username, password: 'pw', permission: 0 } })).code).toBe(200);
    return { token: await s.login(username, 'pw'), id: (await s.core.repos.users.byUsername(username))!.id };
  }

  async function register(token: string, auth: SoftAuthenticator): Promise<void> {
    const begin = await call('GET', '/api/authn/webauthn_begin_registration', { token });
    expect(begin.code).toBe(200);
    const finish = await call('POST', '/api/authn/webauthn_finish_registration', { token, session: begin.data.session, body: auth.create(begin.data.options.publicKey) });
    expect(finish).toMatchObject({ code: 200, data: 'Registered Successfully' });
  }

  async function beginLogin(query = '', ip?: string) {
    const r = await call('GET', `/api/authn/webauthn_begin_login${query}`, { ip });
    expect(r.code, r.message).toBe(200);
    return r.data as { options: { publicKey: any }; session: string; require_username: boolean };
  }

  const finishLogin = (session: string, body: unknown, o: { query?: string; ip?: string } = {}) =>
    call('POST', `/api/authn/webauthn_finish_login${o.query ?? ''}`, { session, body, ip: o.ip });

  beforeAll(async () => {
    s = await startServer(backend, { config: { site_url: SITE } });
    admin = await s.login();
  });
  afterAll(async () => {
    await s?.destroy();
  });

  it('answers 403 "WebAuthn is not enabled" to the ceremonies while the setting is off; the list still answers', async () => {
    const { token } = await newUser('off');
    for (const [method, url, auth] of [
      ['GET', '/api/authn/webauthn_begin_registration', token],
      ['POST', '/api/authn/webauthn_finish_registration', token],
      ['GET', '/api/authn/webauthn_begin_login', undefined],
      ['POST', '/api/authn/webauthn_finish_login', undefined],
    ] as const) {
      const body = method === 'POST' ? { id: 'AA', rawId: 'AA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA', authenticatorData: 'AA', signature: 'AA' } } : undefined;
      const r = await call(method, url, { token: auth, body, session: 'x' });
      expect({ code: r.code, message: r.message }, url).toEqual({ code: 403, message: MSG_NOT_ENABLED });
    }
    expect((await call('GET', '/api/authn/getcredentials', { token })).data).toEqual([]);
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'webauthn_login_enabled', value: 'true' }] })).code).toBe(200);
    expect((await s.api('GET', '/api/public/settings')).data.webauthn_login_enabled).toBe('true');
  });

  it('registers a passkey (real "none" attestation) and lists it as OpenList does', async () => {
    const { token, id } = await newUser('ann');
    const auth = new SoftAuthenticator(SITE);
    const begin = await call('GET', '/api/authn/webauthn_begin_registration', { token });
    expect(begin.headers['cache-control']).toBe('no-store');
    const pk = begin.data.options.publicKey;
    expect(pk.rp).toMatchObject({ id: 'localhost' });
    expect(pk.user.name).toBe('ann');
    expect(Buffer.from(pk.user.id, 'base64url').readBigUInt64LE()).toBe(BigInt(id));
    expect(pk.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(pk.excludeCredentials).toEqual([]);
    expect(Buffer.from(pk.challenge, 'base64url')).toHaveLength(32);
    expect(typeof begin.data.session).toBe('string');

    const body = auth.create(pk);
    expect(await call('POST', '/api/authn/webauthn_finish_registration', { token, session: begin.data.session, body })).toMatchObject({ code: 200, data: 'Registered Successfully' });
    // the same answer again: its challenge is spent
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token, session: begin.data.session, body })).message).toBe(MSG_CHALLENGE);

    const list = (await call('GET', '/api/authn/getcredentials', { token })).data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: auth.credentials[0]!.id.toString('base64'),
      fingerprint: 'A7 D6 D9 3A 8A 0D 11 EF B2 B5 B3 A4 F5 E6 D7 C8',
      creator_ip: '127.0.0.1',
      is_legacy: false,
      name: 'Passkey 1',
      last_used_time: '',
    });
    const rows = await s.core.repos.webauthn.ofUser(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.signCount).toBe(0);
    expect(rows[0]!.transports).toEqual(['internal']);

    // a second passkey: the first is excluded in the options, both are listed
    const begin2 = await call('GET', '/api/authn/webauthn_begin_registration', { token });
    expect(begin2.data.options.publicKey.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([auth.credentials[0]!.id.toString('base64url')]);
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token, session: begin2.data.session, body: auth.create(begin2.data.options.publicKey) })).code).toBe(200);
    expect((await call('GET', '/api/authn/getcredentials', { token })).data.map((c: { name: string }) => c.name)).toEqual(['Passkey 1', 'Passkey 2']);
    // another user sees none of them and can not delete them
    const other = await newUser('eve');
    expect((await call('GET', '/api/authn/getcredentials', { token: other.token })).data).toEqual([]);
    expect((await call('POST', '/api/authn/delete_authn', { token: other.token, body: { id: list[0].id } })).message).toBe('credential not found or already revoked');
  });

  it('refuses registrations bound to another user, another ceremony, an expired or a forged challenge, and the guest', async () => {
    const a = await newUser('reg-a');
    const b = await newUser('reg-b');
    const auth = new SoftAuthenticator(SITE);
    const begin = await call('GET', '/api/authn/webauthn_begin_registration', { token: a.token });
    // b answers a's challenge
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token: b.token, session: begin.data.session, body: auth.create(begin.data.options.publicKey) })).message).toBe(MSG_CHALLENGE);
    // a login challenge is not a registration challenge
    const login = await beginLogin();
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token: a.token, session: login.session, body: auth.create({ ...begin.data.options.publicKey, challenge: login.options.publicKey.challenge }) })).message).toBe(MSG_CHALLENGE);
    // expired
    const late = await call('GET', '/api/authn/webauthn_begin_registration', { token: a.token });
    await s.core.db.db.updateTable('webauthn_challenges').set({ expires_at: Date.now() - 1 }).where('id', '=', late.data.session).execute();
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token: a.token, session: late.data.session, body: auth.create(late.data.options.publicKey) })).message).toBe(MSG_CHALLENGE);
    // right session, but the authenticator signed another challenge
    const fresh = await call('GET', '/api/authn/webauthn_begin_registration', { token: a.token });
    const forged = await call('POST', '/api/authn/webauthn_finish_registration', { token: a.token, session: fresh.data.session, body: auth.create({ ...fresh.data.options.publicKey, challenge: Buffer.alloc(32, 1).toString('base64url') }) });
    expect(forged.code).toBe(400);
    expect(forged.message).toMatch(/challenge/i);
    // no session header at all, and nonsense bodies
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token: a.token, body: auth.create(fresh.data.options.publicKey) })).message).toBe(MSG_CHALLENGE);
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token: a.token, session: 'x', body: { id: 1 } })).code).toBe(400);
    expect((await call('POST', '/api/authn/webauthn_finish_registration', { token: a.token, session: 'x', body: 'not json' })).code).toBe(400);
    expect(await s.core.repos.webauthn.ofUser(a.id)).toEqual([]);
    // the guest (enabled) can not begin one; nobody without a token either
    const guest = await s.core.repos.users.byUsername('guest');
    await s.core.repos.users.update({ ...guest!, disabled: false });
    expect((await call('GET', '/api/authn/webauthn_begin_registration')).code).toBe(403);
    await s.core.repos.users.update({ ...guest!, disabled: true });
    expect((await call('GET', '/api/authn/webauthn_begin_registration')).code).toBe(401);
  });

  it('signs in with and without the user name, answering a token as /api/auth/login does; the counter advances', async () => {
    const { token, id } = await newUser('bob');
    const auth = new SoftAuthenticator(SITE);
    await register(token, auth);

    // discoverable: no user name, no credentials listed; the passkey names its user
    const b1 = await beginLogin();
    expect(b1.require_username).toBe(false);
    expect(b1.options.publicKey.rpId).toBe('localhost');
    expect(b1.options.publicKey.userVerification).toBe('required');
    expect(b1.options.publicKey.allowCredentials ?? []).toEqual([]);
    const r1 = await finishLogin(b1.session, auth.get(b1.options.publicKey));
    expect(r1.code, r1.message).toBe(200);
    expect(Object.keys(r1.data)).toEqual(['token']);
    const me = await s.api('GET', '/api/me', { token: r1.data.token });
    expect(me.data).toMatchObject({ id, username: 'bob' });
    expect((await s.core.repos.webauthn.ofUser(id))[0]!.signCount).toBe(1);

    // with the user name (the OpenList front end sends ?username=), its passkeys are offered
    const b2 = await beginLogin('?username=bob');
    expect(b2.options.publicKey.allowCredentials.map((c: { id: string }) => c.id)).toEqual([auth.credentials[0]!.id.toString('base64url')]);
    const r2 = await finishLogin(b2.session, auth.get(b2.options.publicKey), { query: '?username=bob' });
    expect(r2.code, r2.message).toBe(200);
    expect((await s.api('GET', '/api/me', { token: r2.data.token })).data.username).toBe('bob');
    const [row] = await s.core.repos.webauthn.ofUser(id);
    expect(row!.signCount).toBe(2);
    expect(row!.lastUsedTime).toBeGreaterThan(0);
    expect(Date.parse((await call('GET', '/api/authn/getcredentials', { token })).data[0].last_used_time)).toBeGreaterThan(0);

    // a passkey of bob's offered for another user name is refused
    const other = await newUser('carl');
    expect(other.id).not.toBe(id);
    const b3 = await beginLogin('?username=carl');
    const r3 = await finishLogin(b3.session, auth.get(b2.options.publicKey, { credential: auth.credentials[0] }), { query: '?username=carl' });
    expect(r3.code).toBe(400);
    // OpenList's answers for the user-name variants
    expect((await call('GET', '/api/authn/webauthn_begin_login?username=nobody')).message).toBe('failed find user: record not found');
    expect((await call('GET', '/api/authn/webauthn_begin_login?allowCredentials=yes')).data).toEqual({ require_username: true });
  });

  it('refuses a replayed challenge, a wrong origin, a wrong RP ID, no user verification and a forged signature', async () => {
    const { token } = await newUser('dan');
    const auth = new SoftAuthenticator(SITE);
    await register(token, auth);
    const ip = '127.0.0.21';

    const b = await beginLogin('', ip);
    const good = auth.get(b.options.publicKey);
    expect((await finishLogin(b.session, good, { ip })).code).toBe(200);
    // the same session again (replay of the whole answer)
    expect(await finishLogin(b.session, good, { ip })).toMatchObject({ code: 400, message: MSG_CHALLENGE });
    // the same signed answer under a fresh session: it signed the old challenge
    const fresh = await beginLogin('', ip);
    const replay = await finishLogin(fresh.session, good, { ip });
    expect(replay.code).toBe(400);
    expect(replay.message).toMatch(/challenge/i);

    const wrongOrigin = await beginLogin('', '127.0.0.22');
    const r1 = await finishLogin(wrongOrigin.session, auth.get(wrongOrigin.options.publicKey, { origin: 'http://phish.localhost:5244' }), { ip: '127.0.0.22' });
    expect(r1.code).toBe(400);
    expect(r1.message).toMatch(/origin/i);

    const wrongRp = await beginLogin('', '127.0.0.23');
    const r2 = await finishLogin(wrongRp.session, auth.get(wrongRp.options.publicKey, { rpId: 'phish.localhost' }), { ip: '127.0.0.23' });
    expect(r2.code).toBe(400);
    expect(r2.message).toMatch(/RP ID/i);

    const noUv = await beginLogin('', '127.0.0.24');
    const r3 = await finishLogin(noUv.session, auth.get(noUv.options.publicKey, { noUserVerification: true }), { ip: '127.0.0.24' });
    expect(r3.code).toBe(400);
    expect(r3.message).toMatch(/verif/i);

    const forged = await beginLogin('', '127.0.0.25');
    const answer = auth.get(forged.options.publicKey);
    const sig = Buffer.from(answer.response.signature, 'base64url');
    sig[sig.length - 1] = sig[sig.length - 1]! ^ 1;
    answer.response.signature = sig.toString('base64url');
    const r4 = await finishLogin(forged.session, answer, { ip: '127.0.0.25' });
    expect(r4.code).toBe(400);
    expect(r4.message).toMatch(/signature/i);
    // none of these moved the stored counter past the one good sign-in
    const owner = (await s.core.repos.users.byUsername('dan'))!;
    expect((await s.core.repos.webauthn.ofUser(owner.id))[0]!.signCount).toBe(1);
  });

  it('refuses a cloned authenticator whose counter does not advance, without touching the stored counter', async () => {
    const { token, id } = await newUser('cloned');
    const auth = new SoftAuthenticator(SITE);
    await register(token, auth);
    const ip = '127.0.0.31';
    for (let i = 0; i < 3; i++) {
      const b = await beginLogin('', ip);
      expect((await finishLogin(b.session, auth.get(b.options.publicKey), { ip })).code).toBe(200);
    }
    expect((await s.core.repos.webauthn.ofUser(id))[0]!.signCount).toBe(3);
    for (const counter of [3, 2]) {
      const b = await beginLogin('', ip);
      expect(await finishLogin(b.session, auth.get(b.options.publicKey, { counter }), { ip })).toMatchObject({ code: 401, message: MSG_COUNTER });
    }
    expect((await s.core.repos.webauthn.ofUser(id))[0]!.signCount).toBe(3);
    const b = await beginLogin('', ip);
    expect((await finishLogin(b.session, auth.get(b.options.publicKey, { counter: 10 }), { ip })).code).toBe(200);
    expect((await s.core.repos.webauthn.ofUser(id))[0]!.signCount).toBe(10);
  });

  it('accepts an authenticator that keeps no counter (always 0, as many synced passkeys), again and again', async () => {
    const { token, id } = await newUser('synced');
    const auth = new SoftAuthenticator(SITE);
    await register(token, auth);
    for (let i = 0; i < 3; i++) {
      const b = await beginLogin('', '127.0.0.35');
      const r = await finishLogin(b.session, auth.get(b.options.publicKey, { counter: 0 }), { ip: '127.0.0.35' });
      expect(r.code, r.message).toBe(200);
    }
    const [row] = await s.core.repos.webauthn.ofUser(id);
    expect(row!.signCount).toBe(0);
    expect(row!.lastUsedTime).toBeGreaterThan(0);
  });

  it('a deleted passkey no longer signs in; a disabled user is refused; a deleted user takes its passkeys along', async () => {
    const { token, id } = await newUser('gone');
    const auth = new SoftAuthenticator(SITE);
    await register(token, auth);
    const listed = (await call('GET', '/api/authn/getcredentials', { token })).data;
    expect(await call('POST', '/api/authn/delete_authn', { token, body: { id: listed[0].id } })).toMatchObject({ code: 200, data: 'Deleted Successfully' });
    expect((await call('GET', '/api/authn/getcredentials', { token })).data).toEqual([]);
    expect((await call('POST', '/api/authn/delete_authn', { token, body: { id: listed[0].id } })).message).toBe('credential not found or already revoked');
    expect((await call('POST', '/api/authn/delete_authn', { token, body: {} })).code).toBe(400);
    const b = await beginLogin('', '127.0.0.41');
    const r = await finishLogin(b.session, auth.get(b.options.publicKey, { credential: auth.credentials[0] }), { ip: '127.0.0.41' });
    expect(r.code).toBe(400);
    expect(r.message).toMatch(/not registered/);

    // disabled: the signature is good, the account is not
    const d = await newUser('disabled');
    const dAuth = new SoftAuthenticator(SITE);
    await register(d.token, dAuth);
    const user = await s.api('GET', `/api/admin/user/get?id=${d.id}`, { token: admin });
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...user.data, disabled: true } })).code).toBe(200);
    const b2 = await beginLogin('', '127.0.0.42');
    expect(await finishLogin(b2.session, dAuth.get(b2.options.publicKey), { ip: '127.0.0.42' })).toMatchObject({ code: 401, message: MSG_UNAVAILABLE });
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...user.data, disabled: false } })).code).toBe(200);
    const b3 = await beginLogin('', '127.0.0.42');
    expect((await finishLogin(b3.session, dAuth.get(b3.options.publicKey), { ip: '127.0.0.42' })).code).toBe(200);

    expect((await s.api('POST', `/api/admin/user/delete?id=${d.id}`, { token: admin })).code).toBe(200);
    expect(await s.core.repos.webauthn.ofUser(d.id)).toEqual([]);
    expect(id).toBeGreaterThan(0);
  });

  it('a ceremony begun on one process finishes on another sharing the database, once', async () => {
    const { token } = await newUser('cluster');
    const auth = new SoftAuthenticator(SITE);
    const other = await startServer(backend, { dataDir: s.dataDir });
    try {
      const reg = await call('GET', '/api/authn/webauthn_begin_registration', { token });
      const onOther = await other.inject({
        method: 'POST',
        url: '/api/authn/webauthn_finish_registration',
        headers: { authorization: token, session: reg.data.session, 'content-type': 'application/json' },
        payload: JSON.stringify(auth.create(reg.data.options.publicKey)),
      });
      expect(onOther.json()).toMatchObject({ code: 200, data: 'Registered Successfully' });
      const b = await beginLogin('', '127.0.0.61');
      const answer = JSON.stringify(auth.get(b.options.publicKey));
      const finishOn = (srv: TestServer) =>
        srv.inject({ method: 'POST', url: '/api/authn/webauthn_finish_login', headers: { session: b.session, 'content-type': 'application/json' }, payload: answer, remoteAddress: '127.0.0.61' });
      // both processes receive the same answer at once: one signs in, the other finds the challenge spent
      const results = (await Promise.all([finishOn(other), finishOn(s)])).map((r) => r.json());
      expect(results.map((r) => r.code).sort()).toEqual([200, 400]);
      expect(results.find((r) => r.code === 400).message).toBe(MSG_CHALLENGE);
    } finally {
      await other.stop();
    }
  });

  it('counts failed passkey sign-ins in the login lockout, and bounds pending challenges per client', async () => {
    const { token } = await newUser('locked');
    const auth = new SoftAuthenticator(SITE);
    await register(token, auth);
    const ip = '127.0.0.51';
    for (let i = 0; i < 5; i++) {
      const b = await beginLogin('', ip);
      expect((await finishLogin(b.session, auth.get(b.options.publicKey, { origin: 'http://phish.localhost' }), { ip })).code).toBe(400);
    }
    // locked: even a good answer is refused, and no new challenge is handed out
    expect((await call('GET', '/api/authn/webauthn_begin_login', { ip })).code).toBe(429);
    // (a challenge from another address, answered from the locked one)
    const b = await beginLogin('', '127.0.0.52');
    expect((await finishLogin(b.session, auth.get(b.options.publicKey), { ip })).code).toBe(429);
    // the same lock as the password login
    expect((await call('POST', '/api/auth/login', { ip, body: { username: 'locked', password: 'pw' } })).code).toBe(429);

    const asker = '127.0.0.53';
    for (let i = 0; i < MAX_PENDING_PER_ASKER; i++) await beginLogin('', asker);
    expect(await call('GET', '/api/authn/webauthn_begin_login', { ip: asker })).toMatchObject({ code: 429, message: 'too many pending passkey challenges' });
    await s.core.db.db.updateTable('webauthn_challenges').set({ expires_at: Date.now() - 1 }).where('admission', '=', `login:${asker}`).execute();
    expect((await call('GET', '/api/authn/webauthn_begin_login', { ip: asker })).code).toBe(200);
  });
});

describe('the relying party of passkeys', () => {
  it('comes from site_url when absolute, else only from a localhost request; plain http only on localhost; never an IP address', () => {
    expect(relyingParty({ url: 'https://nas.localdomain/atrium', configured: true })).toEqual({ rpId: 'nas.localdomain', origin: 'https://nas.localdomain' });
    expect(relyingParty({ url: 'https://nas.localdomain:8443', configured: true })).toEqual({ rpId: 'nas.localdomain', origin: 'https://nas.localdomain:8443' });
    expect(relyingParty({ url: 'http://localhost:5244', configured: false })).toEqual({ rpId: 'localhost', origin: 'http://localhost:5244' });
    expect(() => relyingParty({ url: 'https://nas.localdomain', configured: false })).toThrow('passkeys need site_url set to the address browsers use to reach this server');
    expect(() => relyingParty({ url: 'http://nas.localdomain', configured: true })).toThrow('passkeys need https outside localhost');
    expect(() => relyingParty({ url: 'ftp://localhost', configured: true })).toThrow('passkeys need an absolute http(s) site_url');
    for (const url of ['http://127.0.0.1:5244', 'http://[::1]:5244', 'https://10.1.2.3']) {
      expect(() => relyingParty({ url, configured: true }), url).toThrow('passkeys need a host name, not an IP address');
    }
    expect(() => relyingParty({ url: 'http://127.0.0.1:5244', configured: false })).toThrow('passkeys need a host name, not an IP address');
  });

  it('without site_url, a request to a host other than localhost gets a clear 400', async () => {
    const s = await startServer(BACKENDS[0]!);
    try {
      const admin = await s.login();
      await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'webauthn_login_enabled', value: 'true' }] });
      const far = await s.inject({ method: 'GET', url: '/api/authn/webauthn_begin_login', headers: { host: 'nas.localdomain:5244' } });
      expect(far.json()).toMatchObject({ code: 400, message: 'passkeys need site_url set to the address browsers use to reach this server' });
      const near = await s.inject({ method: 'GET', url: '/api/authn/webauthn_begin_login', headers: { host: 'localhost:5244' } });
      expect(near.json().data.options.publicKey.rpId).toBe('localhost');
    } finally {
      await s.destroy();
    }
  });
});
