import { TooManyRequests } from '../errors.js';

export const TOO_MANY_ATTEMPTS =
  'Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.';

interface Entry {
  failures: number;
  /** 0 while not locked; otherwise the time the lock ends. */
  lockedUntil: number;
}

/**
 * Failed-login counter per client IP (wire-api.md §3.6): at 5 failures the IP is locked for
 * 5 minutes, and every attempt while locked extends the lock. Success clears the entry.
 */
export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxFailures = 5,
    private readonly lockMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws 429 if this IP is locked (and extends the lock). */
  check(ip: string): void {
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

  fail(ip: string): void {
    const e = this.entries.get(ip) ?? { failures: 0, lockedUntil: 0 };
    e.failures++;
    if (e.failures >= this.maxFailures) e.lockedUntil = this.now() + this.lockMs;
    this.entries.set(ip, e);
    if (this.entries.size > 100_000) this.prune();
  }

  succeed(ip: string): void {
    this.entries.delete(ip);
  }

  /** Bounded memory under a spray of addresses: drop expired locks and the oldest counters. */
  private prune(): void {
    const t = this.now();
    for (const [ip, e] of this.entries) {
      if ((e.lockedUntil !== 0 && e.lockedUntil <= t) || e.failures < this.maxFailures) this.entries.delete(ip);
      if (this.entries.size <= 50_000) break;
    }
  }
}
