import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { SyncJobRow, SyncJobsRepo, SyncRunRow, SyncStateRow } from '../db/sync-jobs.js';
import type { User } from '../db/users.js';
import { Conflict, Exists, NotFound } from '../errors.js';
import { FinalTaskError } from '../tasks/creator.js';
import type { CompareMode } from '../fs/compare.js';
import type { Logger } from '../logger.js';
import type { Task, TaskContext, TaskManager } from '../tasks/manager.js';
import type { Views } from '../view/view.js';
import type { LiveView } from '../view/live.js';
import type { View } from '../view/view.js';
import { nextFire, parseCron } from './cron.js';
import { FilterSet, type SyncFilters } from './filters.js';
import { normalizeJob, type SyncJob, type SyncJobBody, type SyncMode, type SyncOptions } from './job.js';
import { atRoot, inStep, type Plan, planBisync, planOneWay, walk } from './plan.js';
import { type Digester, learnDigests } from './digests.js';
import { emptyReport, PlanRunner, planReport, type RunProgress, type SyncReport } from './run.js';

/** How long a node's hold on a running job lasts without renewal; renewed every third of it. */
export const LEASE_MS = 30_000;
/** How often the scheduler looks for due jobs (at most; sooner when one is due sooner). */
const TICK_MS = 15_000;

/** A sync task's payload: the job, and the report it writes (`queued` until the run begins; a resumed run finds it `running` and carries on). */
interface SyncPayload {
  job_id: number;
  dry_run: boolean;
  run_id: number;
}

export interface SyncDeps {
  repo: SyncJobsRepo;
  views: () => Views;
  tasks: TaskManager;
  users: { byId(id: number): Promise<User | undefined> };
  log: Logger;
  /** One process holds a SQLite database (cli/server-lock.ts): a lease left by a killed process is void at start. */
  singleProcess: boolean;
}

function jobOf(r: SyncJobRow): SyncJob {
  const n = normalizeJob({ name: r.name, src: r.src, dst: r.dst, mode: r.mode, compare: r.compare, filters: r.filters as SyncJobBody['filters'], schedule: { cron: r.cron, time_zone: r.timeZone }, options: r.options as SyncJobBody['options'], disabled: r.disabled });
  return { ...n, id: r.id, ownerId: r.ownerId, owner: r.owner, nextRun: r.nextRun, createdAt: r.createdAt, updatedAt: r.updatedAt };
}

/** A job on the wire (docs/sync-and-trash.md). */
export interface SyncJobJson {
  id: number;
  name: string;
  src: string;
  dst: string;
  mode: SyncMode;
  compare: CompareMode;
  filters: SyncFilters;
  schedule: { cron: string; time_zone: string };
  options: SyncOptions;
  disabled: boolean;
  owner: string;
  owner_id: number;
  next_run: number;
  running: boolean;
  created_at: number;
  updated_at: number;
  last_run: SyncRunJson | null;
}

export interface SyncRunJson {
  id: number;
  job_id: number;
  task_id: string;
  dry_run: boolean;
  state: string;
  started_at: number;
  finished_at: number;
  error: string;
  report: SyncReport;
}

export const runJson = (r: SyncRunRow): SyncRunJson => ({ id: r.id, job_id: r.jobId, task_id: r.taskId, dry_run: r.dryRun, state: r.state, started_at: r.startedAt, finished_at: r.finishedAt, error: r.error, report: { ...emptyReport(r.dryRun), ...(r.report as Partial<SyncReport>) } });

/**
 * Sync jobs (docs/sync-and-trash.md): kept in the database, each run a task of kind `sync` that
 * works through the owner's view, one node at a time (a lease in the job's row), started by hand
 * or by the job's cron schedule (the node whose update moves the job's next fire on starts it).
 */
export class SyncService {
  readonly nodeId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(private readonly d: SyncDeps) {
    d.tasks.registerResumer('sync', (p) => (ctx) => this.runTask(p as SyncPayload, ctx));
  }

  private async row(id: number): Promise<SyncJobRow> {
    const r = await this.d.repo.byId(id);
    if (!r) throw new NotFound('sync job not found');
    return r;
  }

  async job(id: number): Promise<SyncJob> {
    return jobOf(await this.row(id));
  }

  async byName(name: string): Promise<SyncJob> {
    const r = await this.d.repo.byName(name);
    if (!r) throw new NotFound(`no sync job named ${name}`);
    return jobOf(r);
  }

  private async json(j: SyncJob): Promise<SyncJobJson> {
    const [last] = await this.d.repo.runs(j.id, 1);
    const running = (await this.d.repo.leaseHolder(j.id, Date.now())) !== '';
    return {
      id: j.id, name: j.name, src: j.src, dst: j.dst, mode: j.mode, compare: j.compare, filters: j.filters, schedule: j.schedule, options: j.options, disabled: j.disabled,
      owner: j.owner, owner_id: j.ownerId, next_run: j.nextRun, running, created_at: j.createdAt, updated_at: j.updatedAt, last_run: last ? runJson(last) : null,
    };
  }

