// A real OpenID provider (npm oidc-provider, a certified implementation) on loopback for the SSO
// tests, with its development login and consent pages, and a hook that rewrites the ID token its
// token endpoint answers (to play a provider, or an attacker, that hands out bad tokens).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';

export interface OidcPeer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Set to rewrite the next ID tokens: gets the claims and the signing key; returns a compact JWT. */
  tamper?: (claims: JWTPayload, sign: (claims: JWTPayload, key?: 'provider' | 'other', alg?: string) => Promise<string>) => Promise<string>;
  close(): Promise<void>;
}

/** Starts the provider on 127.0.0.1; `redirectUris` are the client's registered redirect URIs. */
export async function startOidcProvider(redirectUris: string[], accounts: Record<string, { name: string; preferred_username?: string }>): Promise<OidcPeer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const peer: OidcPeer = {
    issuer,
    clientId: 'atrium-test',
    clientSecret: 'atrium-test-secret-0123456789abcdef',
    close: () => new Promise((r) => server.close(() => r())),
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: peer.clientId,
        client_secret: peer.clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, ...(accounts[id] ?? { name: id }) }),
    }),
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    // Every client must prove the PKCE verifier.
    pkce: { required: () => true, methods: ['S256'] },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    renderError: async (ctx: { type: string; body: string }, out: Record<string, string>) => {
      ctx.type = 'html';
      ctx.body = `<p>${`${out.error}: ${out.error_description}`.replace(/[<>&"]/g, '')}</p>`;
    },
  });
  const sign = async (claims: JWTPayload, key: 'provider' | 'other' = 'provider', alg = 'RS256') =>
    new SignJWT(claims).setProtectedHeader({ alg, kid: 'test-key', typ: 'JWT' }).sign(key === 'provider' ? privateKey : other.privateKey);
  const callback = provider.callback();
  handler = (req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/token') && peer.tamper) {
      const tamper = peer.tamper;
      const chunks: Buffer[] = [];
      const end = res.end.bind(res) as (b: string) => ServerResponse;
      res.write = ((c: unknown) => (chunks.push(Buffer.from(c as Buffer)), true)) as typeof res.write;
      res.end = ((c?: unknown) => {
        if (c) chunks.push(Buffer.from(c as Buffer));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (typeof body.id_token !== 'string') return end(JSON.stringify(body));
        decodeProtectedHeader(body.id_token);
        const claims = JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString('utf8')) as JWTPayload;
        void tamper(claims, sign).then((token) => {
          const out = JSON.stringify({ ...body, id_token: token });
          res.setHeader('content-length', Buffer.byteLength(out));
          end(out);
        });
        return res;
      }) as typeof res.end;
    }
    callback(req, res);
  };
  return peer;
}

/** A cookie jar per host:port, enough for the provider's and Atrium's cookies. */
export class Jar {
  private readonly cookies = new Map<string, Map<string, string>>();
  header(url: URL): string {
    return [...(this.cookies.get(url.host) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  store(url: URL, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const m = this.cookies.get(url.host) ?? new Map<string, string>();
      m.set(pair!.slice(0, i).trim(), pair!.slice(i + 1).trim());
      this.cookies.set(url.host, m);
    }
  }
  get(host: string, name: string): string | undefined {
    return this.cookies.get(host)?.get(name);
  }
}

/** One request with the jar's cookies, redirects not followed. */
export async function send(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const u = new URL(url);
  const headers = new Headers(init.headers);
  const cookie = jar.header(u);
  if (cookie) headers.set('cookie', cookie);
  const res = await fetch(u, { ...init, headers, redirect: 'manual' });
  jar.store(u, res);
  return res;
}

/**
 * Follows the browser's way from `start` (Atrium's /api/auth/sso) through the provider's login and
 * consent pages, posting their forms as a person would, and stops at the first URL outside the
 * provider: the redirect back to Atrium (returned, not requested).
 */
export async function throughProvider(jar: Jar, start: string, issuer: string, login: string): Promise<{ authorize: URL; back: URL }> {
  let res = await send(jar, start);
  if (res.status !== 302) throw new Error(`start answered ${res.status}: ${await res.text()}`);
  const authorize = new URL(res.headers.get('location')!);
  let url = authorize;
  for (let i = 0; i < 20; i++) {
    if (!url.href.startsWith(`${issuer}/`)) return { authorize, back: url };
    res = await send(jar, url.href);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      continue;
    }
    const page = await res.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
    if (!form) throw new Error(`provider page without a form (${res.status}): ${page.slice(0, 400)}`);
    const fields = new URLSearchParams();
    for (const m of form[2]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*>/gi)) {
      const name = m[1]!;
      const value = /value="([^"]*)"/.exec(m[0])?.[1] ?? '';
      fields.set(name, name === 'login' ? login : name === 'password' ? 'any-password' : value);
    }
    res = await send(jar, new URL(form[1]!, url).href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: fields.toString() });
    if (res.status < 300 || res.status >= 400) throw new Error(`provider form answered ${res.status}: ${(await res.text()).slice(0, 400)}`);
    url = new URL(res.headers.get('location')!, url);
  }
  throw new Error('too many redirects at the provider');
}

/** Plays the person in the provider's window: login form, consent, until the window is gone. */
export async function atProvider(win: Page, login: string): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const button = win.locator('form button[type=submit]');
    const next = await Promise.race([win.waitForEvent('close').then(() => 'closed' as const), button.waitFor().then(() => 'form' as const)]).catch(() => 'closed' as const);
    if (next === 'closed' || win.isClosed()) return;
    const field = win.locator('input[name=login]');
    if (await field.count()) {
      await field.fill(login);
      await win.locator('input[name=password]').fill('any-password');
    }
    await button.click();
    await win.waitForLoadState().catch(() => undefined);
  }
  throw new Error('the provider window did not close');
}
