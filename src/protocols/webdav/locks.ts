import { randomUUID } from 'node:crypto';

export interface Lock {
  token: string;
  /** Virtual path the lock was taken on. */
  root: string;
  depth: '0' | 'infinity';
  scope: 'exclusive' | 'shared';
  /** The `<D:owner>` element as the client sent it (echoed back verbatim). */
  owner: string;
  /** Seconds; 0 = infinite. */
  timeout: number;
  expires: number;
  /** The user who took it: only they can submit its token or unlock it (RFC 4918 §6.4). */
  userId: number;
}

/** Longest lock Atrium grants, whatever the client asks ("Infinite" included). */
const MAX_TIMEOUT_S = 7 * 24 * 3600;
const DEFAULT_TIMEOUT_S = 3600;

const isUnder = (p: string, root: string) => p === root || p.startsWith(root === '/' ? '/' : `${root}/`);

/** `Timeout: Second-600, Infinite` → seconds (the first value Atrium can honour). */
export function parseTimeout(header: string | undefined): number {
  for (const part of (header ?? '').split(',').map((s) => s.trim())) {
    if (/^infinite$/i.test(part)) return MAX_TIMEOUT_S;
    const m = /^second-(\d+)$/i.exec(part);
    if (m) return Math.max(1, Math.min(Number(m[1]), MAX_TIMEOUT_S));
  }
  return DEFAULT_TIMEOUT_S;
}

/**
 * WebDAV write locks (RFC 4918 §6–7), in memory as the original's: exclusive and shared, depth 0
 * or infinity, with timeouts. A lock covers its root and, at depth infinity, everything below.
 */
export class LockManager {
  private readonly locks = new Map<string, Lock>();

  private sweep(): void {
    const now = Date.now();
    for (const [token, l] of this.locks) if (l.expires <= now) this.locks.delete(token);
  }

  isEmpty(): boolean {
    this.sweep();
    return this.locks.size === 0;
  }

  /** Locks that cover a path: on it, or on an ancestor at depth infinity. */
  covering(p: string): Lock[] {
    this.sweep();
    return [...this.locks.values()].filter((l) => l.root === p || (l.depth === 'infinity' && isUnder(p, l.root)));
  }

  /** Locks on a path or anything below it. */
  within(p: string): Lock[] {
    this.sweep();
    return [...this.locks.values()].filter((l) => isUnder(l.root, p));
  }

  get(token: string): Lock | undefined {
    this.sweep();
    return this.locks.get(token);
  }

  /** Takes a lock, or answers the lock it conflicts with. */
  create(root: string, opts: Pick<Lock, 'depth' | 'scope' | 'owner' | 'timeout' | 'userId'>): { lock?: Lock; conflict?: Lock } {
    const candidates = [...this.covering(root), ...(opts.depth === 'infinity' ? this.within(root) : [])];
    const conflict = candidates.find((l) => l.scope === 'exclusive' || opts.scope === 'exclusive');
    if (conflict) return { conflict };
    const lock: Lock = { ...opts, root, token: `opaquelocktoken:${randomUUID()}`, expires: Date.now() + opts.timeout * 1000 };
    this.locks.set(lock.token, lock);
    return { lock };
  }

  refresh(token: string, timeout: number): Lock | undefined {
    const l = this.get(token);
    if (!l) return undefined;
    l.timeout = timeout;
    l.expires = Date.now() + timeout * 1000;
    return l;
  }

  /** Releases a lock that covers `p`; false when there is none with this token. */
  unlock(p: string, token: string): boolean {
    const l = this.get(token);
    if (!l || !(l.root === p || (l.depth === 'infinity' && isUnder(p, l.root)))) return false;
    this.locks.delete(token);
    return true;
  }

  /** Drops the locks on a path and below (it was deleted or moved away). */
  forget(p: string): void {
    for (const l of this.within(p)) this.locks.delete(l.token);
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
