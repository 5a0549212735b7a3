import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
import type { StoragesTable } from './schema.js';

/** The columns stored as 0/1; a row holds them as booleans. */
type FlagColumn = 'disabled' | 'disable_index' | 'enable_sign' | 'web_proxy' | 'proxy_range' | 'disable_proxy_sign';

/** A storage row: the table's columns, field names as in the wire JSON (wire-api.md §9.1), flags as booleans. */
export type StorageRow = Omit<Selectable<StoragesTable>, FlagColumn> & Record<FlagColumn, boolean>;

function fromRow(r: Selectable<StoragesTable>): StorageRow {
  return {
    ...r,
    id: Number(r.id),
    order: Number(r.order),
    cache_expiration: Number(r.cache_expiration),
    modified: Number(r.modified),
    disabled: bool(r.disabled),
    disable_index: bool(r.disable_index),
    enable_sign: bool(r.enable_sign),
    web_proxy: bool(r.web_proxy),
    proxy_range: bool(r.proxy_range),
    disable_proxy_sign: bool(r.disable_proxy_sign),
  };
}

function toRow(s: Omit<StorageRow, 'id'>) {
  return {
    ...s,
    disabled: bit(s.disabled),
    disable_index: bit(s.disable_index),
    enable_sign: bit(s.enable_sign),
    web_proxy: bit(s.web_proxy),
    proxy_range: bit(s.proxy_range),
    disable_proxy_sign: bit(s.disable_proxy_sign),
  };
}

export class StoragesRepo {
  constructor(private readonly h: DbHandle) {}

  async all(): Promise<StorageRow[]> {
    const rows = await this.h.db.selectFrom('storages').selectAll().orderBy('order').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async list(page: number, perPage: number): Promise<{ storages: StorageRow[]; total: number }> {
    let q = this.h.db.selectFrom('storages').selectAll().orderBy('order').orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const [rows, total] = await Promise.all([q.execute(), this.count()]);
    return { storages: rows.map(fromRow), total };
  }

  async count(): Promise<number> {
    const r = await this.h.db.selectFrom('storages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async byId(id: number): Promise<StorageRow | undefined> {
    const r = await this.h.db.selectFrom('storages').selectAll().where('id', '=', id).executeTakeFirst();
    return r && fromRow(r);
  }

  async byMountPath(mountPath: string): Promise<StorageRow | undefined> {
    const r = await this.h.db.selectFrom('storages').selectAll().where('mount_path', '=', mountPath).executeTakeFirst();
    return r && fromRow(r);
  }

  async create(s: Omit<StorageRow, 'id'>): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('storages').values(toRow(s)));
  }

  async update(s: StorageRow): Promise<void> {
    const { id, ...rest } = s;
    await this.h.db.updateTable('storages').set(toRow(rest)).where('id', '=', id).execute();
  }

  async setStatus(id: number, status: string): Promise<void> {
    await this.h.db.updateTable('storages').set({ status }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('storages').where('id', '=', id).execute();
  }
}