  async list(page: number, perPage: number): Promise<{ content: SyncJobJson[]; total: number }> {
    const { jobs, total } = await this.d.repo.list(page, perPage);
    const content: SyncJobJson[] = [];
    for (const r of jobs) content.push(await this.json(jobOf(r)));
    return { content, total };
  }

  /** A job with its last reports (newest first). */
  async get(id: number): Promise<SyncJobJson & { reports: SyncRunJson[] }> {
    const j = await this.job(id);
    const reports = (await this.d.repo.runs(id, j.options.keep_reports)).map(runJson);
    return { ...(await this.json(j)), reports };
  }

  private nextOf(n: { schedule: { cron: string; time_zone: string }; disabled: boolean }, after: number): number {
    if (!n.schedule.cron || n.disabled) return 0;
    return nextFire(parseCron(n.schedule.cron), n.schedule.time_zone, after) ?? 0;
  }

  async create(owner: User, body: SyncJobBody, now = Date.now()): Promise<SyncJobJson> {
    const n = normalizeJob(body);
    if (await this.d.repo.byName(n.name)) throw new Exists(`a sync job named ${n.name} exists`);
    const id = await this.d.repo.create({ ...this.columns(n), ownerId: owner.id, owner: owner.username, nextRun: this.nextOf(n, now) }, now);
    return this.json(await this.job(id));
  }

  async update(id: number, body: SyncJobBody, now = Date.now()): Promise<SyncJobJson> {
    const old = await this.row(id);
    const n = normalizeJob(body);
    const other = await this.d.repo.byName(n.name);
    if (other && other.id !== id) throw new Exists(`a sync job named ${n.name} exists`);
    await this.d.repo.update(id, { ...this.columns(n), ownerId: old.ownerId, owner: old.owner, nextRun: this.nextOf(n, now) }, now);
    return this.json(await this.job(id));
  }

  private columns(n: ReturnType<typeof normalizeJob>) {
    return { name: n.name, src: n.src, dst: n.dst, mode: n.mode, compare: n.compare, filters: n.filters, cron: n.schedule.cron, timeZone: n.schedule.time_zone, options: n.options, disabled: n.disabled };
  }

  async delete(id: number): Promise<void> {
    await this.row(id);
    await this.d.repo.delete(id);
  }

  /** Starts a run (a task of kind `sync`, created by the job's owner). */
  async run(id: number, opts: { dryRun?: boolean } = {}): Promise<Task> {
    const j = await this.job(id);
    const holder = await this.d.repo.leaseHolder(id, Date.now());
    if (holder) throw new Conflict(`sync job ${j.name} is running (on ${holder})`);
    const user = await this.d.users.byId(j.ownerId);
    if (!user || user.disabled) throw new Conflict(`the owner of sync job ${j.name} is deleted or disabled`);
    const dryRun = opts.dryRun ?? j.options.dry_run;
    const payload: SyncPayload = { job_id: id, dry_run: dryRun, run_id: await this.d.repo.startRun(id, '', dryRun, Date.now()) };
    const task = await this.d.tasks.submitStored({
      kind: 'sync',
      name: `sync ${j.name} (${j.mode}) [${j.src}] to [${j.dst}]${payload.dry_run ? ' (dry run)' : ''}`,
      creator: { id: user.id, username: user.username, role: user.role },
      payload,
      run: (ctx) => this.runTask(payload, ctx),
    });
    await this.d.repo.setRunTask(payload.run_id, task.id);
    return task;
  }

  private live(j: SyncJob): LiveView<View> {
    return this.d.views().live({ id: j.ownerId, pwdTs: 0 }, { front: 'api', origin: { front: 'task', requestId: `sync:${j.id}` } });
  }

  /** What the last runs recorded of each file of job `id` (sizes and times on both sides), by relative path. */
  async stateOf(id: number): Promise<Map<string, SyncStateRow>> {
    return this.d.repo.state(id);
  }

  /** What a run would do now, without writing anything. */
  async dryRun(id: number): Promise<SyncReport> {
    const j = await this.job(id);
    const started = Date.now();
    const report = planReport(await this.plan(j, this.live(j)), true);
    report.duration_ms = Date.now() - started;
    return report;
  }

  private async plan(j: SyncJob, live: LiveView<View>, signal?: AbortSignal): Promise<Plan> {
    const list = async (p: string) => (await (await live.now()).list(p, { refresh: true })).objs;
    // Both sides and the last run's record at once: the listings' waits overlap.
    const [src, dst, state] = await Promise.all([walk(list, j.src, 8, signal), walk(list, j.dst, 8, signal), this.d.repo.state(j.id)]);
    if (!src.exists) throw new NotFound(`the source folder ${j.src} does not exist`);
    if (j.compare === 'checksum') {
      const digest: Digester = async (side, rel, algo) => (await live.now()).localDigest(atRoot(side === 'src' ? j.src : j.dst, rel), algo, signal);
      await learnDigests(src, dst, (rel, s, d) => inStep(state.get(rel), s, d, j.options.modify_window), digest, j.options.transfers, signal);
    }
    const filters = new FilterSet(j.filters);
    return j.mode === 'bisync' ? planBisync(j, src, dst, state, filters) : planOneWay(j, src, dst, state, filters);
  }

