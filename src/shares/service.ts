import path from 'node:path';
import { createHash } from 'node:crypto';
import { safeEqual } from '../auth/password.js';
import { ALL_PERMISSIONS, can, effectiveBits, isAdmin, PERM } from '../auth/permissions.js';
import type { LoginLimiter } from '../auth/login-limiter.js';
import type { Cluster } from '../cluster/index.js';
import type { ViewDeps } from '../view/deps.js';
import type { Views } from '../view/view.js';
import type { Share, SharesRepo } from '../db/shares.js';
import { ROLE_GENERAL, type User, type UsersRepo } from '../db/users.js';
import { BadRequest, Forbidden, KindError, NotFound } from '../errors.js';
import { cleanPath } from '../util/paths.js';
import { randomAlnum } from '../util/random.js';
import { ShareView, SHARE_FRONT } from '../view/share.js';
import type { ShareStreams } from './streams.js';
import type { EventOp, EventOrigin } from '../audit/events.js';
import { Recorder, resultOf } from '../audit/record.js';

export const MSG_SHARE_MISSING = 'the share does not exist';
export const MSG_SHARE_INVALID = 'the share has expired or is no longer valid';

/** A share that is missing, disabled, expired or used up (kind NotFound; OpenList answers it 500: server/api-codes.ts). */
export class ShareRefused extends KindError {
  constructor(message: string) {
    super('NotFound', message);
  }
}
export const MSG_WRONG_SHARE_CODE = 'wrong share code';
export const MSG_SHARING_NOT_FOUND = 'sharing not found';

/** 22 base62 characters: log2(62^22) ≈ 131 bits. */
export const SHARE_ID_LENGTH = 22;
const CUSTOM_ID = /^[\p{L}\p{N}_-]{1,64}$/u;
/** OpenList counts a client address once per share in this window. */
const ACCESS_WINDOW_MS = 30 * 60_000;
const ACCESS_MEMO_LIMIT = 100_000;

/** What a visitor presents: the share code, and folder passwords for protected folders inside the share. */
export interface VisitorKeys {
  code: string;
  /** Folder passwords (OpenList's `password` when the share has no code, Atrium's `folder_password`). */
  folderPasswords?: string[];
}

/** The bits that lift path rules: a visitor never holds them, whoever created the share. */
const RULE_LIFTING = PERM.SEE_HIDES | PERM.ACCESS_WITHOUT_PASSWORD;

/**
 * The principal a visitor stands for: the creator's base path and bits as they are now, without
 * the admin role and without the bits that lift hide and password rules.
 */
export function visitorPrincipal(creator: User): User {
  const bits = isAdmin(creator) ? ALL_PERMISSIONS : effectiveBits(creator);
  // The groups' roots stay (a share inside one narrows when the creator leaves it); their bits are folded in above.
  return { ...creator, role: ROLE_GENERAL, permission: bits & ~RULE_LIFTING, groups: (creator.groups ?? []).map((g) => ({ ...g, permission: 0 })) };
}

/** What a create or update asks for (OpenList's UpdateSharingReq, minus the virtual-host fields). */
export interface ShareInput {
  id?: string;
  newId?: string;
  files: string[];
  expires: number;
  pwd: string;
  maxAccessed: number;
  accessed: number;
  disabled: boolean;
  remark: string;
  readme: string;
  header: string;
  /** Admins only: create for or move to another user. */
  creator?: string;
}

/** The fields of a share a create or update sets from its input (the files checked, the creator decided). */
function inputFields(input: ShareInput, files: string[], creator: User): Omit<Share, 'id' | 'createdAt'> {
  return {
    files,
    expires: input.expires,
    pwd: input.pwd,
    accessed: Math.max(0, input.accessed),
    maxAccessed: Math.max(0, input.maxAccessed),
    creatorId: creator.id,
    disabled: input.disabled,
    remark: input.remark,
    readme: input.readme,
    header: input.header,
  };
}

