import type { User } from '../db/users.js';
import { Unauthorized } from '../errors.js';

export const MSG_SESSION_USER_GONE = 'failed find user: record not found';
export const MSG_SESSION_USER_DISABLED = 'Current user is disabled, replace please';
export const MSG_SESSION_PASSWORD_CHANGED = 'Password has been changed, login please';

/** Where a live view reads its principal again: the users repository (cached for ~2 s, dropped on every change here and on the cluster bus). */
export interface PrincipalSource {
  byId(id: number): Promise<User | undefined>;
}

/**
 * What a long-lived front holds instead of a user record (an SFTP or FTP session, a task, a
 * resumable upload): a reference to its principal. `now()` re-derives the view from the account
 * as it is at that moment, so a disabled, deleted or re-passworded user is refused at the next
 * operation (`Unauthorized`: the front ends the session), and a narrowed base path, removed bits
 * or a new rule apply to it. Cheap: the user comes from the auth cache, and the view is rebuilt
 * only when the record changed.
 */
export class LiveView<V> {
  private last?: { user: User; view: V };

  constructor(
    private readonly users: PrincipalSource,
    private readonly make: (user: User) => V,
    readonly userId: number,
    /** The password stamp at login: a later password change ends the session. */
    private readonly pwdTs: number | undefined,
    /** A front's own condition on the account (SFTP/FTP: the FTP/SFTP read bit); a text ends the session. */
    private readonly admit?: (user: User) => string | undefined,
  ) {}

  /** The principal's account as it is now; throws `Unauthorized` when the session must end. */
  async user(): Promise<User> {
    const user = await this.users.byId(this.userId);
    if (!user) throw new Unauthorized(MSG_SESSION_USER_GONE);
    if (user.disabled) throw new Unauthorized(MSG_SESSION_USER_DISABLED);
    if (this.pwdTs !== undefined && user.pwdTs !== this.pwdTs) throw new Unauthorized(MSG_SESSION_PASSWORD_CHANGED);
    const refused = this.admit?.(user);
    if (refused) throw new Unauthorized(refused);
    return user;
  }

  /** The view of the principal as the account and rules are now. */
  async now(): Promise<V> {
    const user = await this.user();
    if (this.last && sameAccount(this.last.user, user)) return this.last.view;
    const view = this.make(user);
    this.last = { user, view };
    return view;
  }
}

/** The fields a view is built from (rules are read live from the metas service, so they need no rebuild). */
function sameAccount(a: User, b: User): boolean {
  return a.basePath === b.basePath && a.permission === b.permission && a.role === b.role && a.username === b.username && treeKey(a) === treeKey(b);
}

/** The user's roots, quotas, limits and groups (bits, roots, quotas, limits), which the view's tree, rights and quotas are made of. */
const treeKey = (u: User): string =>
  JSON.stringify([u.roots ?? [], u.quotaBytes ?? 0, u.quotaFiles ?? 0, u.limits, (u.groups ?? []).map((g) => [g.id, g.permission, g.roots, g.quotaBytes, g.quotaFiles, g.limits])]);
