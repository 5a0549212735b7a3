import type { Insertable, Selectable, Transaction } from 'kysely';
import { addRange, type ByteRanges, parseRanges, rangesOf, removeRange } from '../uploads/ranges.js';
import type { DbHandle } from './index.js';
import type { Database, UploadClaimsTable, UploadPartsTable, UploadsTable } from './schema.js';

export type UploadRow = Selectable<UploadsTable>;
export type UploadPartRow = Selectable<UploadPartsTable>;
export type UploadClaimRow = Selectable<UploadClaimsTable>;

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

  /** The parts starting in [from, to) (one S3 part group). */
  async partsBetween(id: string, from: number, to: number): Promise<UploadPartRow[]> {
    return this.h.db.selectFrom('upload_parts').selectAll().where('upload_id', '=', id).where('start', '>=', from).where('start', '<', to).orderBy('start').execute();
  }

  /**
   * The upload's ranges after `change`, inside a transaction that already holds its row: the
   * stored list, or for a row from before migration 12 the list made from its parts (whose
   * change is then already in the table).
   */
  private async rangesIn(trx: Transaction<Database>, id: string, change: (r: ByteRanges) => ByteRanges): Promise<ByteRanges> {
    const row = await trx.selectFrom('uploads').select('ranges').where('id', '=', id).executeTakeFirst();
    const kept = parseRanges(row?.ranges);
    if (kept) return change(kept);
    return rangesOf(await trx.selectFrom('upload_parts').select(['start', 'size']).where('upload_id', '=', id).execute());
  }

  /**
   * Claims the byte ranges starting at `starts` for one request (`token`): the upload must be
   * receiving (and, with `offset`, at that offset) and no live claim may hold one of them; claims
   * `isDead` says are void are removed. With `forget`, the parts recorded at `starts` are forgotten
   * in the same step (their bytes are about to be written again). Every claimer first updates the
   * upload's row, so claims on one upload are decided one after the other on every database.
   */
  async claim(
    id: string,
    claim: Omit<UploadClaimRow, 'start' | 'upload_id'>,
    starts: number[],
    opts: { offset?: number; forget?: boolean; exclusive?: boolean },
    isDead: (c: UploadClaimRow) => boolean,
  ): Promise<'ok' | 'busy' | 'closed'> {
    return this.h.db.transaction().execute(async (trx) => {
      let q = trx.updateTable('uploads').set({ updated_at: claim.beat }).where('id', '=', id).where('state', '=', 'receiving');
      if (opts.offset !== undefined) q = q.where('received', '=', opts.offset);
      if (Number((await q.executeTakeFirst()).numUpdatedRows) === 0) return 'closed';
      let held = trx.selectFrom('upload_claims').selectAll().where('upload_id', '=', id);
      if (!opts.exclusive) held = held.where('start', 'in', starts);
      for (const c of await held.execute()) {
        if (!isDead(c)) return 'busy';
        await trx.deleteFrom('upload_claims').where('token', '=', c.token).execute();
      }
      await trx
        .insertInto('upload_claims')
        .values(starts.map((start) => ({ ...claim, upload_id: id, start })))
        .execute();
      if (opts.forget) {
        const held = await trx.selectFrom('upload_parts').select(['start', 'size']).where('upload_id', '=', id).where('start', 'in', starts).execute();
        const bytes = held.reduce((n, p) => n + Number(p.size), 0);
        if (bytes > 0) {
          await trx.deleteFrom('upload_parts').where('upload_id', '=', id).where('start', 'in', starts).execute();
          const ranges = await this.rangesIn(trx, id, (r) => held.reduce((acc, p) => removeRange(acc, Number(p.start), Number(p.start) + Number(p.size)), r));
          await trx
            .updateTable('uploads')
            .set((eb) => ({ received: eb('received', '-', bytes), ranges: JSON.stringify(ranges) }))
            .where('id', '=', id)
            .execute();
        }
      }
      return 'ok';
    });
  }

  /** A sign of life of a claim's request. */
  async beat(token: string, now: number): Promise<void> {
    await this.h.db.updateTable('upload_claims').set({ beat: now }).where('token', '=', token).execute();
  }

  async release(token: string): Promise<void> {
    await this.h.db.deleteFrom('upload_claims').where('token', '=', token).execute();
  }

  /**
   * Records parts written under a claim and releases it; false when the upload is no longer
   * receiving or the claim was taken away. The claim forgot whatever was recorded at these starts,
   * and no other request records there while it is held, so the parts add to `received`.
   */
  async record(id: string, token: string, parts: UploadPartRow[], now: number): Promise<boolean> {
    const bytes = parts.reduce((n, p) => n + p.size, 0);
    class Lost extends Error {}
    try {
      return await this.h.db.transaction().execute(async (trx) => {
        // The upload's row first, as every claimer does (one lock order: no deadlock on MySQL).
        const touched = await trx
          .updateTable('uploads')
          .set((eb) => ({ updated_at: now, received: eb('received', '+', bytes) }))
          .where('id', '=', id)
          .where('state', '=', 'receiving')
          .executeTakeFirst();
        const mine = await trx.deleteFrom('upload_claims').where('token', '=', token).executeTakeFirst();
        if (Number(touched.numUpdatedRows) === 0) return false;
        // The claim was taken away: the bytes added above are rolled back.
        if (Number(mine.numDeletedRows) === 0) throw new Lost();
        if (parts.length) {
          await trx.insertInto('upload_parts').values(parts).execute();
          const ranges = await this.rangesIn(trx, id, (r) => parts.reduce((acc, p) => addRange(acc, p.start, p.start + p.size), r));
          await trx.updateTable('uploads').set({ ranges: JSON.stringify(ranges) }).where('id', '=', id).execute();
        }
        return true;
      });
    } catch (err) {
      if (err instanceof Lost) return false;
      throw err;
    }
  }

  /** Sets where the bytes of recorded parts are (after they were sent into an S3 part). */
  async relocate(id: string, starts: number[], file: string): Promise<void> {
    await this.h.db.updateTable('upload_parts').set({ file }).where('upload_id', '=', id).where('start', 'in', starts).execute();
  }

  /**
   * Moves the upload to `completing` (from receiving, or from a completion stale since
   * `staleBefore`) when no live claim is writing into it. 'busy' leaves everything as it was.
   */
  async beginCompletion(id: string, attempt: number, staleBefore: number, isDead: (c: UploadClaimRow) => boolean): Promise<'ok' | 'busy' | 'lost'> {
    class Busy extends Error {}
    try {
      return await this.h.db.transaction().execute(async (trx) => {
        const won = await trx
          .updateTable('uploads')
          .set({ state: 'completing', updated_at: Date.now(), attempt, error: '', progress: 0 })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('state', '=', 'receiving'), eb.and([eb('state', '=', 'completing'), eb('updated_at', '<', staleBefore)])]))
          .executeTakeFirst();
        if (Number(won.numUpdatedRows) === 0) return 'lost' as const;
        for (const c of await trx.selectFrom('upload_claims').selectAll().where('upload_id', '=', id).execute()) {
          if (!isDead(c)) throw new Busy();
          await trx.deleteFrom('upload_claims').where('token', '=', c.token).execute();
        }
        return 'ok' as const;
      });
    } catch (err) {
      if (err instanceof Busy) return 'busy';
      throw err;
    }
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
      await trx.deleteFrom('upload_claims').where('upload_id', '=', id).execute();
      await trx.deleteFrom('upload_parts').where('upload_id', '=', id).execute();
      await trx.deleteFrom('uploads').where('id', '=', id).execute();
    });
  }
}
