import { createHmac, timingSafeEqual } from 'node:crypto';
import { Unauthorized } from '../errors.js';

export type WopiMode = 'view' | 'edit';

/** What an access token grants: one file, one user (as of one password), one mode, until `expires`. */
export interface WopiGrant {
  fileId: string;
  userId: number;
  /** The user's password stamp when the token was issued: a later password change ends it. */
  pwdTs: number;
  mode: WopiMode;
  /** Milliseconds since the epoch (the access_token_ttl the online office is given). */
  expires: number;
  /** A share visitor's grant (always `view`): the share, its code's stamp then, the visitor's path of the file. */
  share?: ShareGrant;
}

export interface ShareGrant {
  id: string;
  stamp: string;
  rel: string;
}

/** Ten hours, as WOPI hosts give (an editing session outlives a working day's morning). */
export const WOPI_TOKEN_TTL_MS = 10 * 60 * 60 * 1000;
export const MSG_WOPI_TOKEN = 'invalid or expired access token';

/**
 * WOPI access tokens: the grant as base64url JSON and its HMAC-SHA256 under a key derived from
 * the configuration's jwt_secret, so any process on the same configuration checks them and
 * nothing is stored. Whether the grant still holds (the user, their bits, the rules) is decided
 * at each callback, not here.
 */
export class WopiTokens {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = createHmac('sha256', secret).update('atrium wopi access token').digest();
  }

  issue(g: Omit<WopiGrant, 'expires'>, ttlMs = WOPI_TOKEN_TTL_MS): { token: string; grant: WopiGrant } {
    const grant: WopiGrant = { ...g, expires: this.now() + ttlMs };
    const claims = { f: grant.fileId, u: grant.userId, p: grant.pwdTs, m: grant.mode, e: grant.expires, ...(grant.share ? { s: [grant.share.id, grant.share.stamp, grant.share.rel] } : {}) };
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return { token: `${body}.${this.sign(body)}`, grant };
  }

  /** The grant of a token for file `fileId`; Unauthorized when it is forged, expired or for another file. */
  verify(token: string | undefined, fileId: string): WopiGrant {
    const [body, sig, extra] = (token ?? '').split('.');
    if (!body || !sig || extra !== undefined) throw new Unauthorized(MSG_WOPI_TOKEN);
    const want = Buffer.from(this.sign(body));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) throw new Unauthorized(MSG_WOPI_TOKEN);
    let c: { f?: unknown; u?: unknown; p?: unknown; m?: unknown; e?: unknown; s?: unknown };
    try {
      c = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof c;
    } catch {
      throw new Unauthorized(MSG_WOPI_TOKEN);
    }
    if (typeof c.f !== 'string' || typeof c.u !== 'number' || typeof c.p !== 'number' || (c.m !== 'view' && c.m !== 'edit') || typeof c.e !== 'number') throw new Unauthorized(MSG_WOPI_TOKEN);
    if (c.f !== fileId || c.e <= this.now()) throw new Unauthorized(MSG_WOPI_TOKEN);
    const grant: WopiGrant = { fileId: c.f, userId: c.u, pwdTs: c.p, mode: c.m, expires: c.e };
    if (c.s !== undefined) {
      const s = c.s;
      if (!Array.isArray(s) || s.length !== 3 || !s.every((x) => typeof x === 'string') || c.m !== 'view') throw new Unauthorized(MSG_WOPI_TOKEN);
      grant.share = { id: s[0] as string, stamp: s[1] as string, rel: s[2] as string };
    }
    return grant;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
