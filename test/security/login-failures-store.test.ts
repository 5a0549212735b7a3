import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FailureStore } from '../../src/auth/login-limiter.js';
import { LoginLimiter } from '../../src/auth/login-limiter.js';
import { MirroredFailureStore } from '../../src/cluster/login-failures.js';
import { DbFailureStore } from '../../src/db/login-failures.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** A store standing for Redis: a map, or every call failing while `down`. */
class FakeRedis implements FailureStore {
  down = false;
  readonly counts = new Map<string, number>();
  private up(): void {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
  }
  async count(ip: string) {
    this.up();
    return this.counts.get(ip) ?? 0;
  }
  async add(ip: string) {
    this.up();
    const n = (this.counts.get(ip) ?? 0) + 1;
    this.counts.set(ip, n);
    return n;
  }
  async extend() {
    this.up();
  }
  async clear(ip: string) {
    this.up();
    this.counts.delete(ip);
  }
}

describe.each(BACKENDS)('the login throttle\'s database counters on $name', (backend) => {
  let s: TestServer;
  let clock = 1_000_000;
  const now = () => clock;
  let store: DbFailureStore;
  beforeAll(async () => {
    s = await startServer(backend);
    store = new DbFailureStore(s.core.db, now);
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('counts per address, expires after the lock, restarts from one, and clears', async () => {
    expect(await store.count('10.0.0.1')).toBe(0);
    expect(await store.add('10.0.0.1', 1000)).toBe(1);
    expect(await store.add('10.0.0.1', 1000)).toBe(2);
    expect(await store.add('10.0.0.2', 1000)).toBe(1);
    expect(await store.count('10.0.0.1')).toBe(2);
    clock += 999;
    await store.extend('10.0.0.1', 1000);
    clock += 999;
    expect(await store.count('10.0.0.1')).toBe(2); // extended
    expect(await store.count('10.0.0.2')).toBe(0); // expired
    expect(await store.add('10.0.0.2', 1000)).toBe(1); // an expired row counts from one again
    await store.clear('10.0.0.1');
    expect(await store.count('10.0.0.1')).toBe(0);
  });

  it('concurrent failures of one address from several processes are all counted', async () => {
    const other = new DbFailureStore(s.core.db, now); // another process on the same database
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? store : other).add('10.0.0.3', 60_000)));
    expect(await store.count('10.0.0.3')).toBe(10);
  });

  it('expired rows are swept', async () => {
    await store.add('10.0.0.4', 10);
    clock += 100;
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    const left = await s.core.db.db.selectFrom('login_failures').select('ip').where('expires', '<=', clock).execute();
    expect(left).toEqual([]);
  });

  it('mirrored behind Redis: an outage keeps the count every process wrote, and a lock holds through it', async () => {
    const redis = new FakeRedis();
    const errors: unknown[] = [];
    const a = new LoginLimiter(5, 60_000, now);
    const b = new LoginLimiter(5, 60_000, now);
    a.useStore(new MirroredFailureStore(redis, store, (e) => errors.push(e)));
    b.useStore(new MirroredFailureStore(redis, new DbFailureStore(s.core.db, now), (e) => errors.push(e)));
    for (let n = 0; n < 4; n++) await a.fail('10.0.0.5');
    await b.fail('10.0.0.5');
    await expect(b.check('10.0.0.5')).rejects.toMatchObject({ kind: 'TooManyRequests' });
    redis.down = true;
    // b's own count is 1; the database holds all five
    await expect(b.check('10.0.0.5')).rejects.toMatchObject({ kind: 'TooManyRequests' });
    expect(errors.length).toBeGreaterThan(0);
    // failures during the outage are counted in the database alone, and still shared
    await a.check('10.0.0.6');
    for (let n = 0; n < 3; n++) await a.fail('10.0.0.6');
    for (let n = 0; n < 2; n++) await b.fail('10.0.0.6');
    await expect(b.check('10.0.0.6')).rejects.toMatchObject({ kind: 'TooManyRequests' });
    expect(await store.count('10.0.0.6')).toBe(5);
    expect(redis.counts.get('10.0.0.6')).toBeUndefined();
    redis.down = false;
    // a success clears both
    await a.check('10.0.0.7');
    await a.fail('10.0.0.7');
    await a.succeed('10.0.0.7');
    expect(await store.count('10.0.0.7')).toBe(0);
    expect(redis.counts.get('10.0.0.7')).toBeUndefined();
  });
});
