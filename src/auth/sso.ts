import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { SsoFlowsRepo } from '../db/sso-flows.js';
import { ROLE_GUEST, type User, type UsersRepo } from '../db/users.js';
import { BadRequest, Forbidden, TooManyRequests, Upstream } from '../errors.js';
import type { Settings } from '../settings/service.js';
import { provisionedUser } from './provisioned.js';

/** What the browser asks for: a session (`sso_get_token`) or the identity to bind (`get_sso_id`). */
export const SSO_METHODS = ['sso_get_token', 'get_sso_id'] as const;
export type SsoMethod = (typeof SSO_METHODS)[number];

/** Platforms of the original this code serves: plain OpenID Connect configurations. */
export const SSO_PLATFORMS = ['OIDC', 'Casdoor'] as const;

/** Signature algorithms an ID token may use (asymmetric only: a shared-secret token is refused). */
export const ID_TOKEN_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Prefix of a binding ticket, the value `get_sso_id` hands the browser in place of the raw identity. */
export const TICKET_PREFIX = 'ssob.';

const FLOW_TTL_MS = 10 * 60_000;
const TICKET_TTL_MS = 5 * 60_000;
const MAX_PENDING = 10_000;
const MAX_PENDING_PER_IP = 30;
const DISCOVERY_TTL_MS = 5 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_DOC_BYTES = 1 << 20;
const CLOCK_TOLERANCE_S = 30;

export const MSG_SSO_DISABLED = 'Single sign-on is not enabled';
export const MSG_BAD_STATE = 'incorrect or expired state parameter';

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
}

/** The browser's side of a started flow: where to send it, and the cookie that binds the flow to it. */
export interface SsoStart {
  location: string;
  cookie: { name: string; value: string; path: string; secure: boolean; maxAge: number };
}

/** How a finished flow answers: a session token or a binding ticket, for the page at `base`. */
export interface SsoResult {
  method: SsoMethod;
  key: 'token' | 'sso_id';
  value: string;
  /** The api_url the flow started from (scheme://host[/path]). */
  base: string;
}

export const SSO_COOKIE = 'atrium_sso';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const b64url = (b: Buffer) => b.toString('base64url');
const secret = () => b64url(randomBytes(32));

function bounded(s: string, max: number, what: string): string {
  if (s.length > max) throw new BadRequest(`${what} is too long`);
  return s;
}

