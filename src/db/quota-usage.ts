import { sql } from 'kysely';
import type { DbHandle } from './index.js';

export type QuotaOwnerKind = 'user' | 'group';

/** What one quota's owner uses. */
export interface Usage {
  bytes: number;
  files: number;
  /** When a scan last set it (ms; 0: never). */
  scannedAt: number;
}

/** Usage of each quota's owner (`quota_usage`, migration 27): changed by deltas as writes happen, set by a scan. */
export class QuotaUsageRepo {
  constructor(private readonly h: DbHandle) {}

  async get(kind: QuotaOwnerKind, id: number): Promise<Usage> {
    const r = await this.h.db.selectFrom('quota_usage').selectAll().where('owner_kind', '=', kind).where('owner_id', '=', id).executeTakeFirst();
    return r ? { bytes: Number(r.used_bytes), files: Number(r.used_files), scannedAt: Number(r.scanned_at) } : { bytes: 0, files: 0, scannedAt: 0 };
  }

  /** Adds a change to the usage (one statement each way; never below zero). */
  async add(kind: QuotaOwnerKind, id: number, bytes: number, files: number): Promise<void> {
    if (bytes === 0 && files === 0) return;
    const updated = await this.h.db
      .updateTable('quota_usage')
      .set({
        used_bytes: sql<number>`case when used_bytes + ${bytes} < 0 then 0 else used_bytes + ${bytes} end`,
        used_files: sql<number>`case when used_files + ${files} < 0 then 0 else used_files + ${files} end`,
      })
      .where('owner_kind', '=', kind)
      .where('owner_id', '=', id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return;
    await this.insertOrAdd(kind, id, Math.max(0, bytes), Math.max(0, files));
  }

  /** A first row; when another writer made it meanwhile, the change is added to theirs. */
  private async insertOrAdd(kind: QuotaOwnerKind, id: number, bytes: number, files: number): Promise<void> {
    try {
      await this.h.db.insertInto('quota_usage').values({ owner_kind: kind, owner_id: id, used_bytes: bytes, used_files: files, scanned_at: 0 }).execute();
    } catch {
      await this.h.db
        .updateTable('quota_usage')
        .set({ used_bytes: sql<number>`used_bytes + ${bytes}`, used_files: sql<number>`used_files + ${files}` })
        .where('owner_kind', '=', kind)
        .where('owner_id', '=', id)
        .execute();
    }
  }

  /** Sets the usage a scan counted. */
  async set(kind: QuotaOwnerKind, id: number, bytes: number, files: number, at = Date.now()): Promise<void> {
    const updated = await this.h.db
      .updateTable('quota_usage')
      .set({ used_bytes: bytes, used_files: files, scanned_at: at })
      .where('owner_kind', '=', kind)
      .where('owner_id', '=', id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return;
    await this.h.db.insertInto('quota_usage').values({ owner_kind: kind, owner_id: id, used_bytes: bytes, used_files: files, scanned_at: at }).execute();
  }

  async remove(kind: QuotaOwnerKind, id: number): Promise<void> {
    await this.h.db.deleteFrom('quota_usage').where('owner_kind', '=', kind).where('owner_id', '=', id).execute();
  }
}
