import type { Selectable } from 'kysely';
import type { DbHandle } from './index.js';
import type { SharesTable } from './schema.js';

export interface Share {
  id: string;
  /** Absolute virtual paths of the shared files and folders. */
  files: string[];
  /** Unix milliseconds; 0 = never expires. */
  expires: number;
  pwd: string;
  accessed: number;
  /** 0 = no limit. */
  maxAccessed: number;
  creatorId: number;
  disabled: boolean;
  remark: string;
  readme: string;
  header: string;
  createdAt: number;
}

function fromRow(r: Selectable<SharesTable>): Share {
  let files: string[] = [];
  try {
    const parsed: unknown = JSON.parse(r.files);
    if (Array.isArray(parsed)) files = parsed.filter((f): f is string => typeof f === 'string');
  } catch {
    files = [];
  }
  return {
    id: r.id,
    files,
    expires: Number(r.expires),
    pwd: r.pwd,
    accessed: Number(r.accessed),
    maxAccessed: Number(r.max_accessed),
    creatorId: Number(r.creator_id),
    disabled: Boolean(Number(r.disabled)),
    remark: r.remark,
    readme: r.readme,
    header: r.header,
    createdAt: Number(r.created_at),
  };
}

function toRow(s: Share): SharesTable {
  return {
    id: s.id,
    files: JSON.stringify(s.files),
    expires: s.expires,
    pwd: s.pwd,
    accessed: s.accessed,
    max_accessed: s.maxAccessed,
    creator_id: s.creatorId,
    disabled: s.disabled ? 1 : 0,
    remark: s.remark,
    readme: s.readme,
    header: s.header,
    created_at: s.createdAt,
  };
}

/** Share links. Read from the database on every visitor request, so every process sees a change at once. */
export class SharesRepo {
  constructor(private readonly h: DbHandle) {}

  async byId(id: string): Promise<Share | undefined> {
    const r = await this.h.db.selectFrom('shares').selectAll().where('id', '=', id).executeTakeFirst();
    return r && fromRow(r);
  }

  /** Paged, newest first; `creatorId` undefined lists everyone's. `perPage` < 1 lists all. */
  async list(page: number, perPage: number, creatorId?: number): Promise<{ shares: Share[]; total: number }> {
    let q = this.h.db.selectFrom('shares').selectAll();
    let c = this.h.db.selectFrom('shares').select((eb) => eb.fn.countAll().as('n'));
    if (creatorId !== undefined) {
      q = q.where('creator_id', '=', creatorId);
      c = c.where('creator_id', '=', creatorId);
    }
    q = q.orderBy('created_at', 'desc').orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((Math.max(page, 1) - 1) * perPage);
    const [rows, total] = await Promise.all([q.execute(), c.executeTakeFirstOrThrow()]);
    return { shares: rows.map(fromRow), total: Number(total.n) };
  }

  async create(s: Share): Promise<void> {
    await this.h.db.insertInto('shares').values(toRow(s)).execute();
  }

  /** Writes every field of `s` under `oldId` (which may differ from `s.id` when the id is changed). */
  async update(s: Share, oldId = s.id): Promise<void> {
    await this.h.db.updateTable('shares').set(toRow(s)).where('id', '=', oldId).execute();
  }

  async setDisabled(id: string, disabled: boolean): Promise<void> {
    await this.h.db.updateTable('shares').set({ disabled: disabled ? 1 : 0 }).where('id', '=', id).execute();
  }

  /**
   * Counts one access unless the limit is reached, in one statement: of N concurrent callers
   * against a limit of K, at most K succeed. Returns false when the limit was already reached.
   */
  async countAccess(id: string): Promise<boolean> {
    const r = await this.h.db
      .updateTable('shares')
      .set((eb) => ({ accessed: eb('accessed', '+', 1) }))
      .where('id', '=', id)
      .where((eb) => eb.or([eb('max_accessed', '<=', 0), eb('accessed', '<', eb.ref('max_accessed'))]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<void> {
    await this.h.db.deleteFrom('shares').where('id', '=', id).execute();
  }

  async deleteForCreator(creatorId: number): Promise<void> {
    await this.h.db.deleteFrom('shares').where('creator_id', '=', creatorId).execute();
  }
}
