import { type DbHandle, insertReturningId } from './index.js';

export interface AppPassword {
  id: number;
  userId: number;
  name: string;
  secretHash: string;
  addedTime: number;
  /** 0 until first used. */
  lastUsedTime: number;
}

export class AppPasswordsRepo {
  constructor(private readonly h: DbHandle) {}

  private rows() {
    return this.h.db.selectFrom('app_passwords').selectAll();
  }

  private static from(r: { id: number; user_id: number; name: string; secret_hash: string; added_time: number; last_used_time: number }): AppPassword {
    return {
      id: Number(r.id),
      userId: Number(r.user_id),
      name: r.name,
      secretHash: r.secret_hash,
      addedTime: Number(r.added_time),
      lastUsedTime: Number(r.last_used_time),
    };
  }

  async ofUser(userId: number): Promise<AppPassword[]> {
    return (await this.rows().where('user_id', '=', userId).orderBy('id').execute()).map(AppPasswordsRepo.from);
  }

  async byId(id: number): Promise<AppPassword | undefined> {
    const r = await this.rows().where('id', '=', id).executeTakeFirst();
    return r && AppPasswordsRepo.from(r);
  }

  async byUserName(userId: number, name: string): Promise<AppPassword | undefined> {
    const r = await this.rows().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
    return r && AppPasswordsRepo.from(r);
  }

  async create(a: Omit<AppPassword, 'id'>): Promise<number> {
    return insertReturningId(
      this.h,
      this.h.db.insertInto('app_passwords').values({
        user_id: a.userId,
        name: a.name,
        secret_hash: a.secretHash,
        added_time: a.addedTime,
        last_used_time: a.lastUsedTime,
      }),
    );
  }

  async touch(id: number, when: number): Promise<void> {
    await this.h.db.updateTable('app_passwords').set({ last_used_time: when }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('app_passwords').where('id', '=', id).execute();
  }

  async deleteOfUser(userId: number): Promise<void> {
    await this.h.db.deleteFrom('app_passwords').where('user_id', '=', userId).execute();
  }
}
