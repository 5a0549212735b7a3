import { TooManyRequests } from '../errors.js';

export const TOO_MANY_ATTEMPTS =
  'Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.';

interface Entry {
  failures: number;
  /** 0 while not locked; otherwise the time the lock ends. */
  lockedUntil: number;
}

/**
 * Where the processes of a cluster count failures together (cluster mode: Redis). A counter per
 * address lives `lockMs` after its last failure or refused attempt. A store that fails (Redis
 * unreachable) throws; the limiter then decides on this process's own counts.
 */
export interface FailureStore {
  /** The failures counted for this address (0 when none). */
  count(ip: string): Promise<number>;
  /** Counts one failure; resolves with the count after it. The counter lives `ttlMs` from now. */
  add(ip: string, ttlMs: number): Promise<number>;
  /** The counter lives `ttlMs` from now (an attempt while locked extends the lock). */
  extend(ip: string, ttlMs: number): Promise<void>;
  clear(ip: string): Promise<void>;
}

/**
 * Failed-login counter per client IP (wire-api.md §3.6): at 5 failures the IP is locked for
 * 5 minutes, and every attempt while locked extends the lock. Success clears the entry. Every
 * front that checks a password or a signature calls it (API logins, WebDAV/SFTP/FTP through
 * `Accounts.checkPassword`, S3 signatures, passkeys, 2FA codes). On one process the counts are
 * in memory (no I/O); in cluster mode they are also in the shared store, so failures from one
 * address count on every process (docs/access-and-security.md).
 */
export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();
  private store: FailureStore | undefined;
  /** Addresses whose shared counter may be non-zero (a success clears it only then). */
  private readonly sharedDirty = new Set<string>();
  onStoreError: (err: unknown) => void = () => {};

  constructor(
    private readonly maxFailures = 5,
    private readonly lockMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Cluster mode: count in the shared store too (set once, when the cluster starts). */
  useStore(store: FailureStore): void {
    this.store = store;
  }

  /** Throws 429 if this IP is locked here or in the shared store (and extends the lock). */
  async check(ip: string): Promise<void> {
    this.checkLocal(ip);
    if (!this.store) return;
    let n: number;
    try {
      n = await this.store.count(ip);
    } catch (err) {
      this.onStoreError(err);
      return;
    }
    if (n === 0) return;
    this.sharedDirty.add(ip);
    if (n < this.maxFailures) return;
    await this.store.extend(ip, this.lockMs).catch((err) => this.onStoreError(err));
    throw new TooManyRequests(TOO_MANY_ATTEMPTS);
  }

  private checkLocal(ip: string): void {
    const e = this.entries.get(ip);
    if (!e || e.failures < this.maxFailures) return;
    const t = this.now();
    if (e.lockedUntil !== 0 && e.lockedUntil <= t) {
      this.entries.delete(ip);
      return;
    }
    e.lockedUntil = t + this.lockMs;
    throw new TooManyRequests(TOO_MANY_ATTEMPTS);
  }

  async fail(ip: string): Promise<void> {
    const e = this.entries.get(ip) ?? { failures: 0, lockedUntil: 0 };
    e.failures++;
    if (e.failures >= this.maxFailures) e.lockedUntil = this.now() + this.lockMs;
    this.entries.set(ip, e);
    if (this.entries.size > 100_000) this.prune();
    if (!this.store) return;
    this.sharedDirty.add(ip);
    await this.store.add(ip, this.lockMs).catch((err) => this.onStoreError(err));
  }

  async succeed(ip: string): Promise<void> {
    this.entries.delete(ip);
    if (!this.store || !this.sharedDirty.delete(ip)) return;
    await this.store.clear(ip).catch((err) => this.onStoreError(err));
  }

  /** Bounded memory under a spray of addresses: drop expired locks and the oldest counters. */
  private prune(): void {
    const t = this.now();
    this.sharedDirty.clear();
    for (const [ip, e] of this.entries) {
      if ((e.lockedUntil !== 0 && e.lockedUntil <= t) || e.failures < this.maxFailures) this.entries.delete(ip);
      if (this.entries.size <= 50_000) break;
    }
  }
}
