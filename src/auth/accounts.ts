import { checkedLimits, effectiveLimits, type LimitFields, limitsJson } from './limits.js';
import type { Settings } from '../settings/service.js';
import type { SshKeysRepo } from '../db/user-keys.js';
import type { AppPasswords } from './app-passwords.js';
import type { LdapDirectory } from './ldap.js';
import { ROLE_ADMIN, ROLE_GENERAL, ROLE_GUEST, type User, type UsersRepo } from '../db/users.js';
import { BadRequest, type ErrorKind, Forbidden, NotFound, OtpRequired, Unauthorized, Upstream } from '../errors.js';
import { cleanPath } from '../util/paths.js';
import { randomAlnum } from '../util/random.js';
import type { SharesRepo } from '../db/shares.js';
import type { LoginLimiter } from './login-limiter.js';
import { hashPassword, safeEqual, staticHash, verifyStaticHash } from './password.js';
import { provisionedUser } from './provisioned.js';
import { ALL_PERMISSIONS, effectiveBits } from './permissions.js';
import { MSG, type TokenService } from './tokens.js';
import { checkUsername, usernameKey } from './usernames.js';
import { totpStep } from './totp.js';
import type { EventOp, EventOrigin, OpEvents } from '../audit/events.js';
import { Recorder, resultOf } from '../audit/record.js';
import type { GroupsRepo, RootSpec } from '../db/groups.js';
import { checkQuota, checkRoots, checkTree } from './roots.js';

/** Setting: the account password alone still opens WebDAV/SFTP/FTP while 2FA is on (the original's behaviour). */
export const PROTOCOL_PASSWORD_WITH_2FA = 'protocol_password_with_2fa';

export const MSG_GUEST_DISABLED = 'Guest user is disabled, login please';
export const MSG_USER_DISABLED = 'Current user is disabled, replace please';

/** A disabled user's credentials or token (401 on the API, as the original; WebDAV answers 403). */
export class UserDisabled extends Unauthorized {
  constructor() {
    super(MSG_USER_DISABLED);
  }
}

/** Who a request runs as. `sessionId` is set for JWT logins (logout revokes it). */
export interface Principal {
  user: User;
  sessionId?: string;
}

/** The User JSON of the wire (password always empty). */
export function userJson(u: User, withOtp = false) {
  const json: Record<string, unknown> = {
    id: u.id,
    username: u.username,
    password: '',
    base_path: u.basePath,
    role: u.role,
    disabled: u.disabled,
    permission: u.permission,
    sso_id: u.ssoId,
    allow_ldap: u.allowLdap,
    group_ids: (u.groups ?? []).map((g) => g.id),
    // Atrium's own, read-only: the bits the user holds with their groups' (the admin role holds all).
    effective_permission: u.role === ROLE_ADMIN ? ALL_PERMISSIONS : effectiveBits(u),
    roots: (u.roots ?? []).map((r) => ({ path: r.path, name: r.name })),
    quota_bytes: u.quotaBytes ?? 0,
    quota_files: u.quotaFiles ?? 0,
    ...limitsJson(u.limits),
    // Atrium's own, read-only: the limits that apply with the groups' (the smallest non-zero).
    effective_limits: limitsJson(effectiveLimits(u)),
  };
  if (withOtp) json.otp = u.otpSecret !== '';
  return json;
}

export interface UserInput extends LimitFields {
  id?: number;
  username: string;
  password?: string;
  base_path?: string;
  role?: number;
  disabled?: boolean;
  permission?: number;
  sso_id?: string;
  allow_ldap?: boolean;
  /** The groups the user belongs to (exactly these once saved). */
  group_ids?: number[];
  /** The user's own extra roots, each at `/<name>` of their tree. */
  roots?: RootSpec[];
  /** Bytes and files the user's own root may hold (0: none). */
  quota_bytes?: number;
  quota_files?: number;
}

/** Who makes an admin change and from where (the audit log's user and origin). */
export interface Actor {
  user: string;
  origin: EventOrigin;
}

/** A front that signs in on every request (WebDAV Basic auth): a success is recorded once per user, address and this long. */
const PER_REQUEST_LOGIN_QUIET = 10 * 60_000;
const PER_REQUEST_FRONTS = new Set(['webdav', 's3']);

