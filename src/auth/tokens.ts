import { randomBytes } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { SessionsRepo } from '../db/sessions.js';
import type { User } from '../db/users.js';
import { Unauthorized } from '../errors.js';

export const MSG = {
  invalidated: 'token is invalidated',
  expired: 'token is expired',
  notActive: 'token not active yet',
  passwordChanged: 'Password has been changed, login please',
} as const;

/** How many verified tokens are remembered (the oldest is forgotten first). */
const VERIFIED_MAX = 1024;

export interface TokenClaims {
  username: string;
  pwdTs: number;
  sessionId: string;
}

/**
 * HS256 JWTs with the original's claims (`username`, `pwd_ts`, exp/iat/nbf) plus `jti`, the id
 * of a row in the sessions table. A token is accepted only while that row exists, so logout
 * and password changes hold across restarts and across processes sharing one database.
 */
export class TokenService {
  /**
   * The HMAC key, imported once: given the secret's bytes, jose imports a new key on every sign
   * and verify, that is on every authenticated request.
   */
  private readonly key: Promise<CryptoKey>;

  constructor(
    secret: string,
    private readonly lifetimeHours: number,
    private readonly sessions: SessionsRepo,
    /** Refuses a new session beyond the account's `max_sessions` (auth/account-sessions.ts). */
    private readonly admit: (user: User) => Promise<void> = async () => undefined,
  ) {
    this.key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    // An import that fails is seen by the first sign or verify.
    this.key.catch(() => undefined);
  }

  /**
   * The payloads of tokens whose signature and claims were verified, by the token itself: the
   * same string signed with the same key verifies the same way, so a client sending its token
   * again (every chunk of an upload) costs no second HMAC. Times are checked again on every use,
   * and the session row on every request (logout and password changes hold).
   */
  private readonly verified = new Map<string, JWTPayload>();

  /** The payload of a token verified before, its times checked again now; undefined when unknown. */
  private recall(token: string): JWTPayload | undefined {
    const payload = this.verified.get(token);
    if (!payload) return undefined;
    // As jose checks them (no clock tolerance): expired at `exp`, valid from `nbf`.
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.exp === 'number' && payload.exp <= now) {
      this.verified.delete(token);
      throw new Unauthorized(MSG.expired);
    }
    if (typeof payload.nbf === 'number' && payload.nbf > now) throw new Unauthorized(MSG.notActive);
    return payload;
  }

  private remember(token: string, payload: JWTPayload): void {
    if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, payload);
  }

  async issue(user: User, meta: { ip: string; userAgent: string }): Promise<string> {
    await this.admit(user);
    const now = Date.now();
    const sessionId = randomBytes(18).toString('base64url');
    const expiresAt = now + this.lifetimeHours * 3600_000;
    await this.sessions.create({ id: sessionId, userId: user.id, createdAt: now, expiresAt, ip: meta.ip, userAgent: meta.userAgent });
    return new SignJWT({ username: user.username, pwd_ts: user.pwdTs })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setJti(sessionId)
      .setIssuedAt(Math.floor(now / 1000))
      .setNotBefore(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(await this.key);
  }

  /** Verifies signature, times and the session row; throws 401 with the original's messages. */
  async verify(token: string): Promise<TokenClaims> {
    let payload = this.recall(token);
    if (!payload) {
      try {
        ({ payload } = await jwtVerify(token, await this.key, { algorithms: ['HS256'] }));
      } catch (err) {
        // Only tokens this server signed can be "expired"; anything else was never issued here.
        if (err instanceof joseErrors.JWTExpired) throw new Unauthorized(MSG.expired);
        if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'nbf') throw new Unauthorized(MSG.notActive);
        throw new Unauthorized(MSG.invalidated);
      }
      this.remember(token, payload);
    }
    const { username, pwd_ts: pwdTs, jti } = payload as { username?: unknown; pwd_ts?: unknown; jti?: unknown };
    if (typeof username !== 'string' || typeof pwdTs !== 'number' || typeof jti !== 'string') {
      throw new Unauthorized(MSG.invalidated);
    }
    if (!(await this.sessions.exists(jti, Date.now()))) throw new Unauthorized(MSG.invalidated);
    return { username, pwdTs, sessionId: jti };
  }

  async revoke(sessionId: string): Promise<void> {
    await this.sessions.delete(sessionId);
  }

  async revokeAllOf(userId: number): Promise<void> {
    await this.sessions.deleteForUser(userId);
  }
}
