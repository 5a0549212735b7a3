import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
import type { StoragesTable } from './schema.js';

/** A storage row, field names as in the wire JSON (wire-api.md §9.1). */
export interface StorageRow {
  id: number;
  mount_path: string;
  order: number;
  driver: string;
  cache_expiration: number;
  custom_cache_policies: string;
  status: string;
  addition: string;
  remark: string;
  modified: number;
  disabled: boolean;
  disable_index: boolean;
  enable_sign: boolean;
  order_by: string;
  order_direction: string;
  extract_folder: string;
  web_proxy: boolean;
  webdav_policy: string;
  proxy_range: boolean;
  down_proxy_url: string;
  disable_proxy_sign: boolean;
}

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