/** What the accounts service works with, given once by the composition root (core.ts). */
export interface AccountsDeps {
  users: UsersRepo;
  settings: Settings;
  tokens: TokenService;
  limiter: LoginLimiter;
  sshKeys: SshKeysRepo;
  shares: SharesRepo;
  appPasswords: AppPasswords;
  ldap: LdapDirectory;
  events: OpEvents;
  /** The groups a user's `group_ids` name. */
  groups: GroupsRepo;
  /** Drops what else a deleted user owns (their S3 keys, passkeys). */
  onDeleteUser?: (id: number) => Promise<void>;
  /** The `sso_id` a user may set on themselves from the value they sent (single sign-on). */
  ssoBinding?: (user: User, value: string) => Promise<string>;
}

export class Accounts {
  /** `<front> <user> <ip>` → when its last successful sign-in was recorded (per-request fronts only). */
  private readonly recentLogins = new Map<string, number>();

  private readonly users: UsersRepo;
  private readonly settings: Settings;
  private readonly tokens: TokenService;
  private readonly limiter: LoginLimiter;
  private readonly sshKeys: SshKeysRepo;
  private readonly shares: SharesRepo;
  readonly appPasswords: AppPasswords;
  private readonly ldap: LdapDirectory;
  private readonly events: OpEvents;
  private readonly groups: GroupsRepo;
  /** Drops what else a deleted user owns (their S3 keys, passkeys). */
  private readonly onDeleteUser?: (id: number) => Promise<void>;
  /** The `sso_id` a user may set on themselves from the value they sent (single sign-on, auth/sso.ts). */
  private readonly ssoBinding?: (user: User, value: string) => Promise<string>;

  constructor(deps: AccountsDeps) {
    ({
      users: this.users,
      settings: this.settings,
      tokens: this.tokens,
      limiter: this.limiter,
      sshKeys: this.sshKeys,
      shares: this.shares,
      appPasswords: this.appPasswords,
      ldap: this.ldap,
      events: this.events,
      groups: this.groups,
      onDeleteUser: this.onDeleteUser,
      ssoBinding: this.ssoBinding,
    } = deps);
  }

  /** Runs a sign-in and emits its `login` event (the name tried; `ok` or the kind it was refused with). */
  private async signIn<T>(origin: EventOrigin, username: string, fn: () => Promise<T>): Promise<T> {
    const rec = new Recorder(this.events, username, origin);
    try {
      const value = await fn();
      if (this.freshLogin(origin, username)) rec.emit('login', username, 'ok');
      return value;
    } catch (err) {
      rec.emit('login', username, resultOf(err));
      throw err;
    }
  }

  /**
   * A sign-in decided outside Accounts (an S3 signature, checked on every request): recorded as
   * the others are, a success once per user and address a while (the fronts that sign in on
   * every request), every failure. `path` is what was presented (the access key).
   */
  recordSignIn(origin: EventOrigin, username: string, path: string, result: 'ok' | ErrorKind): void {
    if (result === 'ok' && !this.freshLogin(origin, username)) return;
    new Recorder(this.events, username, origin).emit('login', path, result);
  }

  private freshLogin(origin: EventOrigin, username: string): boolean {
    if (!PER_REQUEST_FRONTS.has(origin.front)) return true;
    const key = `${origin.front} ${username} ${origin.ip ?? ''}`;
    const now = Date.now();
    const last = this.recentLogins.get(key);
    if (last !== undefined && now - last < PER_REQUEST_LOGIN_QUIET) return false;
    if (this.recentLogins.size > 10_000) this.recentLogins.clear();
    this.recentLogins.set(key, now);
    return true;
  }

  /** Runs an admin change and emits its event (`path`: the object's name or id). */
  private async adminChange<T>(actor: Actor | undefined, op: EventOp, path: string, fn: () => Promise<T>): Promise<T> {
    const rec = new Recorder(this.events, actor?.user ?? '', actor?.origin ?? { front: 'cli' });
    return rec.run(op, path, fn);
  }

