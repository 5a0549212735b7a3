import { type DbHandle, insertReturningId } from './index.js';

export interface SshKey {
  id: number;
  userId: number;
  title: string;
  fingerprint: string;
  keyStr: string;
  addedTime: number;
  lastUsedTime: number;
}

export class SshKeysRepo {
  constructor(private readonly h: DbHandle) {}

  private rows() {
    return this.h.db.selectFrom('ssh_public_keys').selectAll();
  }

  private static from(r: { id: number; user_id: number; title: string; fingerprint: string; key_str: string; added_time: number; last_used_time: number }): SshKey {
    return {
      id: Number(r.id),
      userId: Number(r.user_id),
      title: r.title,
      fingerprint: r.fingerprint,
      keyStr: r.key_str,
      addedTime: Number(r.added_time),
      lastUsedTime: Number(r.last_used_time),
    };
  }

  async ofUser(userId: number, page: number, perPage: number): Promise<{ keys: SshKey[]; total: number }> {
    let q = this.rows().where('user_id', '=', userId).orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await this.h.db
      .selectFrom('ssh_public_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return { keys: (await q.execute()).map(SshKeysRepo.from), total: Number(count.n) };
  }

  async byId(id: number): Promise<SshKey | undefined> {
    const r = await this.rows().where('id', '=', id).executeTakeFirst();
    return r && SshKeysRepo.from(r);
  }

  async byUserTitle(userId: number, title: string): Promise<SshKey | undefined> {
    const r = await this.rows().where('user_id', '=', userId).where('title', '=', title).executeTakeFirst();
    return r && SshKeysRepo.from(r);
  }

  async create(k: Omit<SshKey, 'id'>): Promise<number> {
    return insertReturningId(
      this.h,
      this.h.db.insertInto('ssh_public_keys').values({
        user_id: k.userId,
        title: k.title,
        fingerprint: k.fingerprint,
        key_str: k.keyStr,
        added_time: k.addedTime,
        last_used_time: k.lastUsedTime,
      }),
    );
  }

  async touch(id: number, when: number): Promise<void> {
    await this.h.db.updateTable('ssh_public_keys').set({ last_used_time: when }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('ssh_public_keys').where('id', '=', id).execute();
  }

  async deleteOfUser(userId: number): Promise<void> {
    await this.h.db.deleteFrom('ssh_public_keys').where('user_id', '=', userId).execute();
  }
}