/** What the shares service uses of the composition root (its visitors' views take the view's own). */
export interface ShareDeps extends ViewDeps {
  repos: { users: Pick<UsersRepo, 'byId' | 'byUsername'> };
  views: Views;
  limiter: LoginLimiter;
  cluster: Pick<Cluster, 'visits'>;
}

/**
 * Share links: who may create, see and change which share (a user their own, an admin all),
 * and the visitor's way in (`open`): validity, the share code with the login limiter, and
 * OpenList's access count (once per client address per 30 minutes, never past the limit).
 */
export class Shares {
  /** `sid:ip` → when the address was last counted, on one process (in Redis in cluster mode: firstVisit). */
  private readonly counted = new Map<string, number>();

  constructor(
    private readonly core: ShareDeps,
    private readonly repo: SharesRepo,
    /** Downloads in flight, stopped when their share is deleted, disabled or changed. */
    readonly streams: ShareStreams,
    private readonly now: () => number = Date.now,
  ) {}

  // ---- owners and admins ----

  /** A share the caller may manage (own, or any for an admin); otherwise "sharing not found". */
  async owned(caller: User, id: string): Promise<Share> {
    const s = await this.repo.byId(id);
    if (!s || (!isAdmin(caller) && s.creatorId !== caller.id)) throw new NotFound(MSG_SHARING_NOT_FOUND);
    return s;
  }

  async list(caller: User, page: number, perPage: number) {
    return this.repo.list(page, perPage, isAdmin(caller) ? undefined : caller.id);
  }

  private async creatorFor(caller: User, name: string | undefined, fallback?: User): Promise<User> {
    if (isAdmin(caller) && name) {
      const u = await this.core.repos.users.byUsername(name);
      if (!u) throw new BadRequest('no such a user');
      return u;
    }
    if (fallback && isAdmin(caller)) return fallback;
    if (!can(caller, PERM.SHARE)) throw new Forbidden('permission denied');
    return caller;
  }

  /**
   * The shared paths, cleaned; each inside the creator's base path and readable by them now
   * (hide rules, and folder passwords unless they may pass them), no two with the same name.
   */
  private async checkFiles(creator: User, files: string[]): Promise<string[]> {
    const cleaned = [...new Set(files.filter((f) => f !== '').map(cleanPath))];
    if (cleaned.length === 0) throw new BadRequest('must add at least 1 object');
    const view = this.core.views.for(creator, { front: SHARE_FRONT });
    const names = new Set<string>();
    for (const f of cleaned) {
      const name = path.posix.basename(f);
      if (names.has(name)) throw new BadRequest(`two shared objects are named [${name}]; share their folder or rename one`);
      names.add(name);
      let ok = view.contains(f);
      if (ok) ok = await view.stat(f).then(() => true, () => false);
      if (!ok) throw new Forbidden(`permission denied to share path [${f}]`);
    }
    return cleaned;
  }

  private checkId(caller: User, id: string): void {
    if (!can(caller, PERM.CUSTOM_SHARE_ID)) throw new Forbidden('permission denied');
    if (!CUSTOM_ID.test(id)) throw new BadRequest('share id can only contain letters, numbers, underscores and hyphens (at most 64)');
  }

  /** Runs one change of a share and emits its event (the share's id as the path; the caller as the user). */
  private async recorded<T extends { share: Share } | void>(op: EventOp, caller: User, id: string, origin: EventOrigin, fn: () => Promise<T>): Promise<T> {
    const rec = new Recorder(this.core.events, caller.username, origin);
    try {
      const value = await fn();
      rec.emit(op, value ? value.share.id : id, 'ok');
      return value;
    } catch (err) {
      rec.emit(op, id, resultOf(err));
      throw err;
    }
  }

  async create(caller: User, input: ShareInput, origin: EventOrigin = { front: 'api' }): Promise<{ share: Share; creator: User }> {
    return this.recorded('share_create', caller, input.id ?? '', origin, () => this.createNow(caller, input));
  }

