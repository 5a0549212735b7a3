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
  /**
   * The group whose members the rule applies to; 0 (OpenList's rules, which have no such
   * field): every principal. One rule per path and group (migration 32).
   */
  group_id: number;
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
    group_id: Number(r.group_id ?? 0),
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
    group_id: m.group_id,
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

  /** The rule of path `p` for the members of `groupId` (0: the rule for everyone). */
  async byPath(p: string, groupId = 0): Promise<Meta | undefined> {
    const r = await this.h.db.selectFrom('meta').selectAll().where('path', '=', p).where('group_id', '=', groupId).executeTakeFirst();
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
