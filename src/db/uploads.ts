import type { Compilable, Insertable, Selectable, Transaction } from 'kysely';
import { addRange, type ByteRanges, parseRanges, rangesOf, removeRange } from '../uploads/ranges.js';
import type { Db, DbHandle } from './index.js';
import { prepare } from './prepared.js';
import type { Database, UploadClaimsTable, UploadPartsTable, UploadsTable } from './schema.js';

export type UploadRow = Selectable<UploadsTable>;
export type UploadPartRow = Selectable<UploadPartsTable>;
export type UploadClaimRow = Selectable<UploadClaimsTable>;

/**
 * Resumable uploads and their received parts. Every change that two clients (or two nodes)
 * could race on is one conditional statement inside a transaction, so exactly one of them wins.
 */
export class UploadsRepo {
  /** The statements a chunk runs, built once (db/prepared.ts). */
  private readonly q;

  constructor(private readonly h: DbHandle) {
    this.q = chunkQueries(h.db);
  }

  async create(row: Insertable<UploadsTable>): Promise<void> {
    await this.h.db.insertInto('uploads').values(row).execute();
  }

  async byId(id: string): Promise<UploadRow | undefined> {
    return (await this.q.row(this.h.db, { id })).rows[0];
  }

  /** This user's uploads still receiving to one of `paths` with this size, the latest first (OpenList's init resumes one). */
  async receivingTo(userId: number, protocol: string, paths: string[], size: number): Promise<UploadRow[]> {
    return this.h.db
      .selectFrom('uploads')
      .selectAll()
      .where('user_id', '=', userId)
      .where('protocol', '=', protocol)
      .where('path', 'in', paths)
      .where('size', '=', size)
      .where('state', '=', 'receiving')
      .orderBy('updated_at', 'desc')
      .execute();
  }

  /** This user's uploads of `protocol` still receiving (the interrupted SFTP/FTP uploads of uploads/partials.ts). */
  async receivingOf(userId: number, protocol: string): Promise<UploadRow[]> {
    return this.h.db.selectFrom('uploads').selectAll().where('user_id', '=', userId).where('protocol', '=', protocol).where('state', '=', 'receiving').execute();
  }

  /** An interrupted SFTP/FTP upload's bytes so far (its size), written now. */
  async setPartial(id: string, bytes: number, now: number): Promise<void> {
    await this.h.db.updateTable('uploads').set({ received: bytes, updated_at: now }).where('id', '=', id).where('state', '=', 'receiving').execute();
  }

