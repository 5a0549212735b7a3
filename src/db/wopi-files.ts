import { createHash, randomBytes } from 'node:crypto';
import type { DbHandle } from './index.js';

export interface WopiFileRow {
  id: string;
  path: string;
  ownerId: number;
}

const hashOf = (p: string) => createHash('sha256').update(p).digest('hex');

/**
 * The stable ids WOPI gives files (migration 23): one random, URL-safe id per virtual path, the
 * same for every user and every process, kept when the file is renamed through WOPI. Looked up
 * by the path's SHA-256 (a long path can not be a unique key on MySQL).
 */
export class WopiFilesRepo {
  constructor(private readonly h: DbHandle) {}

  async byId(id: string): Promise<WopiFileRow | undefined> {
    const r = await this.h.db.selectFrom('wopi_files').select(['id', 'path', 'owner_id']).where('id', '=', id).executeTakeFirst();
    return r ? { id: r.id, path: r.path, ownerId: Number(r.owner_id) } : undefined;
  }

  async byPath(p: string): Promise<WopiFileRow | undefined> {
    const r = await this.h.db.selectFrom('wopi_files').select(['id', 'path', 'owner_id']).where('path_hash', '=', hashOf(p)).executeTakeFirst();
    return r ? { id: r.id, path: r.path, ownerId: Number(r.owner_id) } : undefined;
  }

  /** The id of the file at `p`, made on first use (`ownerId` the user who opened it first); two processes racing agree on one. */
  async idFor(p: string, ownerId: number): Promise<WopiFileRow> {
    for (let attempt = 0; ; attempt++) {
      const found = await this.byPath(p);
      if (found) return found;
      const row = { id: randomBytes(16).toString('base64url'), path: p, ownerId };
      try {
        await this.h.db.insertInto('wopi_files').values({ id: row.id, path: p, path_hash: hashOf(p), owner_id: ownerId, created: Date.now() }).execute();
        return row;
      } catch (err) {
        // Another request inserted this path first: its row is the answer.
        if (attempt > 0) throw err;
      }
    }
  }

  /** The file `id` is now at `to`; an id still naming `to` (an earlier file there) is dropped. */
  async move(id: string, to: string): Promise<void> {
    await this.h.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('wopi_files').where('path_hash', '=', hashOf(to)).where('id', '!=', id).execute();
      await trx.updateTable('wopi_files').set({ path: to, path_hash: hashOf(to) }).where('id', '=', id).execute();
    });
  }
}
