import type { Insertable, Selectable } from 'kysely';
import type { DbHandle } from './index.js';
import type { UploadPartsTable, UploadsTable } from './schema.js';

export type UploadRow = Selectable<UploadsTable>;
export type UploadPartRow = Selectable<UploadPartsTable>;

/**
 * Resumable uploads and their received parts. Every change that two clients (or two nodes)
 * could race on is one conditional statement inside a transaction, so exactly one of them wins.
 */
export class UploadsRepo {
  constructor(private readonly h: DbHandle) {}

  async create(row: Insertable<UploadsTable>): Promise<void> {
    await this.h.db.insertInto('uploads').values(row).execute();
  }

  async byId(id: string): Promise<UploadRow | undefined> {
    return this.h.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** An upload of this user still receiving to the same path and size (OpenList's init resumes it). */
  async receivingTo(userId: number, protocol: string, path: string, size: number): Promise<UploadRow | undefined> {
    return this.h.db
      .selectFrom('uploads')
      .selectAll()
      .where('user_id', '=', userId)
      .where('protocol', '=', protocol)
      .where('path', '=', path)
      .where('size', '=', size)
      .where('state', '=', 'receiving')
      .orderBy('updated_at', 'desc')
      .executeTakeFirst();
  }

  async countReceiving(userId: number): Promise<number> {
    const r = await this.h.db
      .selectFrom('uploads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('state', '=', 'receiving')
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async parts(id: string): Promise<UploadPartRow[]> {
    return this.h.db.selectFrom('upload_parts').selectAll().where('upload_id', '=', id).orderBy('start').execute();
  }

  /**
   * Records a chunk at `start` (replacing an earlier copy of it) while the upload is receiving.
   * Returns the file of the replaced copy, '' when there was none, or undefined when the upload
   * is no longer receiving (the caller discards its file).
   */
  async putChunk(id: string, part: UploadPartRow, now: number): Promise<string | undefined> {
    return this.h.db.transaction().execute(async (trx) => {
      const touched = await trx.updateTable('uploads').set({ updated_at: now }).where('id', '=', id).where('state', '=', 'receiving').executeTakeFirst();
      if (Number(touched.numUpdatedRows) === 0) return undefined;
      const old = await trx.selectFrom('upload_parts').select('file').where('upload_id', '=', id).where('start', '=', part.start).executeTakeFirst();
      if (old) await trx.deleteFrom('upload_parts').where('upload_id', '=', id).where('start', '=', part.start).execute();
      await trx.insertInto('upload_parts').values(part).execute();
      const sum = await trx
        .selectFrom('upload_parts')
        .select((eb) => eb.fn.sum<number>('size').as('n'))
        .where('upload_id', '=', id)
        .executeTakeFirst();
      await trx.updateTable('uploads').set({ received: Number(sum?.n ?? 0) }).where('id', '=', id).execute();
      return old?.file ?? '';
    });
  }

  /** Appends bytes at `offset` (tus): only when the upload is receiving and still at that offset. */
  async appendAt(id: string, offset: number, part: UploadPartRow, now: number): Promise<boolean> {
    return this.h.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('uploads')
        .set({ received: offset + part.size, updated_at: now })
        .where('id', '=', id)
        .where('state', '=', 'receiving')
        .where('received', '=', offset)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) === 0) return false;
      await trx.insertInto('upload_parts').values(part).execute();
      return true;
    });
  }

  /** Moves the upload from one of `from` to `to`; false when another request got there first. */
  async transition(id: string, from: string[], to: string, set: Partial<Pick<UploadRow, 'attempt' | 'error' | 'progress'>> = {}, staleBefore?: number): Promise<boolean> {
    let q = this.h.db.updateTable('uploads').set({ state: to, updated_at: Date.now(), ...set }).where('id', '=', id).where('state', 'in', from);
    if (staleBefore !== undefined) q = q.where((eb) => eb.or([eb('state', '!=', 'completing'), eb('updated_at', '<', staleBefore)]));
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async setProgress(id: string, progress: number): Promise<void> {
    await this.h.db.updateTable('uploads').set({ progress, updated_at: Date.now() }).where('id', '=', id).where('state', '=', 'completing').execute();
  }

  /** Uploads whose last change is older than `before` (expired, or finished long enough ago). */
  async idleSince(before: number): Promise<UploadRow[]> {
    return this.h.db.selectFrom('uploads').selectAll().where('updated_at', '<', before).execute();
  }

  async ids(): Promise<Set<string>> {
    return new Set((await this.h.db.selectFrom('uploads').select('id').execute()).map((r) => r.id));
  }

  async dropParts(id: string): Promise<void> {
    await this.h.db.deleteFrom('upload_parts').where('upload_id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.h.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('upload_parts').where('upload_id', '=', id).execute();
      await trx.deleteFrom('uploads').where('id', '=', id).execute();
    });
  }
}
