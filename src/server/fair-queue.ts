/** One principal's requests: how many run, and the ones waiting for a slot (oldest first). */
interface Lane {
  key: string;
  active: number;
  waiting: Waiter[];
  /** In the ring of lanes with waiters. */
  ringed: boolean;
}

interface Waiter {
  lane: Lane;
  grant: (release: (() => void) | undefined) => void;
  timer?: NodeJS.Timeout;
}

export interface FairLimits {
  /** Requests one key may have running at once (0: no limit). */
  perKey(key: string): number;
  /** Requests running at once in all (0: no limit). */
  total(): number;
  /** How long a request may wait for its slot, ms; past it the wait ends with no slot. */
  waitMs(): number;
  /** Requests one key may have waiting; past it a request gets no slot at once. */
  maxWaiting(): number;
}

/**
 * Slots for requests, bounded per key (a principal: one user, one visitor address) and in all,
 * handed out fairly: a key past its own bound waits in its own queue, and when slots free up the
 * queues are served round-robin, one request each in turn, so one key's storm of requests waits
 * behind itself while every other key's requests go ahead. A wait is bounded (`waitMs`,
 * `maxWaiting`): then the caller gets no slot and answers "try again later".
 */
export class FairQueue {
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with waiters, in the order they are served. */
  private readonly ring: Lane[] = [];
  private running = 0;

  constructor(private readonly limits: FairLimits) {}

  /** Requests running now (in all, or of one key). */
  active(key?: string): number {
    return key === undefined ? this.running : (this.lanes.get(key)?.active ?? 0);
  }

  /** Requests waiting now (in all, or of one key). */
  waiting(key?: string): number {
    if (key !== undefined) return this.lanes.get(key)?.waiting.length ?? 0;
    let n = 0;
    for (const lane of this.ring) n += lane.waiting.length;
    return n;
  }

  /**
   * A slot for a request of `key`, at once when one is free (a function, no promise), else a
   * promise of one. The slot is given back by calling the release function once; undefined: the
   * wait ran out (or too many of this key wait, or `cancel` was called before a slot came).
   */
  acquire(key: string, cancel?: (abort: () => void) => void): (() => void) | Promise<(() => void) | undefined> | undefined {
    const lane = this.lane(key);
    if (lane.waiting.length === 0 && this.fits(lane)) return this.take(lane);
    if (lane.waiting.length >= Math.max(1, this.limits.maxWaiting())) {
      this.dropIfIdle(lane);
      return undefined;
    }
    return new Promise((resolve) => {
      const waiter: Waiter = { lane, grant: resolve };
      lane.waiting.push(waiter);
      if (!lane.ringed) {
        lane.ringed = true;
        this.ring.push(lane);
      }
      const wait = this.limits.waitMs();
      if (wait > 0) waiter.timer = setTimeout(() => this.leave(waiter), wait);
      cancel?.(() => this.leave(waiter));
    });
  }

  private lane(key: string): Lane {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, active: 0, waiting: [], ringed: false };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private fits(lane: Lane): boolean {
    const per = this.limits.perKey(lane.key);
    const total = this.limits.total();
    return (per <= 0 || lane.active < per) && (total <= 0 || this.running < total);
  }

  private take(lane: Lane): () => void {
    lane.active++;
    this.running++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      lane.active--;
      this.running--;
      this.pump();
      this.dropIfIdle(lane);
    };
  }

  /** A waiter that gives up (timeout, cancel) before its slot came. */
  private leave(waiter: Waiter): void {
    const { lane } = waiter;
    const at = lane.waiting.indexOf(waiter);
    if (at < 0) return;
    lane.waiting.splice(at, 1);
    clearTimeout(waiter.timer);
    if (lane.waiting.length === 0) this.unring(lane);
    waiter.grant(undefined);
    this.dropIfIdle(lane);
  }

  /** Hands free slots to waiting lanes, one request per lane per turn. */
  private pump(): void {
    let idle = 0;
    while (this.ring.length > 0 && idle < this.ring.length) {
      const total = this.limits.total();
      if (total > 0 && this.running >= total) break;
      const lane = this.ring.shift()!;
      // At its own bound: its turn passes to the next lane.
      if (!this.fits(lane)) {
        this.ring.push(lane);
        idle++;
        continue;
      }
      idle = 0;
      const waiter = lane.waiting.shift()!;
      clearTimeout(waiter.timer);
      if (lane.waiting.length > 0) this.ring.push(lane);
      else lane.ringed = false;
      waiter.grant(this.take(lane));
    }
  }

  private unring(lane: Lane): void {
    const at = this.ring.indexOf(lane);
    if (at >= 0) this.ring.splice(at, 1);
    lane.ringed = false;
  }

  private dropIfIdle(lane: Lane): void {
    if (lane.active === 0 && lane.waiting.length === 0 && this.lanes.get(lane.key) === lane) this.lanes.delete(lane.key);
  }
}
