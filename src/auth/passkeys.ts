import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Ceremony, PasskeyChallenge, PasskeyCredential, WebauthnRepo } from '../db/webauthn.js';
import { ROLE_GUEST, type User, type UsersRepo } from '../db/users.js';
import { AppError, BadRequest, Forbidden, isKind, TooManyRequests, Unauthorized, Unavailable } from '../errors.js';
import type { Settings } from '../settings/service.js';
import { lazyRequire } from '../util/lazy-require.js';
import type { LoginLimiter } from './login-limiter.js';

export const WEBAUTHN_LOGIN_ENABLED = 'webauthn_login_enabled';
/** How long a begun registration or sign-in may be finished (OpenList: 5 minutes). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Pending challenges one client address (sign-in) or one user (registration) may hold. */
export const MAX_PENDING_PER_ASKER = 10;
/** Pending challenges in all, so a spray of addresses can not fill the table. */
export const MAX_PENDING = 10_000;
/** Passkeys one user may hold. */
export const MAX_PASSKEYS_PER_USER = 50;

export const MSG_NOT_ENABLED = 'WebAuthn is not enabled';
export const MSG_CHALLENGE = 'passkey challenge is invalid, expired, or already used';
export const MSG_COUNTER = 'passkey signature counter did not advance';
export const MSG_UNAVAILABLE = 'passkey account is unavailable';

/** Loaded on the first passkey ceremony: most servers never hold one. */
const loadLib = lazyRequire<typeof import('@simplewebauthn/server')>('@simplewebauthn/server');

/** Where browsers reach this server: the relying party of every passkey. */
export interface SiteAddress {
  /** `site_url` when it is an absolute http(s) URL, else the request's scheme://host. */
  url: string;
  /** Whether `url` came from `site_url` (true) or from the request's Host (false). */
  configured: boolean;
}

interface RelyingParty {
  rpId: string;
  origin: string;
}

const isLocalHost = (host: string) => host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]';

/**
 * The relying party of a request. The RP ID is the host name of `site_url` and the origin its
 * scheme://host[:port]. Without an absolute `site_url`, the request's own host is used, but only
 * when it is localhost: otherwise a Host header would choose the RP. Browsers accept no IP
 * address as an RP ID, so one is refused here with words that say so.
 * Browsers only create passkeys in secure contexts, so plain http is only for localhost.
 */
export function relyingParty(site: SiteAddress): RelyingParty {
  let u: URL;
  try {
    u = new URL(site.url);
  } catch {
    throw new BadRequest('passkeys need an absolute http(s) site_url');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') throw new BadRequest('passkeys need an absolute http(s) site_url');
  const local = isLocalHost(u.hostname);
  if (!site.configured && !local) throw new BadRequest('passkeys need site_url set to the address browsers use to reach this server');
  if (isIP(u.hostname.replace(/^\[|\]$/g, '')) !== 0) throw new BadRequest('passkeys need a host name, not an IP address (browsers refuse one): open the site at localhost or set site_url');
  if (u.protocol === 'http:' && !local) throw new BadRequest('passkeys need https outside localhost');
  return { rpId: u.hostname.replace(/^\[|\]$/g, ''), origin: u.origin };
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
export const credentialHash = (idBase64url: string) => createHash('sha256').update(Buffer.from(idBase64url, 'base64url')).digest('hex');

/** The WebAuthn user handle of a user: its id as 8 little-endian bytes (as OpenList). */
export function userHandle(userId: number): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(userId));
  return new Uint8Array(b);
}

/** OpenList's fingerprint: the AAGUID's bytes in upper-case hex, separated by spaces. */
export function fingerprint(aaguid: string): string {
  const hex = aaguid.replace(/-/g, '').toUpperCase();
  return (hex.match(/../g) ?? []).join(' ');
}

export interface PasskeyClient {
  ip: string;
  userAgent: string;
}

export interface PasskeyChallengeAnswer<O> {
  options: { publicKey: O };
  session: string;
}

/**
 * Passkeys (WebAuthn) as OpenList v4 has them: a signed-in user registers several; anyone signs
 * in with one, with a user name (its passkeys are offered) or without (a discoverable passkey
 * names its user). Each begun ceremony is a challenge row: bound to its ceremony, its user and
 * the relying party it was made for, used once, and gone after five minutes. Sign-ins count
 * failures in the login limiter like passwords do; the signature counter must advance.
 */
export class Passkeys {
  constructor(
    private readonly repo: WebauthnRepo,
    private readonly users: UsersRepo,
    private readonly settings: Settings,
    private readonly limiter: LoginLimiter,
    private readonly issueSession: (user: User, client: PasskeyClient) => Promise<string>,
    private readonly now: () => number = Date.now,
  ) {}

  enabled(): boolean {
    return this.settings.getBool(WEBAUTHN_LOGIN_ENABLED);
  }

