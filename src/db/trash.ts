import type { Selectable } from 'kysely';
import type { DbHandle } from './index.js';
import { bit, bool } from './index.js';
import type { TrashEntriesTable } from './schema.js';

/** What a storage's trash holds of one deleted object (migration 25). */
export interface TrashEntry {
  id: string;
  storageId: number;
  /** The virtual path it was deleted from. */
  path: string;
  name: string;
  size: number;
  isDir: boolean;
  deletedAt: number;
  userId: number;
  username: string;
  front: string;
}

function entryFrom(r: Selectable<TrashEntriesTable>): TrashEntry {
  return {
    id: r.id,
    storageId: Number(r.storage_id),
    path: r.path,
    name: r.name,
    size: Number(r.size),
    isDir: bool(r.is_dir),
    deletedAt: Number(r.deleted_at),
    userId: Number(r.user_id),
    username: r.username,
    front: r.front,
  };
}

/** The trash entries of every storage (`trash_entries`). */
export class TrashRepo {
  constructor(private readonly h: DbHandle) {}

  async insert(e: TrashEntry): Promise<void> {
    await this.h.db
      .insertInto('trash_entries')
      .values({ id: e.id, storage_id: e.storageId, path: e.path, name: e.name, size: e.size, is_dir: bit(e.isDir), deleted_at: e.deletedAt, user_id: e.userId, username: e.username, front: e.front })
      .execute();
  }

  /** Entries of a storage, newest first; only `userId`'s when given. */
  async list(storageId: number, userId: number | undefined, page: number, perPage: number): Promise<{ entries: TrashEntry[]; total: number }> {
    let where = this.h.db.selectFrom('trash_entries').where('storage_id', '=', storageId);
    if (userId !== undefined) where = where.where('user_id', '=', userId);
    let q = where.selectAll().orderBy('deleted_at', 'desc').orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await where.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { entries: (await q.execute()).map(entryFrom), total: Number(count.n) };
  }

  async byIds(ids: string[]): Promise<TrashEntry[]> {
    if (ids.length === 0) return [];
    return (await this.h.db.selectFrom('trash_entries').selectAll().where('id', 'in', ids).execute()).map(entryFrom);
  }

  /** Entries of a storage deleted before `time` (the retention sweep), oldest first. */
  async olderThan(storageId: number, time: number, limit: number): Promise<TrashEntry[]> {
    const rows = await this.h.db.selectFrom('trash_entries').selectAll().where('storage_id', '=', storageId).where('deleted_at', '<', time).orderBy('deleted_at').limit(limit).execute();
    return rows.map(entryFrom);
  }

  async delete(id: string): Promise<void> {
    await this.h.db.deleteFrom('trash_entries').where('id', '=', id).execute();
  }

  async deleteOfStorage(storageId: number): Promise<void> {
    await this.h.db.deleteFrom('trash_entries').where('storage_id', '=', storageId).execute();
  }
}