  /** Takes the job's lease; a resumed run waits for a dead node's lease to run out, a new one is refused. */
  private async takeLease(j: SyncJob, resumed: boolean, signal: AbortSignal): Promise<void> {
    const until = Date.now() + LEASE_MS + 5_000;
    for (;;) {
      const now = Date.now();
      if (await this.d.repo.lease(j.id, this.nodeId, now, now + LEASE_MS)) return;
      if (!resumed || now > until) throw new FinalTaskError('Conflict', `sync job ${j.name} is running on another node`);
      signal.throwIfAborted();
      await new Promise((r) => setTimeout(r, 1000).unref());
    }
  }

  /** One run: the lease, the plan, the changes, the report. */
  private async runTask(p: SyncPayload, ctx: TaskContext): Promise<void> {
    const row = await this.d.repo.byId(p.job_id);
    if (!row) throw new FinalTaskError('NotFound', 'the sync job was deleted');
    const j = jobOf(row);
    await ctx.rules();
    const resumed = (await this.d.repo.runById(p.run_id))?.state === 'running';
    await this.takeLease(j, resumed, ctx.signal);
    const lost = new AbortController();
    const renew = setInterval(() => {
      const now = Date.now();
      this.d.repo.lease(j.id, this.nodeId, now, now + LEASE_MS).then(
        (held) => held || lost.abort(new FinalTaskError('Conflict', 'the run lost its lease on the job')),
        (err: unknown) => this.d.log.warn({ err, job: j.id }, 'renewing a sync lease failed'),
      );
    }, LEASE_MS / 3);
    renew.unref();
    const started = Date.now();
    const runId = p.run_id;
    if (!resumed) await this.d.repo.markRunning(runId, started);
    const signal = AbortSignal.any([ctx.signal, lost.signal]);
    let report = emptyReport(p.dry_run);
    try {
      ctx.setStatus('listing');
      const live = this.live(j);
      const plan = await this.plan(j, live, signal);
      const progress: RunProgress = { signal, setStatus: (s) => ctx.setStatus(s), setProgress: (n) => ctx.setProgress(n), setTotalBytes: (n) => ctx.setTotalBytes(n) };
      report = p.dry_run ? planReport(plan, true) : await new PlanRunner(j, live, this.d.repo, progress).run(plan);
      report.duration_ms = Date.now() - started;
      const failed = report.failed.files > 0 ? `${report.failed.files} file(s) failed: see the job's report` : '';
      await this.d.repo.saveRun(runId, { state: failed ? 'failed' : 'succeeded', report, error: failed, finishedAt: Date.now() }, { jobId: j.id, count: j.options.keep_reports });
      ctx.setStatus(summary(report));
      if (failed) throw new FinalTaskError('Upstream', failed);
    } catch (err) {
      if (!(err instanceof FinalTaskError && err.message.endsWith("see the job's report"))) {
        const reason = lost.signal.aborted ? (lost.signal.reason as Error).message : ctx.signal.aborted ? 'canceled' : (err as Error).message;
        report.duration_ms = Date.now() - started;
        await this.d.repo.saveRun(runId, { state: ctx.signal.aborted ? 'canceled' : 'failed', report, error: reason, finishedAt: Date.now() }, { jobId: j.id, count: j.options.keep_reports });
      }
      throw err;
    } finally {
      clearInterval(renew);
      await this.d.repo.release(j.id, this.nodeId).catch(() => undefined);
    }
  }

  // ---- the schedule ----

  /** Starts the scheduler (the server does; CLI commands do not). */
  start(): void {
    if (this.timer) return;
    const loop = () => {
      void this.tick().finally(() => {
        if (this.timer) this.timer = setTimeout(loop, TICK_MS).unref();
      });
    };
    this.timer = setTimeout(loop, 1000).unref();
    if (this.d.singleProcess) void this.d.repo.clearLeases().catch((err: unknown) => this.d.log.warn({ err }, 'clearing sync leases failed'));
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Starts the runs due at `now` (a fire missed while no node ran is started once, late); the runs started. */
  async tick(now = Date.now()): Promise<Task[]> {
    if (this.ticking) return [];
    this.ticking = true;
    const started: Task[] = [];
    try {
      for (const r of await this.d.repo.due(now)) {
        const j = jobOf(r);
        if (!(await this.d.repo.claimFire(j.id, r.nextRun, this.nextOf(j, Math.max(now, r.nextRun))))) continue;
        try {
          started.push(await this.run(j.id));
        } catch (err) {
          this.d.log.warn({ err, job: j.id }, `the scheduled run of sync job ${j.name} did not start`);
        }
      }
    } finally {
      this.ticking = false;
    }
    return started;
  }
}

/** A finished run in one line (the task's status). */
export function summary(r: SyncReport): string {
  const verb = r.dry_run ? 'would copy' : 'copied';
  return `${verb} ${r.copied.files}, ${r.dry_run ? 'update' : 'updated'} ${r.updated.files}, ${r.dry_run ? 'delete' : 'deleted'} ${r.deleted.files}, skipped ${r.skipped.files}, failed ${r.failed.files}`;
}