  private assertEnabled(): void {
    if (!this.enabled()) throw new Forbidden(MSG_NOT_ENABLED);
  }

  list(user: User): Promise<PasskeyCredential[]> {
    return this.repo.ofUser(user.id);
  }

  /** `delete_authn`: `id` as getcredentials gives it (standard base64; base64url accepted too). */
  async remove(user: User, id: string): Promise<void> {
    const wanted = Buffer.from(id, 'base64');
    const found = wanted.length > 0 ? (await this.repo.ofUser(user.id)).find((c) => Buffer.from(c.credentialId, 'base64url').equals(wanted)) : undefined;
    if (!found) throw new BadRequest('credential not found or already revoked');
    await this.repo.delete(found.id);
  }

  removeAllOf(userId: number): Promise<void> {
    return this.repo.deleteOfUser(userId);
  }

  private async newChallenge(ceremony: Ceremony, userId: number, admission: string, rp: RelyingParty): Promise<{ id: string; challenge: string }> {
    const now = this.now();
    const pending = await this.repo.pending(admission, now);
    if (pending.mine >= MAX_PENDING_PER_ASKER) throw new TooManyRequests('too many pending passkey challenges');
    if (pending.all >= MAX_PENDING) throw new Unavailable('passkey challenge store is at capacity');
    const id = randomBytes(32).toString('base64url');
    const challenge = randomBytes(32).toString('base64url');
    await this.repo.putChallenge({ id, ceremony, userId, admission, challenge, rpId: rp.rpId, origin: rp.origin, expiresAt: now + CHALLENGE_TTL_MS });
    return { id, challenge };
  }

  /** The challenge named by the `session` header, if it is one of this ceremony and user and still valid; it is gone afterwards either way. */
  private async takeChallenge(session: string, ceremony: Ceremony, userId: number) {
    const ch = session && session.length <= 128 ? await this.repo.takeChallenge(session) : undefined;
    if (!ch || ch.ceremony !== ceremony || ch.userId !== userId || ch.expiresAt <= this.now()) throw new BadRequest(MSG_CHALLENGE);
    return ch;
  }

