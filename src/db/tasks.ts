import type { Selectable } from 'kysely';
import type { DbHandle } from './index.js';
import type { TasksTable } from './schema.js';

/** A task's row; `creator_passwords` may be left out (none, as in rows written before migration 17). */
export type TaskRow = Omit<Selectable<TasksTable>, 'creator_passwords'> & { creator_passwords?: string | null };

export class TasksRepo {
  constructor(private readonly h: DbHandle) {}

  async upsert(row: TaskRow): Promise<void> {
    const { id, ...rest } = row;
    const updated = await this.h.db.updateTable('tasks').set(rest).where('id', '=', id).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) await this.h.db.insertInto('tasks').values(row).execute();
  }

  async byKind(kind: string): Promise<TaskRow[]> {
    return this.h.db.selectFrom('tasks').selectAll().where('kind', '=', kind).orderBy('created_at').execute();
  }

  async byId(id: string): Promise<TaskRow | undefined> {
    return this.h.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async all(): Promise<TaskRow[]> {
    return this.h.db.selectFrom('tasks').selectAll().orderBy('created_at').execute();
  }

  async delete(id: string): Promise<void> {
    await this.h.db.deleteFrom('tasks').where('id', '=', id).execute();
  }
}
