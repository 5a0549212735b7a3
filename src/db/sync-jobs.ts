import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
import type { SyncJobsTable, SyncRunsTable } from './schema.js';

/** A sync job as stored (sync/job.ts gives the JSON columns their shape). */
export interface SyncJobRow {
  id: number;
  name: string;
  src: string;
  dst: string;
  mode: string;
  compare: string;
  filters: unknown;
  cron: string;
  timeZone: string;
  options: unknown;
  disabled: boolean;
  ownerId: number;
  owner: string;
  nextRun: number;
  createdAt: number;
  updatedAt: number;
}

export type SyncJobInput = Omit<SyncJobRow, 'id' | 'createdAt' | 'updatedAt'>;

/** One run's report as stored. */
export interface SyncRunRow {
  id: number;
  jobId: number;
  taskId: string;
  dryRun: boolean;
  state: string;
  startedAt: number;
  finishedAt: number;
  report: unknown;
  error: string;
}

/** What the last runs left in step at one relative path. */
export interface SyncStateRow {
  path: string;
  srcSize: number;
  srcMtime: number;
  dstSize: number;
  dstMtime: number;
}

const parse = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return {};
  }
};

function jobFrom(r: Selectable<SyncJobsTable>): SyncJobRow {
  return {
    id: Number(r.id),
    name: r.name,
    src: r.src,
    dst: r.dst,
    mode: r.mode,
    compare: r.compare,
    filters: parse(r.filters),
    cron: r.cron,
    timeZone: r.time_zone,
    options: parse(r.options),
    disabled: bool(r.disabled),
    ownerId: Number(r.owner_id),
    owner: r.owner,
    nextRun: Number(r.next_run),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

const runFrom = (r: Selectable<SyncRunsTable>): SyncRunRow => ({
  id: Number(r.id),
  jobId: Number(r.job_id),
  taskId: r.task_id,
  dryRun: bool(r.dry_run),
  state: r.state,
  startedAt: Number(r.started_at),
  finishedAt: Number(r.finished_at),
  report: parse(r.report),
  error: r.error,
});

const hashOf = (p: string) => createHash('sha256').update(p).digest('hex');

const columns = (j: SyncJobInput) => ({
  name: j.name,
  src: j.src,
  dst: j.dst,
  mode: j.mode,
  compare: j.compare,
  filters: JSON.stringify(j.filters),
  cron: j.cron,
  time_zone: j.timeZone,
  options: JSON.stringify(j.options),
  disabled: bit(j.disabled),
  owner_id: j.ownerId,
  owner: j.owner,
  next_run: j.nextRun,
});

/** Sync jobs, their run reports, their per-path state and the run lease (sync_jobs, sync_runs, sync_state). */
export class SyncJobsRepo {
  constructor(private readonly h: DbHandle) {}

  async list(page: number, perPage: number): Promise<{ jobs: SyncJobRow[]; total: number }> {
    let q = this.h.db.selectFrom('sync_jobs').selectAll().orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await this.h.db.selectFrom('sync_jobs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { jobs: (await q.execute()).map(jobFrom), total: Number(count.n) };
  }

  async byId(id: number): Promise<SyncJobRow | undefined> {
    const r = await this.h.db.selectFrom('sync_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? jobFrom(r) : undefined;
  }

  async byName(name: string): Promise<SyncJobRow | undefined> {
    const r = await this.h.db.selectFrom('sync_jobs').selectAll().where('name', '=', name).executeTakeFirst();
    return r ? jobFrom(r) : undefined;
  }

  async create(j: SyncJobInput, now = Date.now()): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('sync_jobs').values({ ...columns(j), lease_owner: '', lease_until: 0, created_at: now, updated_at: now }));
  }

  async update(id: number, j: SyncJobInput, now = Date.now()): Promise<void> {
    await this.h.db.updateTable('sync_jobs').set({ ...columns(j), updated_at: now }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('sync_jobs').where('id', '=', id).execute();
    await this.h.db.deleteFrom('sync_runs').where('job_id', '=', id).execute();
    await this.h.db.deleteFrom('sync_state').where('job_id', '=', id).execute();
  }

  /** Enabled jobs whose schedule is due at `now`. */
  async due(now: number): Promise<SyncJobRow[]> {
    const rows = await this.h.db.selectFrom('sync_jobs').selectAll().where('next_run', '>', 0).where('next_run', '<=', now).where('disabled', '=', 0).orderBy('next_run').limit(100).execute();
    return rows.map(jobFrom);
  }

  /** The earliest scheduled fire of an enabled job (0: none). */
  async nextDue(): Promise<number> {
    const r = await this.h.db.selectFrom('sync_jobs').select((eb) => eb.fn.min('next_run').as('n')).where('next_run', '>', 0).where('disabled', '=', 0).executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Moves a job's fire from `from` to `to`; true for the one node whose update did it (that node starts the run). */
  async claimFire(id: number, from: number, to: number): Promise<boolean> {
    const r = await this.h.db.updateTable('sync_jobs').set({ next_run: to }).where('id', '=', id).where('next_run', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Takes (or renews) the run lease of a job for `owner` until `until`; false while another node holds it. */
  async lease(id: number, owner: string, now: number, until: number): Promise<boolean> {
    const r = await this.h.db
      .updateTable('sync_jobs')
      .set({ lease_owner: owner, lease_until: until })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async release(id: number, owner: string): Promise<void> {
    await this.h.db.updateTable('sync_jobs').set({ lease_owner: '', lease_until: 0 }).where('id', '=', id).where('lease_owner', '=', owner).execute();
  }

  /** Voids every lease (a single-process database at start: whoever held one is gone). */
  async clearLeases(): Promise<void> {
    await this.h.db.updateTable('sync_jobs').set({ lease_owner: '', lease_until: 0 }).where('lease_until', '>', 0).execute();
  }

  /** Who holds the lease now ('' when nobody). */
  async leaseHolder(id: number, now: number): Promise<string> {
    const r = await this.h.db.selectFrom('sync_jobs').select(['lease_owner', 'lease_until']).where('id', '=', id).executeTakeFirst();
    return r && Number(r.lease_until) >= now ? r.lease_owner : '';
  }

  // ---- reports ----

  /** A run's report row, `queued` until its task begins. */
  async startRun(jobId: number, taskId: string, dryRun: boolean, now: number): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('sync_runs').values({ job_id: jobId, task_id: taskId, dry_run: bit(dryRun), state: 'queued', started_at: now, finished_at: 0, report: '{}', error: '' }));
  }

  async setRunTask(id: number, taskId: string): Promise<void> {
    await this.h.db.updateTable('sync_runs').set({ task_id: taskId }).where('id', '=', id).execute();
  }

  async markRunning(id: number, now: number): Promise<void> {
    await this.h.db.updateTable('sync_runs').set({ state: 'running', started_at: now }).where('id', '=', id).execute();
  }

  async runById(id: number): Promise<SyncRunRow | undefined> {
    const r = await this.h.db.selectFrom('sync_runs').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? runFrom(r) : undefined;
  }

  /** Writes a run's report; a finished one (`keep` given) drops the job's reports beyond the newest `keep`. */
  async saveRun(id: number, fields: { state: string; report: unknown; error: string; finishedAt: number }, keep?: { jobId: number; count: number }): Promise<void> {
    await this.h.db.updateTable('sync_runs').set({ state: fields.state, report: JSON.stringify(fields.report), error: fields.error, finished_at: fields.finishedAt }).where('id', '=', id).execute();
    if (!keep) return;
    const old = await this.h.db.selectFrom('sync_runs').select('id').where('job_id', '=', keep.jobId).orderBy('id', 'desc').offset(keep.count).limit(1_000).execute();
    if (old.length > 0) await this.h.db.deleteFrom('sync_runs').where('id', 'in', old.map((r) => Number(r.id))).execute();
  }

  /** A job's reports, newest first. */
  async runs(jobId: number, limit: number): Promise<SyncRunRow[]> {
    return (await this.h.db.selectFrom('sync_runs').selectAll().where('job_id', '=', jobId).orderBy('id', 'desc').limit(limit).execute()).map(runFrom);
  }

  // ---- the per-path state ----

  async state(jobId: number): Promise<Map<string, SyncStateRow>> {
    const out = new Map<string, SyncStateRow>();
    const rows = await this.h.db.selectFrom('sync_state').select(['path', 'src_size', 'src_mtime', 'dst_size', 'dst_mtime']).where('job_id', '=', jobId).execute();
    for (const r of rows) out.set(r.path, { path: r.path, srcSize: Number(r.src_size), srcMtime: Number(r.src_mtime), dstSize: Number(r.dst_size), dstMtime: Number(r.dst_mtime) });
    return out;
  }

  /** Records (replacing) and forgets paths of a job's state, in one transaction. */
  async writeState(jobId: number, put: SyncStateRow[], drop: string[]): Promise<void> {
    if (put.length === 0 && drop.length === 0) return;
    await this.h.db.transaction().execute(async (trx) => {
      const hashes = [...put.map((r) => hashOf(r.path)), ...drop.map(hashOf)];
      for (let i = 0; i < hashes.length; i += 500) await trx.deleteFrom('sync_state').where('job_id', '=', jobId).where('path_hash', 'in', hashes.slice(i, i + 500)).execute();
      for (let i = 0; i < put.length; i += 200) {
        const values = put.slice(i, i + 200).map((r) => ({ job_id: jobId, path_hash: hashOf(r.path), path: r.path, src_size: r.srcSize, src_mtime: r.srcMtime, dst_size: r.dstSize, dst_mtime: r.dstMtime }));
        await trx.insertInto('sync_state').values(values).execute();
      }
    });
  }
}