  private async createNow(caller: User, input: ShareInput): Promise<{ share: Share; creator: User }> {
    const creator = await this.creatorFor(caller, input.creator);
    if (input.id) this.checkId(caller, input.id);
    const files = await this.checkFiles(creator, input.files);
    const id = input.id || randomAlnum(SHARE_ID_LENGTH);
    if (await this.repo.byId(id)) throw new BadRequest('share id already exists');
    const share: Share = { id, ...inputFields(input, files, creator), createdAt: this.now() };
    await this.repo.create(share);
    return { share, creator };
  }

  async update(caller: User, input: ShareInput, origin: EventOrigin = { front: 'api' }): Promise<{ share: Share; creator: User }> {
    return this.recorded('share_update', caller, input.id ?? '', origin, () => this.updateNow(caller, input));
  }

  private async updateNow(caller: User, input: ShareInput): Promise<{ share: Share; creator: User }> {
    const old = await this.owned(caller, input.id ?? '');
    const current = await this.core.repos.users.byId(old.creatorId);
    const creator = await this.creatorFor(caller, input.creator, current);
    const files = await this.checkFiles(creator, input.files);
    let id = old.id;
    if (input.newId && input.newId !== old.id) {
      this.checkId(caller, input.newId);
      if (await this.repo.byId(input.newId)) throw new BadRequest('share id already exists');
      id = input.newId;
    }
    const share: Share = { ...old, id, ...inputFields(input, files, creator) };
    await this.repo.update(share, old.id);
    this.streams.end(old.id);
    return { share, creator };
  }

  async setDisabled(caller: User, id: string, disabled: boolean): Promise<void> {
    await this.owned(caller, id);
    await this.repo.setDisabled(id, disabled);
    if (disabled) this.streams.end(id);
  }

  async delete(caller: User, id: string, origin: EventOrigin = { front: 'api' }): Promise<void> {
    await this.recorded('share_delete', caller, id, origin, async () => {
      await this.owned(caller, id);
      await this.repo.delete(id);
      this.streams.end(id);
    });
  }

  // ---- visitors ----

  /** A share's code as a stamp a grant keeps (a changed code ends it), never the code itself. */
  codeStamp(share: Share): string {
    return createHash('sha256').update(`atrium share code\0${share.id}\0${share.pwd}`).digest('base64url').slice(0, 22);
  }

  /**
   * A share as it stands now for a reader holding a grant of an earlier visit (an online
   * office's callbacks): refused when the share is gone, disabled, expired, its creator can no
   * longer share, or its code changed since (`stamp`). No code asked and no access counted:
   * the visit that gave the grant did both. No folder password: protected folders stay shut.
   */
  async revisit(sid: string, stamp: string): Promise<ShareView> {
    const share = await this.repo.byId(sid);
    if (!share) throw new ShareRefused(MSG_SHARE_MISSING);
    const creator = await this.core.repos.users.byId(share.creatorId);
    if (this.invalid(share, creator) || !safeEqual(stamp, this.codeStamp(share))) throw new ShareRefused(MSG_SHARE_INVALID);
    const creatorView = this.core.views.for(visitorPrincipal(creator!), { front: SHARE_FRONT, origin: { front: 'share' } });
    const view = new ShareView(share, creator!, creatorView, this.core);
    if (view.empty) throw new ShareRefused(MSG_SHARE_INVALID);
    return view;
  }

  /** Why a share serves nothing now, or undefined when it serves. */
  private invalid(s: Share, creator: User | undefined): boolean {
    if (s.disabled || s.files.length === 0) return true;
    if (s.maxAccessed > 0 && s.accessed >= s.maxAccessed) return true;
    if (s.expires > 0 && s.expires <= this.now()) return true;
    return !creator || creator.disabled || !can(creator, PERM.SHARE);
  }