  /** Resumable uploads still receiving (interrupted SFTP/FTP uploads kept for a resume are not counted). */
  async countReceiving(userId: number): Promise<number> {
    const r = await this.h.db
      .selectFrom('uploads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('state', '=', 'receiving')
      .where('protocol', '!=', 'partial')
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
   * The upload's ranges after `change`, inside a transaction that already holds its row: `kept`
   * (the row's ranges) changed, or for a row from before migration 12 the list made from its parts
   * (whose change is then already in the table).
   */
  private async rangesIn(trx: Transaction<Database>, id: string, kept: string | null | undefined, change: (r: ByteRanges) => ByteRanges): Promise<ByteRanges> {
    const ranges = parseRanges(kept);
    if (ranges) return change(ranges);
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
    const q = this.q;
    const wanted = new Set(starts);
    // Rows starting between the first and the last start, kept when theirs is one of them: one
    // prepared statement for any number of starts.
    const lo = Math.min(...starts);
    const hi = Math.max(...starts);
    const atStarts = <T extends { start: number }>(rows: T[]) => rows.filter((r) => wanted.has(Number(r.start)));
    return this.h.db.transaction().execute(async (trx) => {
      const touched = opts.offset === undefined ? await q.touch(trx, { id, now: claim.beat }) : await q.touchAt(trx, { id, now: claim.beat, offset: opts.offset });
      if (!affected(touched)) return 'closed';
      const held = opts.exclusive ? (await q.claims(trx, { id })).rows : atStarts((await q.claimsFromTo(trx, { id, lo, hi })).rows);
      for (const c of held) {
        if (!isDead(c)) return 'busy';
        await q.dropClaim(trx, { token: c.token });
      }
      for (const start of starts) await q.addClaim(trx, { ...claim, upload_id: id, start });
      if (opts.forget) {
        const parts = atStarts((await q.partSizesFromTo(trx, { id, lo, hi })).rows);
        const bytes = parts.reduce((n, p) => n + Number(p.size), 0);
        if (bytes > 0) {
          for (const p of parts) await q.dropPart(trx, { id, start: Number(p.start) });
          const row = (await q.row(trx, { id })).rows[0];
          const ranges = await this.rangesIn(trx, id, row?.ranges, (r) => parts.reduce((acc, p) => removeRange(acc, Number(p.start), Number(p.start) + Number(p.size)), r));
          await q.forgetBytes(trx, { id, bytes, ranges: JSON.stringify(ranges) });
        }
      }
      return 'ok';
    });
  }

  /** A sign of life of a claim's request. */
  async beat(token: string, now: number): Promise<void> {
    await this.q.beat(this.h.db, { token, now });
  }

  async release(token: string): Promise<void> {
    await this.q.dropClaim(this.h.db, { token });
  }

  /**
   * Records parts written under a claim and releases it; the upload's row as it is then, or
   * undefined when the upload is no longer receiving or the claim was taken away. The claim forgot
   * whatever was recorded at these starts, and no other request records there while it is held,
   * so the parts add to `received`.
   */
  async record(id: string, token: string, parts: UploadPartRow[], now: number): Promise<UploadRow | undefined> {
    const q = this.q;
    const bytes = parts.reduce((n, p) => n + p.size, 0);
    class Lost extends Error {}
    try {
      return await this.h.db.transaction().execute(async (trx) => {
        // The upload's row first, as every claimer does (one lock order: no deadlock on MySQL).
        const touched = await q.addReceived(trx, { id, now, bytes });
        const mine = await q.dropClaim(trx, { token });
        if (!affected(touched)) return undefined;
        // The claim was taken away: the bytes added above are rolled back.
        if (!affected(mine)) throw new Lost();
        const row = (await q.row(trx, { id })).rows[0]!;
        if (parts.length) {
          for (const p of parts) await q.addPart(trx, p);
          const ranges = await this.rangesIn(trx, id, row.ranges, (r) => parts.reduce((acc, p) => addRange(acc, p.start, p.start + p.size), r));
          row.ranges = JSON.stringify(ranges);
          await q.setRanges(trx, { id, ranges: row.ranges });
        }
        return row;
      });
    } catch (err) {
      if (err instanceof Lost) return undefined;
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

const affected = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0) > 0;

/** The statements of a chunk's way through (byId, claim, record), prepared once per database. */
function chunkQueries(db: Db) {
  const p = <A extends Record<string, unknown>, R>(build: (db: Db, a: A) => Compilable<R>) => prepare(db, build);
  return {
    row: p((db, a: { id: string }) => db.selectFrom('uploads').selectAll().where('id', '=', a.id)),
    touch: p((db, a: { id: string; now: number }) => db.updateTable('uploads').set({ updated_at: a.now }).where('id', '=', a.id).where('state', '=', 'receiving')),
    touchAt: p((db, a: { id: string; now: number; offset: number }) =>
      db.updateTable('uploads').set({ updated_at: a.now }).where('id', '=', a.id).where('state', '=', 'receiving').where('received', '=', a.offset),
    ),
    addReceived: p((db, a: { id: string; now: number; bytes: number }) =>
      db
        .updateTable('uploads')
        .set((eb) => ({ updated_at: a.now, received: eb('received', '+', a.bytes) }))
        .where('id', '=', a.id)
        .where('state', '=', 'receiving'),
    ),
    forgetBytes: p((db, a: { id: string; bytes: number; ranges: string }) =>
      db
        .updateTable('uploads')
        .set((eb) => ({ received: eb('received', '-', a.bytes), ranges: a.ranges }))
        .where('id', '=', a.id),
    ),
    setRanges: p((db, a: { id: string; ranges: string }) => db.updateTable('uploads').set({ ranges: a.ranges }).where('id', '=', a.id)),
    claims: p((db, a: { id: string }) => db.selectFrom('upload_claims').selectAll().where('upload_id', '=', a.id)),
    // The two FromTo queries take [lo, hi], both ends included (the repository's partsBetween takes [from, to)).
    claimsFromTo: p((db, a: { id: string; lo: number; hi: number }) =>
      db.selectFrom('upload_claims').selectAll().where('upload_id', '=', a.id).where('start', '>=', a.lo).where('start', '<=', a.hi),
    ),
    addClaim: p((db, a: UploadClaimRow) => db.insertInto('upload_claims').values({ upload_id: a.upload_id, start: a.start, token: a.token, owner: a.owner, beat: a.beat })),
    dropClaim: p((db, a: { token: string }) => db.deleteFrom('upload_claims').where('token', '=', a.token)),
    beat: p((db, a: { token: string; now: number }) => db.updateTable('upload_claims').set({ beat: a.now }).where('token', '=', a.token)),
    partSizesFromTo: p((db, a: { id: string; lo: number; hi: number }) =>
      db.selectFrom('upload_parts').select(['start', 'size']).where('upload_id', '=', a.id).where('start', '>=', a.lo).where('start', '<=', a.hi),
    ),
    dropPart: p((db, a: { id: string; start: number }) => db.deleteFrom('upload_parts').where('upload_id', '=', a.id).where('start', '=', a.start)),
    addPart: p((db, a: UploadPartRow) => db.insertInto('upload_parts').values({ upload_id: a.upload_id, start: a.start, size: a.size, file: a.file })),
  };
}
