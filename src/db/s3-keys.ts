import { type DbHandle, insertReturningId } from './index.js';

export interface S3Key {
  id: number;
  userId: number;
  title: string;
  accessKey: string;
  secret: string;
  addedTime: number;
  lastUsedTime: number;
}

/** Per-user S3 access keys (table `s3_keys`). */
export class S3KeysRepo {
  constructor(private readonly h: DbHandle) {}

  private rows() {
    return this.h.db.selectFrom('s3_keys').selectAll();
  }

  private static from(r: { id: number; user_id: number; title: string; access_key: string; secret: string; added_time: number; last_used_time: number }): S3Key {
    return {
      id: Number(r.id),
      userId: Number(r.user_id),
      title: r.title,
      accessKey: r.access_key,
      secret: r.secret,
      addedTime: Number(r.added_time),
      lastUsedTime: Number(r.last_used_time),
    };
  }

  async ofUser(userId: number): Promise<S3Key[]> {
    return (await this.rows().where('user_id', '=', userId).orderBy('id').execute()).map(S3KeysRepo.from);
  }

  async byAccessKey(accessKey: string): Promise<S3Key | undefined> {
    const r = await this.rows().where('access_key', '=', accessKey).executeTakeFirst();
    return r && S3KeysRepo.from(r);
  }

  async byId(id: number): Promise<S3Key | undefined> {
    const r = await this.rows().where('id', '=', id).executeTakeFirst();
    return r && S3KeysRepo.from(r);
  }

  async create(k: Omit<S3Key, 'id'>): Promise<number> {
    return insertReturningId(
      this.h,
      this.h.db.insertInto('s3_keys').values({
        user_id: k.userId,
        title: k.title,
        access_key: k.accessKey,
        secret: k.secret,
        added_time: k.addedTime,
        last_used_time: k.lastUsedTime,
      }),
    );
  }

  async touch(id: number, when: number): Promise<void> {
    await this.h.db.updateTable('s3_keys').set({ last_used_time: when }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('s3_keys').where('id', '=', id).execute();
  }

  async deleteOfUser(userId: number): Promise<void> {
    await this.h.db.deleteFrom('s3_keys').where('user_id', '=', userId).execute();
  }
}