  /**
   * Creates the admin (random 8-character password unless one is given) and the disabled
   * guest when missing. Returns the admin's initial password when it was just created.
   */
  async ensureDefaultUsers(initialPassword?: string): Promise<string | undefined> {
    let created: string | undefined;
    if (!(await this.users.byRole(ROLE_ADMIN))) {
      const password = initialPassword || randomAlnum(8);
      await this.users.create({
        username: 'admin',
        ...hashPassword(password),
        basePath: '/',
        role: ROLE_ADMIN,
        permission: ALL_PERMISSIONS,
        otpSecret: '',
        otpLastStep: 0,
        disabled: false,
        ssoId: '',
        authn: '[]',
        allowLdap: false,
      });
      created = password;
    }
    if (!(await this.users.byRole(ROLE_GUEST))) {
      await this.users.create({
        username: 'guest',
        ...hashPassword('guest'),
        basePath: '/',
        role: ROLE_GUEST,
        permission: 0,
        otpSecret: '',
        otpLastStep: 0,
        disabled: true,
        ssoId: '',
        authn: '[]',
        allowLdap: false,
      });
    }
    return created;
  }

  async admin(): Promise<User> {
    const u = await this.users.byRole(ROLE_ADMIN);
    if (!u) throw new NotFound('admin user not found');
    return u;
  }

  /** Sets a user's password: new salt and timestamp, and every session of the user ends. */
  async setPassword(user: User, plain: string): Promise<User> {
    if (plain === '') throw new BadRequest('password is empty');
    const next = { ...user, ...hashPassword(plain) };
    await this.users.update(next);
    await this.tokens.revokeAllOf(user.id);
    return next;
  }

  /** Login with the static hash; counts failures per IP and throws the original's errors. */
  async login(req: { ip: string; userAgent: string; username: string; hash: string; otpCode: string }, origin: EventOrigin = { front: 'api', ip: req.ip }): Promise<string> {
    return this.signIn(origin, req.username, () => this.loginNow(req));
  }

  private async loginNow(req: { ip: string; userAgent: string; username: string; hash: string; otpCode: string }): Promise<string> {
    await this.limiter.check(req.ip);
    const user = await this.users.byUsername(req.username);
    if (!user) {
      await this.limiter.fail(req.ip);
      throw new BadRequest('failed find user: record not found');
    }
    if (!verifyStaticHash(user, req.hash)) {
      await this.limiter.fail(req.ip);
      throw new BadRequest('password is incorrect');
    }
    return this.finishLogin(user, req);
  }

  /** The second factor (when on), the disabled check, and the session of a login whose password was right. */
  private async finishLogin(user: User, req: { ip: string; userAgent: string; otpCode: string }): Promise<string> {
    if (user.otpSecret) {
      const step = totpStep(user.otpSecret, req.otpCode);
      // A code is good once: a step at or before the last one accepted is a replay.
      if (step === null || step <= user.otpLastStep) {
        await this.limiter.fail(req.ip);
        throw new OtpRequired();
      }
      await this.users.update({ ...user, otpLastStep: step });
    }
    if (user.disabled) throw new UserDisabled();
    await this.limiter.succeed(req.ip);
    return this.tokens.issue(user, { ip: req.ip, userAgent: req.userAgent });
  }

  /**
   * A session for a user someone else vouched for (the single sign-on provider): no password and no
   * second factor here, the provider did that; a disabled user is refused.
   */
  async signInVouched(user: User, req: { ip: string; userAgent: string }, origin: EventOrigin = { front: 'api', ip: req.ip }): Promise<string> {
    return this.signIn(origin, user.username, async () => {
      if (user.disabled) throw new UserDisabled();
      return this.tokens.issue(user, req);
    });
  }

  /**
   * `POST /api/auth/login/ldap`: the directory checks the password (same per-IP lockout); the first
   * login creates the user with `ldap_default_dir` and `ldap_default_permission`. A local user
   * with `allow_ldap` off can not sign in this way; 2FA applies as at the other logins.
   */
  async loginLdap(req: { ip: string; userAgent: string; username: string; password: string; otpCode: string }, origin: EventOrigin = { front: 'api', ip: req.ip }): Promise<string> {
    return this.signIn(origin, req.username, () => this.loginLdapNow(req));
  }

