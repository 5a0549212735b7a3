import type { ExpressionBuilder } from 'kysely';
import type { OpEvent } from '../audit/events.js';
import type { DbHandle } from './index.js';
import type { Database } from './schema.js';

/** One stored event as the list route and the CLI answer it. */
export interface StoredEvent {
  id: number;
  /** ms since the epoch */
  time: number;
  user: string;
  front: string;
  op: string;
  path: string;
  dst_path: string;
  bytes: number;
  result: string;
  ip: string;
  request_id: string;
}

/** Which events to read: every field optional; `path` is a prefix (the path itself and below). */
export interface EventFilter {
  user?: string;
  op?: string;
  front?: string;
  path?: string;
  result?: string;
  /** ms since the epoch, inclusive */
  since?: number;
  /** ms since the epoch, exclusive */
  until?: number;
}

/** Rows per insert statement (bound parameters stay well below every engine's limit). */
const INSERT_ROWS = 500;

/** The audit log's table (`audit_events`, migration 13). */
export class AuditEventsRepo {
  constructor(private readonly h: DbHandle) {}

  /** Stores events, in multi-row inserts. */
  async insert(events: readonly OpEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += INSERT_ROWS) {
      const rows = events.slice(i, i + INSERT_ROWS).map((e) => ({
        time: e.time,
        username: e.user,
        front: e.front,
        op: e.op,
        path: e.path,
        dst_path: e.dst_path ?? '',
        bytes: e.bytes ?? 0,
        result: e.result,
        ip: e.ip ?? '',
        request_id: e.request_id ?? '',
      }));
      await this.h.db.insertInto('audit_events').values(rows).execute();
    }
  }

  /** Events matching `f`, newest first, and how many match in all. */
  async list(f: EventFilter, page: number, perPage: number): Promise<{ events: StoredEvent[]; total: number }> {
    const where = AuditEventsRepo.where(f);
    const rows = await this.h.db
      .selectFrom('audit_events')
      .selectAll()
      .where(where)
      .orderBy('time', 'desc')
      .orderBy('id', 'desc')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute();
    const count = await this.h.db.selectFrom('audit_events').select((eb) => eb.fn.countAll().as('n')).where(where).executeTakeFirstOrThrow();
    return { events: rows.map(AuditEventsRepo.from), total: Number(count.n) };
  }

  /** Deletes the events older than `before` (ms); returns how many. */
  async deleteBefore(before: number): Promise<number> {
    const r = await this.h.db.deleteFrom('audit_events').where('time', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  private static where(f: EventFilter) {
    return (eb: ExpressionBuilder<Database, 'audit_events'>) => {
      const conds = [];
      if (f.user !== undefined) conds.push(eb('username', '=', f.user));
      if (f.op !== undefined) conds.push(eb('op', '=', f.op));
      if (f.front !== undefined) conds.push(eb('front', '=', f.front));
      if (f.result !== undefined) conds.push(eb('result', '=', f.result));
      if (f.since !== undefined) conds.push(eb('time', '>=', f.since));
      if (f.until !== undefined) conds.push(eb('time', '<', f.until));
      if (f.path !== undefined && f.path !== '/') {
        // The path itself and everything below it: '/' < '0' in every collation used, so no LIKE (and no escaping).
        const p = f.path.replace(/\/+$/, '');
        conds.push(eb.or([eb('path', '=', p), eb.and([eb('path', '>=', `${p}/`), eb('path', '<', `${p}0`)])]));
      }
      return eb.and(conds);
    };
  }

  private static from(r: { id: number; time: number; username: string; front: string; op: string; path: string; dst_path: string; bytes: number; result: string; ip: string; request_id: string }): StoredEvent {
    return {
      id: Number(r.id),
      time: Number(r.time),
      user: r.username,
      front: r.front,
      op: r.op,
      path: r.path,
      dst_path: r.dst_path,
      bytes: Number(r.bytes),
      result: r.result,
      ip: r.ip,
      request_id: r.request_id,
    };
  }
}
