import type { Selectable } from 'kysely';
import type { DbHandle } from './index.js';
import { withDbMutex } from './mutex.js';
import type { DavLocksTable } from './schema.js';

export interface LockRow {
  token: string;
  /** Virtual path the lock was taken on. */
  root: string;
  depth: '0' | 'infinity';
  scope: 'exclusive' | 'shared';
  /** The `<D:owner>` element as the client sent it (echoed back verbatim). */
  owner: string;
  /** Seconds. */
  timeout: number;
  expires: number;
  /** The user who took it: only they can submit its token or unlock it (RFC 4918 §6.4). */
  userId: number;
}

/** WebDAV locks (migration 20), shared by every process on the database. */
export class DavLocksRepo {
  constructor(private readonly h: DbHandle) {}

  /** The locks not yet expired at `now`. */
  async live(now: number): Promise<LockRow[]> {
    return (await this.h.db.selectFrom('dav_locks').selectAll().where('expires', '>', now).execute()).map(lockFrom);
  }

  /**
   * Inserts `l` unless `conflict` finds, among the locks live at `now`, one it clashes with (then
   * answers that one): read and insert hold a database-wide lock, so two processes taking
   * clashing locks at once cannot both succeed.
   */
  async insertUnlessConflict(l: LockRow, now: number, conflict: (live: LockRow[]) => LockRow | undefined): Promise<LockRow | undefined> {
    return withDbMutex(this.h, 'dav_locks', async (trx) => {
      const live = (await trx.selectFrom('dav_locks').selectAll().where('expires', '>', now).execute()).map(lockFrom);
      const clash = conflict(live);
      if (clash) return clash;
      await trx
        .insertInto('dav_locks')
        .values({ token: l.token, root: l.root, depth: l.depth, scope: l.scope, owner: l.owner, timeout: l.timeout, expires: l.expires, user_id: l.userId })
        .execute();
      return undefined;
    });
  }

  async setExpiry(token: string, timeout: number, expires: number): Promise<void> {
    await this.h.db.updateTable('dav_locks').set({ timeout, expires }).where('token', '=', token).execute();
  }

  /**
   * Changes a live lock's owner, root or expiry only if its owner is still `owner` (one
   * statement: atomic against every process); false when it was not.
   */
  async updateIfOwner(token: string, owner: string, now: number, set: Partial<Pick<LockRow, 'owner' | 'root' | 'timeout' | 'expires'>>): Promise<boolean> {
    const r = await this.h.db
      .updateTable('dav_locks')
      .set(set)
      .where('token', '=', token)
      .where('owner', '=', owner)
      .where('expires', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(tokens: string[]): Promise<void> {
    if (tokens.length === 0) return;
    await this.h.db.deleteFrom('dav_locks').where('token', 'in', tokens).execute();
  }

  /** Drops the locks expired at `now`. */
  async sweep(now: number): Promise<void> {
    await this.h.db.deleteFrom('dav_locks').where('expires', '<=', now).execute();
  }
}

function lockFrom(r: Selectable<DavLocksTable>): LockRow {
  return {
    token: r.token,
    root: r.root,
    depth: r.depth === '0' ? '0' : 'infinity',
    scope: r.scope === 'shared' ? 'shared' : 'exclusive',
    owner: r.owner,
    timeout: Number(r.timeout),
    expires: Number(r.expires),
    userId: Number(r.user_id),
  };
}
