import type { Readable } from 'node:stream';
import { effectiveLimits } from '../auth/limits.js';
import type { User } from '../db/users.js';
import { TooManyRequests } from '../errors.js';
import { Throttle, throttled } from '../net/speed-limit.js';

export type Direction = 'up' | 'down';

export const tooManyTransfers = (max: number) => `too many transfers: this account may run ${max} at a time`;

/** How often a running transfer reads its account's limits again (an admin's change reaches it). */
const LIMITS_RECHECK_MS = 1000;

/**
 * One account's limits as they run (docs/access-and-security.md, limits): an upload and a
 * download rate shared by all of the user's transfers on every front (one Throttle each), and
 * the transfers in flight against `max_transfers`.
 */
export class Meter {
  readonly up = new Throttle();
  readonly down = new Throttle();
  private inFlight = 0;
  private maxTransfers = 0;
  private checkedAt = 0;

  constructor(
    readonly userId: number,
    private readonly lookup: (id: number) => Promise<User | undefined>,
    private readonly idle: (m: Meter) => void,
  ) {}

  /** Takes the limits of the account as it is now. */
  apply(user: Pick<User, 'limits' | 'groups'>): void {
    const l = effectiveLimits(user);
    this.up.setRate(l.uploadRate);
    this.down.setRate(l.downloadRate);
    this.maxTransfers = l.maxTransfers;
    this.checkedAt = Date.now();
  }

  /** Reads the account again once the last read is older than LIMITS_RECHECK_MS (from the auth cache). */
  private refresh(): void {
    if (Date.now() - this.checkedAt < LIMITS_RECHECK_MS) return;
    this.checkedAt = Date.now();
    this.lookup(this.userId).then(
      (u) => u && this.apply(u),
      () => undefined,
    );
  }

  get transfers(): number {
    return this.inFlight;
  }

  /** A transfer begins: refused beyond `max_transfers`; the answer ends it (once, however often called). */
  begin(): () => void {
    if (this.maxTransfers > 0 && this.inFlight >= this.maxTransfers) throw new TooManyRequests(tooManyTransfers(this.maxTransfers));
    this.inFlight++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.inFlight === 0) this.idle(this);
    };
  }

  limited(dir: Direction): boolean {
    return this.throttle(dir).limited;
  }

  throttle(dir: Direction): Throttle {
    this.refresh();
    return dir === 'up' ? this.up : this.down;
  }

  /** `stream` paced by the account's rate of `dir` (the stream itself when there is none). */
  paced<T extends Readable>(stream: T, dir: Direction): T | Readable {
    const t = this.throttle(dir);
    if (!t.limited) return stream;
    return throttled(stream, t) as Readable;
  }

  /** How long `n` bytes of `dir` must wait (ms) for the account's rate (SFTP's write answers). */
  delayFor(n: number, dir: Direction): number {
    return this.throttle(dir).delayFor(n);
  }
}

/**
 * The meters of the accounts with a transfer running, by user id: the rate of one user is one
 * Throttle whatever the front; a meter with nothing in flight is forgotten (its rate is read
 * afresh from the account at the next transfer).
 */
export class AccountMeters {
  private readonly byUser = new Map<number, Meter>();

  constructor(private readonly lookup: (id: number) => Promise<User | undefined>) {}

  /** The meter of `user`, with the limits of the record given (the view's account as it is now). */
  of(user: Pick<User, 'id' | 'limits' | 'groups'>): Meter {
    let m = this.byUser.get(user.id);
    if (!m) {
      m = new Meter(user.id, this.lookup, (idle) => {
        if (this.byUser.get(idle.userId) === idle) this.byUser.delete(idle.userId);
      });
      this.byUser.set(user.id, m);
    }
    m.apply(user);
    return m;
  }

  /** Transfers in flight of a user (0 when none). */
  transfers(userId: number): number {
    return this.byUser.get(userId)?.transfers ?? 0;
  }
}