async function fetchJson(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (err) {
    throw new Upstream(`${what}: ${(err as Error).message}`);
  }
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_DOC_BYTES) {
      await reader.cancel();
      throw new Upstream(`${what}: answer larger than ${MAX_DOC_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Upstream(`${what}: HTTP ${res.status}, not JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Upstream(`${what}: HTTP ${res.status}, not a JSON object`);
  return body as Record<string, unknown>;
}

/**
 * OpenID Connect sign-in (`/api/auth/sso*`): authorization code flow with PKCE (S256), `state` and
 * `nonce` held in a single-use server-side record bound to the browser by a cookie, the ID token
 * verified against the issuer's JWKS. The identity is the ID token's claim named by
 * `sso_oidc_username_key`; an account holds it in `sso_id`.
 */
export class SsoService {
  private discovery?: { issuer: string; doc: Discovery; at: number };
  private jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(
    private readonly settings: Settings,
    private readonly users: UsersRepo,
    private readonly flows: SsoFlowsRepo,
  ) {}

  enabled(): boolean {
    return this.settings.getBool('sso_login_enabled');
  }

  compatibility(): boolean {
    return this.settings.getBool('sso_compatibility_mode');
  }

  /** The issuer of the configured platform (OIDC and Casdoor: `sso_endpoint_name`). */
  private issuer(): string {
    const platform = this.settings.get('sso_login_platform');
    if (!(SSO_PLATFORMS as readonly string[]).includes(platform)) {
      throw new BadRequest(platform === '' ? 'no single sign-on platform is chosen' : `single sign-on platform ${platform} is not supported here (supported: ${SSO_PLATFORMS.join(', ')})`);
    }
    const issuer = this.settings.get('sso_endpoint_name').trim().replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]/i.test(issuer)) throw new BadRequest('the provider address (sso_endpoint_name) must be an http(s) URL');
    if (this.settings.get('sso_client_id') === '') throw new BadRequest('the client ID (sso_client_id) is empty');
    return issuer;
  }

  private async provider(issuer: string): Promise<Discovery> {
    const now = Date.now();
    if (this.discovery && this.discovery.issuer === issuer && now - this.discovery.at < DISCOVERY_TTL_MS) return this.discovery.doc;
    const doc = await fetchJson(`${issuer}/.well-known/openid-configuration`, {}, 'OpenID discovery');
    for (const k of ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (typeof doc[k] !== 'string' || !/^https?:\/\//i.test(doc[k] as string)) throw new Upstream(`OpenID discovery: ${k} is missing or not an http(s) URL`);
    }
    // The document must speak for the issuer it was fetched from (OpenID Connect Discovery §4.3).
    if ((doc.issuer as string).replace(/\/+$/, '') !== issuer) throw new Upstream(`OpenID discovery: issuer ${String(doc.issuer)} is not ${issuer}`);
    const d = doc as unknown as Discovery;
    this.discovery = { issuer, doc: d, at: now };
    return d;
  }

  private keySet(uri: string) {
    let set = this.jwks.get(uri);
    if (!set) {
      set = createRemoteJWKSet(new URL(uri), { timeoutDuration: FETCH_TIMEOUT_MS });
      this.jwks.set(uri, set);
    }
    return set;
  }

  private scopes(): string {
    const extra = this.settings.get('sso_extra_scopes').split(/\s+/).filter((s) => s !== '' && s !== 'openid' && s !== 'profile');
    return ['openid', 'profile', ...new Set(extra)].join(' ');
  }

  /** The redirect URI the provider sends the browser back to (the original's two shapes). */
  static redirectUri(base: string, method: SsoMethod, compatibility: boolean): string {
    return compatibility ? `${base}/api/auth/${method}` : `${base}/api/auth/sso_callback?method=${method}`;
  }

  /** `GET /api/auth/sso`: a flow record, and the provider's authorization URL to send the browser to. */
  async start(method: string, base: string, browserCookie: string | undefined, ip: string): Promise<SsoStart> {
    if (!this.enabled()) throw new Forbidden(MSG_SSO_DISABLED);
    if (method === '') throw new BadRequest('no method provided');
    if (!(SSO_METHODS as readonly string[]).includes(method)) throw new BadRequest(`method must be one of ${SSO_METHODS.join(', ')}`);
    const issuer = this.issuer();
    const doc = await this.provider(issuer);
    const now = Date.now();
    await this.flows.deleteExpired(now);
    if ((await this.flows.count(ip)) >= MAX_PENDING_PER_IP || (await this.flows.count()) >= MAX_PENDING) {
      throw new TooManyRequests('too many single sign-on attempts are pending; try again in a few minutes');
    }
    const state = secret();
    const nonce = secret();
    const verifier = secret();
    const browser = browserCookie && /^[\w-]{43}$/.test(browserCookie) ? browserCookie : secret();
    const redirectUri = SsoService.redirectUri(base, method as SsoMethod, this.compatibility());
    await this.flows.create({
      id: sha256(state),
      kind: 'flow',
      method,
      nonce,
      verifier,
      browser: sha256(browser),
      ip,
      redirectUri,
      subject: '',
      expiresAt: now + FLOW_TTL_MS,
    });
    const url = new URL(doc.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.settings.get('sso_client_id'));
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('scope', this.scopes());
    url.searchParams.set('state', state);
    url.searchParams.set('nonce', nonce);
    url.searchParams.set('code_challenge', b64url(createHash('sha256').update(verifier).digest()));
    url.searchParams.set('code_challenge_method', 'S256');
    const redirect = new URL(redirectUri);
    return {
      location: url.toString(),
      cookie: {
        name: SSO_COOKIE,
        value: browser,
        path: `${redirect.pathname.slice(0, redirect.pathname.indexOf('/api/auth/'))}/api/auth`,
        secure: redirect.protocol === 'https:',
        maxAge: FLOW_TTL_MS / 1000,
      },
    };
  }

  /**
   * The provider's redirect back (`/api/auth/sso_callback`, or `/api/auth/<method>` in compatibility
   * mode): takes the flow (once), exchanges the code with the PKCE verifier, verifies the ID token,
   * and answers a session token or a binding ticket.
   */
  async finish(
    method: string,
    q: { state?: string; code?: string; error?: string; error_description?: string },
    browserCookie: string | undefined,
    signIn: (user: User) => Promise<string>,
  ): Promise<SsoResult> {
    if (!this.enabled()) throw new Forbidden(MSG_SSO_DISABLED);
    if (!(SSO_METHODS as readonly string[]).includes(method)) throw new BadRequest('invalid request');
    const issuer = this.issuer();
    const state = bounded(q.state ?? '', 256, 'state');
    const flow = state === '' ? undefined : await this.flows.take(sha256(state), 'flow', Date.now());
    // The flow must have been started for this method in this browser.
    if (!flow || flow.method !== method || !browserCookie || sha256(browserCookie) !== flow.browser) throw new BadRequest(MSG_BAD_STATE);
    if (q.error) throw new BadRequest(`the provider refused the sign-in: ${bounded(q.error, 200, 'error')}${q.error_description ? ` (${q.error_description.slice(0, 300)})` : ''}`);
    const code = bounded(q.code ?? '', 4096, 'code');
    if (code === '') throw new BadRequest('No code provided');
    const doc = await this.provider(issuer);
    const claims = await this.exchange(doc, issuer, code, flow.redirectUri, flow.verifier, flow.nonce);
    const identity = this.identity(claims);
    const base = flow.redirectUri.slice(0, flow.redirectUri.indexOf('/api/auth/'));
    if (method === 'get_sso_id') {
      const ticket = TICKET_PREFIX + secret();
      await this.flows.create({
        id: sha256(ticket),
        kind: 'ticket',
        method,
        nonce: '',
        verifier: '',
        browser: '',
        ip: '',
        redirectUri: '',
        subject: identity,
        expiresAt: Date.now() + TICKET_TTL_MS,
      });
      return { method: 'get_sso_id', key: 'sso_id', value: ticket, base };
    }
    const user = await this.accountFor(identity, claims);
    return { method: 'sso_get_token', key: 'token', value: await signIn(user), base };
  }

  private async exchange(doc: Discovery, issuer: string, code: string, redirectUri: string, verifier: string, nonce: string): Promise<JWTPayload> {
    const clientId = this.settings.get('sso_client_id');
    const clientSecret = this.settings.get('sso_client_secret');
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const methods = doc.token_endpoint_auth_methods_supported;
    if (clientSecret === '') form.set('client_id', clientId);
    else if (!methods || methods.includes('client_secret_basic')) {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
    } else {
      form.set('client_id', clientId);
      form.set('client_secret', clientSecret);
    }
    const answer = await fetchJson(doc.token_endpoint, { method: 'POST', headers, body: form.toString() }, 'token endpoint');
    if (typeof answer.error === 'string') {
      throw new BadRequest(`the provider refused the code: ${answer.error.slice(0, 200)}${typeof answer.error_description === 'string' ? ` (${answer.error_description.slice(0, 300)})` : ''}`);
    }
    if (typeof answer.id_token !== 'string') throw new BadRequest('no id_token found in oauth2 token');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(answer.id_token, this.keySet(doc.jwks_uri), {
        issuer: [issuer, `${issuer}/`],
        audience: clientId,
        algorithms: ID_TOKEN_ALGS,
        requiredClaims: ['sub', 'iat', 'exp'],
        clockTolerance: CLOCK_TOLERANCE_S,
      }));
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) throw new BadRequest(`the ID token is not valid: ${err.message}`);
      throw err;
    }
    // Several audiences: the token must be issued to us (OpenID Connect Core §3.1.3.7).
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== clientId) throw new BadRequest('the ID token is not valid: azp is not this client');
    if (payload.nonce !== nonce) throw new BadRequest('the ID token is not valid: nonce does not match');
    return payload;
  }

  /** The identity: the claim named by `sso_oidc_username_key` (default `sub`). */
  private identity(claims: JWTPayload): string {
    const key = this.settings.get('sso_oidc_username_key') || 'sub';
    const v = claims[key];
    const id = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
    if (id === '') throw new BadRequest('cannot get username from OIDC provider');
    if (id.length > 255) throw new BadRequest('the identity claim is longer than 255 characters');
    return id;
  }

  /** The account bound to an identity; created when `sso_auto_register` is on, refused otherwise. */
  private async accountFor(identity: string, claims: JWTPayload): Promise<User> {
    const bound = await this.users.bySsoId(identity);
    if (bound.length > 1) throw new Forbidden('several accounts are bound to this single sign-on identity; an administrator must unbind all but one');
    const user = bound[0];
    if (user) {
      if (user.role === ROLE_GUEST) throw new Forbidden('the guest account can not sign in with single sign-on');
      return user;
    }
    if (!this.settings.getBool('sso_auto_register')) {
      throw new Forbidden('no account is bound to this single sign-on identity: sign in with a password and bind it on your profile page, or ask an administrator to turn on automatic registration');
    }
    const wanted = [claims.preferred_username, claims.name, identity].find((v): v is string => typeof v === 'string' && v.trim() !== '')!.trim().slice(0, 100);
    let username = wanted;
    // As the original: a taken name gets the identity appended; never an existing account.
    if (await this.users.byUsernameFolded(username)) username = `${wanted}_${identity}`.slice(0, 255);
    if (await this.users.byUsernameFolded(username)) throw new Forbidden(`cannot create an account for this identity: the user name ${wanted} is taken`);
    // allow_ldap off: a directory entry of the same name must not take this account over.
    const id = await this.users.create(provisionedUser(this.settings, 'sso', username, { ssoId: identity, allowLdap: false }));
    return (await this.users.byId(id))!;
  }

  /**
   * The `sso_id` a user may set on themselves (`POST /api/me/update`): unchanged, empty (unbind), or a
   * binding ticket from `get_sso_id` (taken once) for the identity the provider vouched for. Any other
   * value is refused: a user can not claim someone else's identity by typing it.
   */
  async bindingFor(user: User, value: string): Promise<string> {
    if (value === user.ssoId || value === '') return value;
    if (!value.startsWith(TICKET_PREFIX) || value.length > 128) {
      throw new BadRequest('sso_id can only be set by binding with the provider (GET /api/auth/sso?method=get_sso_id); an administrator can set it on the user');
    }
    const ticket = await this.flows.take(sha256(value), 'ticket', Date.now());
    if (!ticket) throw new BadRequest('the single sign-on binding has expired or was already used; bind again');
    const others = (await this.users.bySsoId(ticket.subject)).filter((u) => u.id !== user.id);
    if (others.length > 0) throw new BadRequest('this single sign-on identity is already bound to another account');
    return ticket.subject;
  }
}
