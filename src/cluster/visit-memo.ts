import type { Redis } from 'ioredis';

/** Addresses remembered for a while, shared by every process (share visitors counted once per window). */
export interface VisitMemo {
  /** True when `key` was not remembered (it is now, for `ttlMs`); false when it was. */
  first(key: string, ttlMs: number): Promise<boolean>;
  forget(key: string): Promise<void>;
}

/** One Redis key per remembered visit, `<key_prefix>visit:<key>`, taken with SET NX PX. */
export class RedisVisitMemo implements VisitMemo {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async first(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${this.prefix}visit:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  async forget(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}visit:${key}`);
  }
}
