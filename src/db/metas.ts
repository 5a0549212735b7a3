import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
import type { MetaTable } from './schema.js';

/** A path rule, field names as on the wire (wire-api.md §7.4). */
export interface Meta {
  id: number;
  path: string;
  password: string;
  p_sub: boolean;
  write: boolean;
  w_sub: boolean;
  hide: string;
  h_sub: boolean;
  readme: string;
  r_sub: boolean;
  header: string;
  header_sub: boolean;
}

function fromRow(r: Selectable<MetaTable>): Meta {
  return {
    ...r,
    id: Number(r.id),
    p_sub: bool(r.p_sub),
    write: bool(r.write),
    w_sub: bool(r.w_sub),
    h_sub: bool(r.h_sub),
    r_sub: bool(r.r_sub),
    header_sub: bool(r.header_sub),
  };
}

function toRow(m: Omit<Meta, 'id'>) {
  return {
    path: m.path,
    password: m.password,
    p_sub: bit(m.p_sub),
    write: bit(m.write),
    w_sub: bit(m.w_sub),
    hide: m.hide,
    h_sub: bit(m.h_sub),
    readme: m.readme,
    r_sub: bit(m.r_sub),
    header: m.header,
    header_sub: bit(m.header_sub),
  };
}

export class MetasRepo {
  constructor(private readonly h: DbHandle) {}

  async all(): Promise<Meta[]> {
    return (await this.h.db.selectFrom('meta').selectAll().orderBy('id').execute()).map(fromRow);
  }

  async list(page: number, perPage: number): Promise<{ metas: Meta[]; total: number }> {
    let q = this.h.db.selectFrom('meta').selectAll().orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await this.h.db.selectFrom('meta').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { metas: (await q.execute()).map(fromRow), total: Number(count.n) };
  }

  async byId(id: number): Promise<Meta | undefined> {
    const r = await this.h.db.selectFrom('meta').selectAll().where('id', '=', id).executeTakeFirst();
    return r && fromRow(r);
  }

  async byPath(p: string): Promise<Meta | undefined> {
    const r = await this.h.db.selectFrom('meta').selectAll().where('path', '=', p).executeTakeFirst();
    return r && fromRow(r);
  }

  async create(m: Omit<Meta, 'id'>): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('meta').values(toRow(m)));
  }

  async update(m: Meta): Promise<void> {
    await this.h.db.updateTable('meta').set(toRow(m)).where('id', '=', m.id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('meta').where('id', '=', id).execute();
  }
}