  async beginRegistration(user: User, site: SiteAddress): Promise<PasskeyChallengeAnswer<PublicKeyCredentialCreationOptionsJSON>> {
    this.assertEnabled();
    if (user.role === ROLE_GUEST) throw new Forbidden('Guest user can not register passkeys');
    const rp = relyingParty(site);
    const existing = await this.repo.ofUser(user.id);
    if (existing.length >= MAX_PASSKEYS_PER_USER) throw new BadRequest(`a user may hold at most ${MAX_PASSKEYS_PER_USER} passkeys`);
    const { id, challenge } = await this.newChallenge('registration', user.id, `registration:${user.id}`, rp);
    const lib = loadLib();
    const options = await lib.generateRegistrationOptions({
      rpName: this.settings.get('site_title') || 'Atrium',
      rpID: rp.rpId,
      userName: user.username,
      userDisplayName: user.username,
      userID: userHandle(user.id) as Uint8Array<ArrayBuffer>,
      challenge: Buffer.from(challenge, 'base64url') as unknown as Uint8Array<ArrayBuffer>,
      timeout: CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    return { options: { publicKey: options }, session: id };
  }

  async finishRegistration(user: User, session: string, response: RegistrationResponseJSON, client: PasskeyClient): Promise<PasskeyCredential> {
    this.assertEnabled();
    if (user.role === ROLE_GUEST) throw new Forbidden('Guest user can not register passkeys');
    const ch = await this.takeChallenge(session, 'registration', user.id);
    const lib = loadLib();
    let info;
    try {
      const result = await lib.verifyRegistrationResponse({ response, ...expectations(ch) });
      if (!result.verified) throw new Error('registration could not be verified');
      info = result.registrationInfo;
    } catch (err) {
      throw verificationError(err);
    }
    const credentialId = info.credential.id;
    const hash = credentialHash(credentialId);
    if (await this.repo.byHash(hash)) throw new BadRequest('credential is already registered');
    const existing = await this.repo.ofUser(user.id);
    if (existing.length >= MAX_PASSKEYS_PER_USER) throw new BadRequest(`a user may hold at most ${MAX_PASSKEYS_PER_USER} passkeys`);
    const fields: Omit<PasskeyCredential, 'id'> = {
      userId: user.id,
      credentialHash: hash,
      credentialId,
      publicKey: b64url(info.credential.publicKey),
      signCount: info.credential.counter,
      transports: (info.credential.transports ?? []).slice(0, 8).map(String),
      aaguid: info.aaguid,
      backedUp: info.credentialBackedUp,
      name: `Passkey ${existing.length + 1}`,
      creatorIp: client.ip.slice(0, 64),
      creatorUa: client.userAgent.slice(0, 1024),
      addedTime: this.now(),
      lastUsedTime: 0,
    };
    const id = await this.repo.create(fields);
    return { id, ...fields };
  }

  /**
   * `webauthn_begin_login`: with a user name, that user's passkeys are offered; without one the
   * browser offers any passkey of this site (discoverable). `allowCredentials=yes` without a
   * user name answers `{require_username: true}` as OpenList does.
   */
  async beginLogin(
    username: string,
    allowCredentials: string,
    site: SiteAddress,
    client: PasskeyClient,
  ): Promise<(PasskeyChallengeAnswer<PublicKeyCredentialRequestOptionsJSON> & { require_username: boolean }) | { require_username: true }> {
    this.assertEnabled();
    if (allowCredentials === 'yes' && username === '') return { require_username: true };
    await this.limiter.check(client.ip);
    const rp = relyingParty(site);
    let user: User | undefined;
    if (username !== '' && allowCredentials !== 'no') {
      user = await this.users.byUsername(username);
      if (!user) throw new BadRequest('failed find user: record not found');
    }
    const allow = user ? (await this.repo.ofUser(user.id)).map((c) => ({ id: c.credentialId, transports: c.transports })) : undefined;
    const { id, challenge } = await this.newChallenge('login', user?.id ?? 0, `login:${client.ip}`, rp);
    const lib = loadLib();
    const options = await lib.generateAuthenticationOptions({
      rpID: rp.rpId,
      allowCredentials: allow,
      challenge: Buffer.from(challenge, 'base64url') as unknown as Uint8Array<ArrayBuffer>,
      timeout: CHALLENGE_TTL_MS,
      userVerification: 'required',
    });
    return { options: { publicKey: options }, session: id, require_username: false };
  }

  /** `webauthn_finish_login`: checks the assertion and answers a token as the password login does. */
  async finishLogin(username: string, session: string, response: AuthenticationResponseJSON, client: PasskeyClient): Promise<string> {
    this.assertEnabled();
    await this.limiter.check(client.ip);
    try {
      return await this.verifyLogin(username, session, response, client);
    } catch (err) {
      // Refusals count towards the lockout; a server-side failure does not.
      if (isKind(err, 'BadRequest', 'Unauthorized')) await this.limiter.fail(client.ip);
      throw err;
    }
  }

  private async verifyLogin(username: string, session: string, response: AuthenticationResponseJSON, client: PasskeyClient): Promise<string> {
    let named: User | undefined;
    if (username !== '') {
      named = await this.users.byUsername(username);
      if (!named) {
        // The challenge is spent all the same.
        if (session && session.length <= 128) await this.repo.takeChallenge(session);
        throw new BadRequest('failed find user: record not found');
      }
    }
    const ch = await this.takeChallenge(session, 'login', named?.id ?? 0);
    const credential = await this.repo.byHash(credentialHash(response.rawId || response.id));
    if (!credential || (named && credential.userId !== named.id)) throw new BadRequest('passkey is not registered here (it may have been deleted)');
    // A discoverable passkey names its user: that name must be the credential's owner.
    const handle = response.response.userHandle;
    if ((!named || handle) && (!handle || !Buffer.from(handle, 'base64url').equals(Buffer.from(userHandle(credential.userId))))) {
      throw new BadRequest('passkey user handle does not match its owner');
    }
    const user = await this.users.byId(credential.userId);
    const lib = loadLib();
    let newCounter: number;
    try {
      const result = await lib.verifyAuthenticationResponse({
        response,
        ...expectations(ch),
        // The counter is compared below, after the signature, against the stored one.
        credential: { id: credential.credentialId, publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')), counter: 0, transports: credential.transports as never },
      });
      if (!result.verified) throw new Error("the signature does not match the passkey's public key");
      newCounter = result.authenticationInfo.newCounter;
    } catch (err) {
      throw verificationError(err);
    }
    if (!user || user.disabled || user.role === ROLE_GUEST) throw new Unauthorized(MSG_UNAVAILABLE);
    // A counter that does not move forward means two authenticators hold this key (a clone).
    if ((newCounter > 0 || credential.signCount > 0) && newCounter <= credential.signCount) throw new Unauthorized(MSG_COUNTER);
    if (!(await this.repo.advance(credential.id, credential.signCount, newCounter, this.now()))) throw new Unauthorized(MSG_COUNTER);
    await this.limiter.succeed(client.ip);
    return this.issueSession(user, client);
  }
}

/** What a ceremony's answer must show: the challenge, origin and RP ID of its begin, and user verification. */
const expectations = (ch: PasskeyChallenge) => ({ expectedChallenge: ch.challenge, expectedOrigin: ch.origin, expectedRPID: ch.rpId, requireUserVerification: true });

/** The library's refusals (bad signature, origin, RP ID, challenge, flags) as a 400 with its words. */
function verificationError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new BadRequest(`passkey verification failed: ${err instanceof Error ? err.message : String(err)}`);
}
