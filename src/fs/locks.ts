import { randomUUID } from 'node:crypto';
import type { DavLocksRepo, LockRow } from '../db/dav-locks.js';

export type Lock = LockRow;

export const MSG_LOCKED = 'file is locked';

const isUnder = (p: string, root: string) => p === root || p.startsWith(root === '/' ? '/' : `${root}/`);

/**
 * The live locks at one moment, read synchronously (RFC 4918 §6–7): exclusive and shared, depth
 * 0 or infinity. A lock covers its root and, at depth infinity, everything below.
 */
export class LockSet {
  constructor(private readonly locks: Lock[]) {}

  isEmpty(): boolean {
    return this.locks.length === 0;
  }

  /** Locks that cover a path: on it, or on an ancestor at depth infinity. */
  covering(p: string): Lock[] {
    return this.locks.filter((l) => l.root === p || (l.depth === 'infinity' && isUnder(p, l.root)));
  }

  /** Locks on a path or anything below it. */
  within(p: string): Lock[] {
    return this.locks.filter((l) => isUnder(l.root, p));
  }

  get(token: string): Lock | undefined {
    return this.locks.find((l) => l.token === token);
  }

  /**
   * The locks a change of `p` runs into and that none of `tokens` unlocks. With `deep` (deleting or
   * moving a folder) the locks below count too.
   */
  blocking(p: string, tokens: ReadonlySet<string>, deep: boolean): Lock[] {
    const relevant = [...new Set([...this.covering(p), ...(deep ? this.within(p) : [])])];
    // Shared locks are held side by side: the token of any one of them lets its holder write.
    const sharedHeld = relevant.some((l) => l.scope === 'shared' && tokens.has(l.token));
    return relevant.filter((l) => !tokens.has(l.token) && !(sharedHeld && l.scope === 'shared'));
  }
}

/**
 * WebDAV locks in the database (table dav_locks), so that they survive a restart and, in cluster
 * mode, every process sees them. They protect a file on every front: WebDAV checks the tokens a
 * request submits; the view refuses any other write to a locked path (`file is locked`).
 * One process (`shared` false) reads the table once and keeps it in memory, writing each change
 * through; several processes read the live locks at each decision (one small query).
 */
export class FileLocks {
  private mine: Lock[] | undefined;
  private loading: Promise<Lock[]> | undefined;
  /** This process's lock creations, one after another. */
  private creating: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: DavLocksRepo,
    private readonly shared: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** The locks live now; expired ones are ignored (and swept at the next lock taken). */
  async current(): Promise<LockSet> {
    const t = this.now();
    if (this.shared) return new LockSet(await this.repo.live(t));
    if (!this.mine) {
      this.loading ??= this.repo.live(t);
      this.mine = await this.loading;
    }
    this.mine = this.mine.filter((l) => l.expires > t);
    return new LockSet(this.mine);
  }

  /**
   * Takes a lock, or answers the lock it conflicts with. Atomic: the check and the insert hold a
   * database-wide lock (every process), and one process takes its locks one at a time.
   */
  create(root: string, opts: Pick<Lock, 'depth' | 'scope' | 'owner' | 'timeout' | 'userId'>): Promise<{ lock?: Lock; conflict?: Lock }> {
    const run = this.creating.then(async () => {
      const t = this.now();
      await this.repo.sweep(t);
      const lock: Lock = { ...opts, root, token: `opaquelocktoken:${randomUUID()}`, expires: t + opts.timeout * 1000 };
      const conflict = await this.repo.insertUnlessConflict(lock, t, (live) => {
        const set = new LockSet(live);
        const candidates = [...set.covering(root), ...(opts.depth === 'infinity' ? set.within(root) : [])];
        return candidates.find((l) => l.scope === 'exclusive' || opts.scope === 'exclusive');
      });
      if (conflict) return { conflict };
      this.mine?.push(lock);
      return { lock };
    });
    this.creating = run.catch(() => undefined);
    return run;
  }

  async refresh(lock: Lock, timeout: number): Promise<Lock> {
    const expires = this.now() + timeout * 1000;
    await this.repo.setExpiry(lock.token, timeout, expires);
    const kept = this.mine?.find((l) => l.token === lock.token);
    if (kept) Object.assign(kept, { timeout, expires });
    return { ...lock, timeout, expires };
  }

  /**
   * Changes a lock whose owner is still `lock.owner` (WOPI: a new lock id replacing the old one,
   * the lock following a renamed file, a refresh by its holder): atomic in the database, so of
   * two processes replacing the same owner one wins. `timeout` restarts the expiry. Answers the
   * changed lock, or undefined when the owner had changed (or the lock expired) meanwhile.
   */
  async update(lock: Lock, changes: { owner?: string; root?: string; timeout?: number }): Promise<Lock | undefined> {
    const t = this.now();
    const timing = changes.timeout === undefined ? {} : { timeout: changes.timeout, expires: t + changes.timeout * 1000 };
    const set = { ...(changes.owner === undefined ? {} : { owner: changes.owner }), ...(changes.root === undefined ? {} : { root: changes.root }), ...timing };
    const kept = this.mine?.find((l) => l.token === lock.token);
    if (!(await this.repo.updateIfOwner(lock.token, lock.owner, t, set))) {
      // Expired, or changed by another process: this process's copy of it is stale.
      if (kept && kept.owner === lock.owner && this.mine) this.mine = this.mine.filter((l) => l !== kept);
      return undefined;
    }
    if (kept) Object.assign(kept, set);
    return { ...lock, ...set };
  }

  /** Releases a lock that covers `p`; false when there is none with this token. */
  async unlock(p: string, token: string): Promise<boolean> {
    const l = (await this.current()).get(token);
    if (!l || !(l.root === p || (l.depth === 'infinity' && isUnder(p, l.root)))) return false;
    await this.drop([token]);
    return true;
  }

  /** Drops the locks on a path and below (it was deleted or moved away). */
  async forget(p: string): Promise<void> {
    await this.drop((await this.current()).within(p).map((l) => l.token));
  }

  private async drop(tokens: string[]): Promise<void> {
    if (tokens.length === 0) return;
    await this.repo.delete(tokens);
    if (this.mine) this.mine = this.mine.filter((l) => !tokens.includes(l.token));
  }
}
