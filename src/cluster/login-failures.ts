import type { Redis } from 'ioredis';
import type { FailureStore } from '../auth/login-limiter.js';

/**
 * The login throttle's counters shared by every process (cluster mode): one Redis key per
 * address, `<key_prefix>login-fail:<ip>`, an INCR with a PEXPIRE of the lock's length. The
 * connection has no offline queue: while Redis is unreachable a command fails at once and the
 * limiter decides on the process's own counts instead of waiting.
 */
export class RedisFailureStore implements FailureStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(ip: string): string {
    return `${this.prefix}login-fail:${ip}`;
  }

  async count(ip: string): Promise<number> {
    const v = await this.redis.get(this.key(ip));
    return v === null ? 0 : Number(v) || 0;
  }

  async add(ip: string, ttlMs: number): Promise<number> {
    const res = await this.redis.multi().incr(this.key(ip)).pexpire(this.key(ip), ttlMs).exec();
    const err = res?.find(([e]) => e)?.[0];
    if (err) throw err;
    return Number(res?.[0]?.[1] ?? 0);
  }

  async extend(ip: string, ttlMs: number): Promise<void> {
    await this.redis.pexpire(this.key(ip), ttlMs);
  }

  async clear(ip: string): Promise<void> {
    await this.redis.del(this.key(ip));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/**
 * Redis first, the database behind it: every failure is counted in both (failures are rare and
 * each already cost a password hash), a success clears both, and the count is Redis's — or,
 * while Redis is unreachable, the database's, which holds every process's failures too. So a
 * Redis outage neither resets an address's count nor splits it per process. Fails only when
 * both do (the limiter then decides on this process's own counts).
 */
export class MirroredFailureStore implements FailureStore {
  constructor(
    private readonly redis: FailureStore,
    private readonly db: FailureStore,
    private readonly onRedisError: (err: unknown) => void,
  ) {}

  async count(ip: string): Promise<number> {
    try {
      return await this.redis.count(ip);
    } catch (err) {
      this.onRedisError(err);
      return this.db.count(ip);
    }
  }

  async add(ip: string, ttlMs: number): Promise<number> {
    const [r, d] = await Promise.allSettled([this.redis.add(ip, ttlMs), this.db.add(ip, ttlMs)]);
    if (r.status === 'fulfilled') return d.status === 'fulfilled' ? Math.max(r.value, d.value) : r.value;
    this.onRedisError(r.reason);
    if (d.status === 'fulfilled') return d.value;
    throw d.reason;
  }

  async extend(ip: string, ttlMs: number): Promise<void> {
    await this.both((s) => s.extend(ip, ttlMs));
  }

  async clear(ip: string): Promise<void> {
    await this.both((s) => s.clear(ip));
  }

  private async both(op: (s: FailureStore) => Promise<void>): Promise<void> {
    const [r, d] = await Promise.allSettled([op(this.redis), op(this.db)]);
    if (r.status === 'rejected') this.onRedisError(r.reason);
    if (r.status === 'rejected' && d.status === 'rejected') throw d.reason;
  }
}
