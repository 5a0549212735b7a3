import type { TaskRow } from '../../src/db/tasks.js';

/** The tasks repository's contract in memory: rows by id (one table, shared by every manager given it). */
export class MemoryRepo {
  rows = new Map<string, TaskRow>();
  async upsert(row: TaskRow) {
    this.rows.set(row.id, { ...row });
  }
  async byId(id: string) {
    const r = this.rows.get(id);
    return r && { ...r };
  }
  async all() {
    return [...this.rows.values()].sort((a, b) => a.created_at - b.created_at);
  }
  async byKind(kind: string) {
    return (await this.all()).filter((r) => r.kind === kind);
  }
  async delete(id: string) {
    this.rows.delete(id);
  }
}
