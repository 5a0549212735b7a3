import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
import type { HookDeliveriesTable, HooksTable } from './schema.js';

/** What a hook does with a matching event (hooks/rules.ts validates it). */
export type HookAction = { type: 'http'; url: string; secret: string } | { type: 'command'; command: string[] };

/** An event hook as stored: JSON columns parsed. */
export interface Hook {
  id: number;
  name: string;
  events: string[];
  paths: string[];
  users: string[];
  action: HookAction;
  disabled: boolean;
  created_at: number;
  updated_at: number;
}

export type HookInput = Omit<Hook, 'id' | 'created_at' | 'updated_at'>;

/** One event on its way to one hook, or a dead letter. */
export interface HookDelivery {
  id: number;
  hook_id: number;
  /** the event as JSON: exactly the body sent */
  event: string;
  state: 'pending' | 'dead';
  attempts: number;
  next_at: number;
  claimed_by: string;
  claimed_until: number;
  last_error: string;
  created_at: number;
}

const parseList = (s: string): string[] => {
  const v: unknown = JSON.parse(s);
  return Array.isArray(v) ? v.map(String) : [];
};

function hookFrom(r: Selectable<HooksTable>): Hook {
  return {
    id: Number(r.id),
    name: r.name,
    events: parseList(r.events),
    paths: parseList(r.paths),
    users: parseList(r.users),
    action: JSON.parse(r.action) as HookAction,
    disabled: bool(r.disabled),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

const deliveryFrom = (r: Selectable<HookDeliveriesTable>): HookDelivery => ({
  ...r,
  id: Number(r.id),
  hook_id: Number(r.hook_id),
  state: r.state === 'dead' ? 'dead' : 'pending',
  attempts: Number(r.attempts),
  next_at: Number(r.next_at),
  claimed_until: Number(r.claimed_until),
  created_at: Number(r.created_at),
});

const hookRow = (h: HookInput) => ({
  name: h.name,
  events: JSON.stringify(h.events),
  paths: JSON.stringify(h.paths),
  users: JSON.stringify(h.users),
  action: JSON.stringify(h.action),
  disabled: bit(h.disabled),
});

/** `hooks` and their outbox `hook_deliveries` (pending rows and dead letters). */
export class HooksRepo {
  constructor(private readonly h: DbHandle) {}

  async all(): Promise<Hook[]> {
    return (await this.h.db.selectFrom('hooks').selectAll().orderBy('id').execute()).map(hookFrom);
  }

  async list(page: number, perPage: number): Promise<{ hooks: Hook[]; total: number }> {
    let q = this.h.db.selectFrom('hooks').selectAll().orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await this.h.db.selectFrom('hooks').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { hooks: (await q.execute()).map(hookFrom), total: Number(count.n) };
  }

  async byId(id: number): Promise<Hook | undefined> {
    const r = await this.h.db.selectFrom('hooks').selectAll().where('id', '=', id).executeTakeFirst();
    return r && hookFrom(r);
  }

  async byName(name: string): Promise<Hook | undefined> {
    const r = await this.h.db.selectFrom('hooks').selectAll().where('name', '=', name).executeTakeFirst();
    return r && hookFrom(r);
  }

  async create(h: HookInput, now: number): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('hooks').values({ ...hookRow(h), created_at: now, updated_at: now }));
  }

  async update(id: number, h: HookInput, now: number): Promise<void> {
    await this.h.db.updateTable('hooks').set({ ...hookRow(h), updated_at: now }).where('id', '=', id).execute();
  }

  /** Removes the hook and every delivery it has (pending and dead). */
  async delete(id: number): Promise<void> {
    await this.h.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('hook_deliveries').where('hook_id', '=', id).execute();
      await trx.deleteFrom('hooks').where('id', '=', id).execute();
    });
  }

  /** The number of pending and dead deliveries of each hook that has any. */
  async counts(): Promise<Map<number, { pending: number; dead: number }>> {
    const rows = await this.h.db
      .selectFrom('hook_deliveries')
      .select(['hook_id', 'state', (eb) => eb.fn.countAll().as('n')])
      .groupBy(['hook_id', 'state'])
      .execute();
    const out = new Map<number, { pending: number; dead: number }>();
    for (const r of rows) {
      const c = out.get(Number(r.hook_id)) ?? { pending: 0, dead: 0 };
      if (r.state === 'dead') c.dead += Number(r.n);
      else c.pending += Number(r.n);
      out.set(Number(r.hook_id), c);
    }
    return out;
  }

  // ---- the outbox ----

  /** Queues events for hooks, in one statement: `[hook id, event JSON]` each, due now. */
  async enqueue(rows: Array<[number, string]>, now: number): Promise<void> {
    if (rows.length === 0) return;
    const values = rows.map(([hook_id, event]) => ({ hook_id, event, state: 'pending', attempts: 0, next_at: now, claimed_by: '', claimed_until: 0, last_error: '', created_at: now }));
    await this.h.db.insertInto('hook_deliveries').values(values).execute();
  }

  /** Ids of pending deliveries due at `now` that no live claim holds (oldest first). */
  async due(now: number, limit: number): Promise<number[]> {
    const rows = await this.h.db
      .selectFrom('hook_deliveries')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_at', '<=', now)
      .where('claimed_until', '<', now)
      .orderBy('next_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => Number(r.id));
  }

  /**
   * Takes one due delivery for `by` until `until`: one conditional update, so of several
   * processes asking at once exactly one gets it (on every database). The row, or undefined
   * when another process was first (or it is no longer pending).
   */
  async claim(id: number, by: string, now: number, until: number): Promise<HookDelivery | undefined> {
    const r = await this.h.db
      .updateTable('hook_deliveries')
      .set({ claimed_by: by, claimed_until: until })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('next_at', '<=', now)
      .where('claimed_until', '<', now)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return undefined;
    const row = await this.h.db.selectFrom('hook_deliveries').selectAll().where('id', '=', id).where('claimed_by', '=', by).where('claimed_until', '=', until).executeTakeFirst();
    return row && deliveryFrom(row);
  }

  /** A delivered event: its row goes (only while the claim is still ours). */
  async delivered(id: number, by: string, until: number): Promise<void> {
    await this.h.db.deleteFrom('hook_deliveries').where('id', '=', id).where('claimed_by', '=', by).where('claimed_until', '=', until).execute();
  }

  /** A failed attempt: counted, the claim released, due again at `nextAt` (or dead). */
  async failed(id: number, by: string, until: number, f: { attempts: number; nextAt: number; dead: boolean; error: string }): Promise<void> {
    await this.h.db
      .updateTable('hook_deliveries')
      .set({ attempts: f.attempts, next_at: f.nextAt, state: f.dead ? 'dead' : 'pending', last_error: f.error, claimed_by: '', claimed_until: 0 })
      .where('id', '=', id)
      .where('claimed_by', '=', by)
      .where('claimed_until', '=', until)
      .execute();
  }

  async dead(hookId: number, page: number, perPage: number): Promise<{ letters: HookDelivery[]; total: number }> {
    const where = this.h.db.selectFrom('hook_deliveries').where('hook_id', '=', hookId).where('state', '=', 'dead');
    let q = where.selectAll().orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await where.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { letters: (await q.execute()).map(deliveryFrom), total: Number(count.n) };
  }

  /** Dead letters sent again: pending, due now, attempts from zero. The number of letters revived. */
  async revive(ids: number[], now: number): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await this.h.db
      .updateTable('hook_deliveries')
      .set({ state: 'pending', attempts: 0, next_at: now, claimed_by: '', claimed_until: 0 })
      .where('id', 'in', ids)
      .where('state', '=', 'dead')
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Removes dead letters: these ids, or every one of a hook. The number removed. */
  async purge(sel: { ids?: number[]; hookId?: number }): Promise<number> {
    let q = this.h.db.deleteFrom('hook_deliveries').where('state', '=', 'dead');
    if (sel.ids) {
      if (sel.ids.length === 0) return 0;
      q = q.where('id', 'in', sel.ids);
    }
    if (sel.hookId !== undefined) q = q.where('hook_id', '=', sel.hookId);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