  /**
   * A visitor's way in, on every request: the share as it is in the database now (a deletion,
   * a disabling or a change of the creator's rights takes effect at once, on every process),
   * its code (wrong codes, and wrong folder passwords, count against the client address as
   * failed logins do), then the access count.
   */
  async open(sid: string, keys: VisitorKeys, ip: string, requestId?: string): Promise<ShareView> {
    const origin: EventOrigin = { front: 'share', ip, requestId };
    try {
      const view = await this.openNow(sid, keys, ip, origin);
      new Recorder(this.core.events, view.creator.username, origin).emit('share_visit', sid, 'ok');
      return view;
    } catch (err) {
      new Recorder(this.core.events, '', origin).emit('share_visit', sid, resultOf(err));
      throw err;
    }
  }

  private async openNow(sid: string, keys: VisitorKeys, ip: string, origin: EventOrigin): Promise<ShareView> {
    if (sid === '') throw new BadRequest('invalid share id');
    const share = await this.repo.byId(sid);
    if (!share) throw new ShareRefused(MSG_SHARE_MISSING);
    const creator = await this.core.repos.users.byId(share.creatorId);
    if (this.invalid(share, creator)) throw new ShareRefused(MSG_SHARE_INVALID);
    const key = `share:${ip}`;
    // Folder passwords beyond the share code are guessed as codes are: the same counter.
    const given = (keys.folderPasswords ?? []).filter((p) => p !== '' && p !== share.pwd);
    if (share.pwd !== '' || given.length > 0) await this.core.limiter.check(key);
    if (share.pwd !== '' && !safeEqual(keys.code, share.pwd)) {
      if (keys.code !== '') await this.core.limiter.fail(key);
      throw new KindError('PasswordRequired', MSG_WRONG_SHARE_CODE);
    }
    const principal = visitorPrincipal(creator!);
    const creatorView = this.core.views.for(principal, { front: SHARE_FRONT, password: given, origin });
    const view = new ShareView(share, creator!, creatorView, this.core, () => this.core.limiter.fail(key), given.length > 0);
    if (view.empty) throw new ShareRefused(MSG_SHARE_INVALID);
    await this.countAccess(share, ip);
    return view;
  }

  /** Counts a client address once per window; refuses when the count reached the limit meanwhile. */
  private async countAccess(share: Share, ip: string): Promise<void> {
    const key = `${share.id}:${ip}`;
    if (!(await this.firstVisit(key))) return;
    let ok = false;
    try {
      ok = await this.repo.countAccess(share.id);
    } finally {
      if (!ok) await this.forgetVisit(key);
    }
    if (!ok) throw new ShareRefused(MSG_SHARE_INVALID);
  }

  /**
   * Is this the address's first visit of the window: in Redis for every process in cluster mode
   * (this process's memory while Redis is unreachable), in memory on one process.
   */
  private async firstVisit(key: string): Promise<boolean> {
    const shared = this.core.cluster.visits;
    if (shared) {
      try {
        return await shared.first(key, ACCESS_WINDOW_MS);
      } catch (err) {
        this.core.log.warn({ err: (err as Error).message }, 'share visits: Redis unreachable, counting on this process');
      }
    }
    const t = this.now();
    const last = this.counted.get(key);
    if (last !== undefined && t - last < ACCESS_WINDOW_MS) return false;
    this.counted.set(key, t);
    if (this.counted.size > ACCESS_MEMO_LIMIT) this.prune(t);
    return true;
  }

  private async forgetVisit(key: string): Promise<void> {
    this.counted.delete(key);
    await this.core.cluster.visits?.forget(key).catch(() => undefined);
  }

  private prune(t: number): void {
    for (const [k, at] of this.counted) {
      if (t - at >= ACCESS_WINDOW_MS || this.counted.size > ACCESS_MEMO_LIMIT / 2) this.counted.delete(k);
      else break;
    }
  }
}