  private async loginLdapNow(req: { ip: string; userAgent: string; username: string; password: string; otpCode: string }): Promise<string> {
    // OpenList's answers and codes: both refusals are 403, before the address's failures are counted.
    if (!this.ldap.enabled()) throw new Forbidden('ldap is not enabled');
    const existing = await this.users.byUsername(req.username);
    if (existing && !existing.allowLdap) throw new Forbidden('login via ldap is not allowed');
    await this.limiter.check(req.ip);
    const user = await this.ldapUser(req.username, req.password);
    if (!user) {
      await this.limiter.fail(req.ip);
      throw new BadRequest('password is incorrect');
    }
    return this.finishLogin(user, req);
  }

  /** The user the directory vouches for (created on first sight), or undefined. */
  private async ldapUser(username: string, password: string): Promise<User | undefined> {
    const existing = await this.users.byUsername(username);
    if (existing && (!existing.allowLdap || existing.role === ROLE_GUEST)) return undefined;
    let ok: boolean;
    try {
      ok = await this.ldap.verify(username, password);
    } catch (err) {
      throw new Upstream(`ldap: ${(err as Error).message}`);
    }
    if (!ok) return undefined;
    if (existing) return existing;
    const id = await this.users.create(provisionedUser(this.settings, 'ldap', username, { ssoId: '', allowLdap: true }));
    return this.users.byId(id);
  }

  /**
   * A user name and plain password, as WebDAV Basic auth, SFTP and FTP send them: the same per-IP
   * failure counting and lockout as the login route. Any of the user's app passwords opens these
   * protocols. Two-factor codes can't travel with them, so while a user has 2FA on the account
   * password alone is refused, unless `protocol_password_with_2fa` restores the original's
   * behaviour (password alone accepted).
   */
  async checkPassword(username: string, plain: string, ip: string, origin: EventOrigin = { front: 'api', ip }): Promise<User> {
    return this.signIn(origin, username, () => this.checkPasswordNow(username, plain, ip));
  }

  private async checkPasswordNow(username: string, plain: string, ip: string): Promise<User> {
    await this.limiter.check(ip);
    const user = await this.users.byUsername(username);
    const accountPasswordAllowed = user !== undefined && (user.otpSecret === '' || this.settings.getBool(PROTOCOL_PASSWORD_WITH_2FA));
    let ok =
      user !== undefined &&
      ((accountPasswordAllowed && verifyStaticHash(user, staticHash(plain))) || (user.role !== ROLE_GUEST && (await this.appPasswords.match(user, plain))));
    let signedIn = user;
    // The directory's password counts as the account password (so not alone while 2FA is on).
    if (!ok && this.ldap.enabled() && (user === undefined || accountPasswordAllowed)) {
      signedIn = await this.ldapUser(username, plain);
      ok = signedIn !== undefined;
    }
    if (!ok || !signedIn) {
      await this.limiter.fail(ip);
      throw new Unauthorized('password is incorrect');
    }
    if (signedIn.disabled) throw new UserDisabled();
    await this.limiter.succeed(ip);
    return signedIn;
  }

  /** A session for a user another method vouched for (a passkey): the token the login routes answer. */
  issueSession(user: User, client: { ip: string; userAgent: string }): Promise<string> {
    return this.tokens.issue(user, client);
  }

  static hashForLogin(plain: string): string {
    return staticHash(plain);
  }

