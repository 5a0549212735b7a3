import type { DbHandle } from './index.js';

export interface Session {
  id: string;
  userId: number;
  createdAt: number;
  expiresAt: number;
  ip: string;
  userAgent: string;
}

/** Issued login sessions: a token is valid only while its row exists (logout deletes it). */
export class SessionsRepo {
  constructor(private readonly h: DbHandle) {}

  async create(s: Session): Promise<void> {
    await this.h.db
      .insertInto('sessions')
      .values({
        id: s.id,
        user_id: s.userId,
        created_at: s.createdAt,
        expires_at: s.expiresAt,
        ip: s.ip,
        user_agent: s.userAgent.slice(0, 512),
      })
      .execute();
  }

  async exists(id: string, now: number): Promise<boolean> {
    const r = await this.h.db
      .selectFrom('sessions')
      .select('id')
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** The unexpired sessions of a user (or of every user), newest first. */
  async live(now: number, userId?: number): Promise<Session[]> {
    let q = this.h.db.selectFrom('sessions').selectAll().where('expires_at', '>', now);
    if (userId !== undefined) q = q.where('user_id', '=', userId);
    const rows = await q.orderBy('created_at', 'desc').limit(10_000).execute();
    return rows.map((r) => ({ id: r.id, userId: Number(r.user_id), createdAt: Number(r.created_at), expiresAt: Number(r.expires_at), ip: r.ip, userAgent: r.user_agent }));
  }

  /** How many unexpired sessions a user has. */
  async countLive(userId: number, now: number): Promise<number> {
    const r = await this.h.db.selectFrom('sessions').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).where('expires_at', '>', now).executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async delete(id: string): Promise<void> {
    await this.h.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  async deleteForUser(userId: number): Promise<void> {
    await this.h.db.deleteFrom('sessions').where('user_id', '=', userId).execute();
  }

  async deleteExpired(now: number): Promise<number> {
    const r = await this.h.db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
