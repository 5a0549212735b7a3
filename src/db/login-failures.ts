import { sql } from 'kysely';
import type { DbHandle } from './index.js';

const SWEEP_EVERY_MS = 60_000;

/**
 * The login throttle's counters in the database (migration 22; auth/login-limiter.ts's FailureStore): one row per address, living
 * until `expires`. A cluster writes them beside Redis's and reads them while Redis is
 * unreachable (cluster/login-failures.ts), so an outage does not reset the count or split it
 * per process. Only failures write; a success deletes the row.
 */
export class DbFailureStore {
  private lastSweep = 0;

  constructor(
    private readonly h: DbHandle,
    private readonly now: () => number = Date.now,
  ) {}

  async count(ip: string): Promise<number> {
    const r = await this.h.db.selectFrom('login_failures').select('failures').where('ip', '=', ip).where('expires', '>', this.now()).executeTakeFirst();
    return r ? Number(r.failures) : 0;
  }

  async add(ip: string, ttlMs: number): Promise<number> {
    const t = this.now();
    const expires = t + ttlMs;
    // An expired row counts again from one. Update first; a missing row is inserted, and an
    // insert that lost a race to another process's insert is the update again.
    for (let attempt = 0; ; attempt++) {
      const up = await this.h.db
        .updateTable('login_failures')
        .set({ failures: sql<number>`case when expires > ${t} then failures + 1 else 1 end`, expires })
        .where('ip', '=', ip)
        .executeTakeFirst();
      if (Number(up.numUpdatedRows) === 0) {
        try {
          await this.h.db.insertInto('login_failures').values({ ip, failures: 1, expires }).execute();
          if (t - this.lastSweep > SWEEP_EVERY_MS) {
            this.lastSweep = t;
            await this.sweep(t);
          }
          return 1;
        } catch (err) {
          if (attempt > 0) throw err;
          continue;
        }
      }
      return this.count(ip);
    }
  }

  async extend(ip: string, ttlMs: number): Promise<void> {
    await this.h.db.updateTable('login_failures').set({ expires: this.now() + ttlMs }).where('ip', '=', ip).execute();
  }

  async clear(ip: string): Promise<void> {
    await this.h.db.deleteFrom('login_failures').where('ip', '=', ip).execute();
  }

  /** Rows past their lock: dropped (at most once a minute, when a new address fails) so a spray stays bounded. */
  async sweep(now = this.now()): Promise<number> {
    const r = await this.h.db.deleteFrom('login_failures').where('expires', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