  /** Resolves the `Authorization` header (wire-api.md §2.1). */
  async resolve(header: string | undefined): Promise<Principal> {
    const value = header?.trim() ?? '';
    const adminToken = this.settings.get('token');
    if (value !== '' && adminToken !== '' && safeEqual(value, adminToken)) return { user: await this.admin() };
    if (value === '') {
      const guest = await this.users.byRole(ROLE_GUEST);
      if (!guest || guest.disabled) throw new Unauthorized(MSG_GUEST_DISABLED);
      return { user: guest };
    }
    const token = /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '') : value;
    const claims = await this.tokens.verify(token);
    const user = await this.users.byUsername(claims.username);
    if (!user) throw new Unauthorized('failed find user: record not found');
    if (user.pwdTs !== claims.pwdTs) throw new Unauthorized(MSG.passwordChanged);
    if (user.disabled) throw new UserDisabled();
    return { user, sessionId: claims.sessionId };
  }

  async logout(p: Principal): Promise<void> {
    if (p.sessionId) await this.tokens.revoke(p.sessionId);
  }

  /** `POST /api/me/update`: username, password (when non-empty) and sso_id of oneself. */
  async updateMe(user: User, input: { username?: string; password?: string; sso_id?: string }): Promise<void> {
    if (user.role === ROLE_GUEST) throw new Forbidden('Guest user can not update profile');
    const username = input.username?.trim() || user.username;
    if (username !== user.username) await this.assertUsernameFree(username, user.id);
    const ssoId = input.sso_id === undefined ? user.ssoId : this.ssoBinding ? await this.ssoBinding(user, input.sso_id) : input.sso_id;
    let next: User = { ...user, username, ssoId };
    await this.users.update(next);
    if (input.password) next = await this.setPassword(next, input.password);
    else if (username !== user.username) await this.tokens.revokeAllOf(user.id); // tokens carry the name
  }

  /** A name no other user has, nor a look-alike of one (case, compatibility forms, invisible characters). */
  private async assertUsernameFree(username: string, exceptId?: number): Promise<void> {
    checkUsername(username);
    const other = await this.users.byUsernameFolded(username);
    if (other && other.id !== exceptId) throw new BadRequest(`username ${username} is already taken`);
    const key = usernameKey(username);
    const alike = (await this.users.names()).find((u) => u.id !== exceptId && usernameKey(u.username) === key);
    if (alike) throw new BadRequest(`username ${username} is too like the existing user ${alike.username}`);
  }

  async createUser(input: UserInput, actor?: Actor): Promise<number> {
    return this.adminChange(actor, 'user_create', input.username.trim(), () => this.createUserNow(input));
  }

  private async createUserNow(input: UserInput): Promise<number> {
    const role = input.role ?? ROLE_GENERAL;
    if (role === ROLE_ADMIN || role === ROLE_GUEST) throw new BadRequest('admin or guest user can not be created');
    if (role !== ROLE_GENERAL) throw new BadRequest(`role ${role} is not valid`);
    const username = input.username.trim();
    if (!username) throw new BadRequest('username is required');
    if (!input.password) throw new BadRequest('password is required');
    await this.assertUsernameFree(username);
    const tree = await this.treeOf(username, input, { roots: [], groups: [] });
    const id = await this.users.create({
      username,
      ...hashPassword(input.password),
      basePath: cleanPath(input.base_path ?? '/'),
      role,
      permission: input.permission ?? 0,
      otpSecret: '',
      otpLastStep: 0,
      disabled: input.disabled ?? false,
      ssoId: input.sso_id ?? '',
      authn: '[]',
      allowLdap: input.allow_ldap ?? true,
      roots: tree.roots,
      quotaBytes: checkQuota('quota_bytes', input.quota_bytes ?? 0),
      quotaFiles: checkQuota('quota_files', input.quota_files ?? 0),
      limits: checkedLimits(input, undefined),
    });
    if (tree.groups.length > 0) await this.users.setGroups(id, tree.groups.map((g) => g.id));
    return id;
  }

  /**
   * The roots and groups a save asks for (what it leaves out stays as `old` has it): each group
   * existing, the roots' names checked, and no name twice in the user's whole tree.
   */
  private async treeOf(username: string, input: UserInput, old: Pick<User, 'roots' | 'groups'>): Promise<Required<Pick<User, 'roots' | 'groups'>>> {
    const roots = input.roots === undefined ? (old.roots ?? []) : checkRoots(input.roots);
    let groups = old.groups ?? [];
    if (input.group_ids !== undefined) {
      const ids = [...new Set(input.group_ids)];
      groups = await this.groups.byIds(ids);
      const missing = ids.filter((id) => !groups.some((g) => g.id === id));
      if (missing.length > 0) throw new BadRequest(`group_ids: no group ${missing.join(', ')}`);
    }
    checkTree(username, { roots, groups });
    return { roots, groups };
  }

  async updateUser(input: UserInput & { id: number }, actor?: Actor): Promise<void> {
    return this.adminChange(actor, 'user_update', input.username.trim() || String(input.id), () => this.updateUserNow(input));
  }

  private async updateUserNow(input: UserInput & { id: number }): Promise<void> {
    const old = await this.users.byId(input.id);
    if (!old) throw new NotFound('user not found');
    if (input.role !== undefined && input.role !== old.role) throw new BadRequest('role can not be changed');
    if (old.role === ROLE_ADMIN && input.disabled) throw new BadRequest('admin user can not be disabled');
    const username = input.username.trim();
    if (!username) throw new BadRequest('username is required');
    if (old.role !== ROLE_GENERAL && username !== old.username) throw new BadRequest(`the ${old.username} user can not be renamed`);
    if (username !== old.username) await this.assertUsernameFree(username, old.id);
    const tree = await this.treeOf(username, input, old);
    let next: User = {
      ...old,
      roots: tree.roots,
      quotaBytes: checkQuota('quota_bytes', input.quota_bytes ?? old.quotaBytes ?? 0),
      quotaFiles: checkQuota('quota_files', input.quota_files ?? old.quotaFiles ?? 0),
      limits: checkedLimits(input, old.limits),
      username,
      basePath: cleanPath(input.base_path ?? old.basePath),
      permission: input.permission ?? old.permission,
      disabled: input.disabled ?? old.disabled,
      ssoId: input.sso_id ?? old.ssoId,
      allowLdap: input.allow_ldap ?? old.allowLdap,
    };
    await this.users.update(next);
    if (input.group_ids !== undefined) await this.users.setGroups(old.id, tree.groups.map((g) => g.id));
    // Unlike the original, an edit without a new password keeps the user's sessions alive,
    // except when the name changes (tokens carry it). A disabled user's requests are refused
    // on every request by `resolve`, with the original's message.
    if (input.password) next = await this.setPassword(next, input.password);
    else if (username !== old.username) await this.tokens.revokeAllOf(old.id);
  }

  async deleteUser(id: number, actor?: Actor): Promise<void> {
    const name = (await this.users.byId(id))?.username ?? String(id);
    return this.adminChange(actor, 'user_delete', name, () => this.deleteUserNow(id));
  }

  private async deleteUserNow(id: number): Promise<void> {
    const user = await this.users.byId(id);
    // OpenList's words (its lookup error wrapped), code 500.
    if (!user) throw new NotFound('failed get old user: record not found');
    if (user.role === ROLE_ADMIN || user.role === ROLE_GUEST) throw new BadRequest('cannot delete admin or guest');
    await this.tokens.revokeAllOf(id);
    await this.sshKeys.deleteOfUser(id);
    // A later user may get the same id (SQLite reuses the highest rowid): their shares go too.
    await this.shares.deleteForCreator(id);
    await this.onDeleteUser?.(id);
    await this.appPasswords.removeAllOf(id);
    await this.users.delete(id);
  }

  async cancel2fa(id: number): Promise<void> {
    const user = await this.users.byId(id);
    if (!user) throw new NotFound('user not found');
    await this.users.update({ ...user, otpSecret: '', otpLastStep: 0 });
  }

  /**
   * Turns 2FA on with a secret the user proved to hold; counts failures like logins. Replacing an
   * active secret also needs a code of the current one: a stolen session alone can not move the
   * account's second factor to the thief's device.
   */
  async enable2fa(user: User, secret: string, code: string, ip: string, currentCode = ''): Promise<void> {
    if (user.role === ROLE_GUEST) throw new Forbidden('Guest user can not generate 2FA code');
    await this.limiter.check(ip);
    if (user.otpSecret !== '') {
      const current = currentCode === '' ? null : totpStep(user.otpSecret, currentCode);
      if (current === null || current <= user.otpLastStep) {
        if (currentCode !== '') await this.limiter.fail(ip);
        throw new OtpRequired('2FA is already enabled: current_code must be a code of the current secret to replace it');
      }
    }
    const step = totpStep(secret, code);
    if (step === null) {
      await this.limiter.fail(ip);
      throw new BadRequest('Invalid 2FA code');
    }
    await this.limiter.succeed(ip);
    await this.users.update({ ...user, otpSecret: secret, otpLastStep: step });
  }

  async getUser(id: number): Promise<User> {
    const user = await this.users.byId(id);
    if (!user) throw new NotFound('user not found');
    return user;
  }
}
