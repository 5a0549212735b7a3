import path from 'node:path';
import type { Readable } from 'node:stream';
import type { SyncJobsRepo, SyncStateRow } from '../db/sync-jobs.js';
import { BadRequest, isAbort } from '../errors.js';
import { Throttle, throttled } from '../net/speed-limit.js';
import type { LiveView } from '../view/live.js';
import type { View } from '../view/view.js';
import type { SyncJob } from './job.js';
import { atRoot, FOLDER_IN_THE_WAY, type Plan, type PlanOp } from './plan.js';

/** Paths listed per kind of change in a report (the counts are always whole). */
export const REPORT_ITEMS = 1000;

export interface Tally {
  files: number;
  bytes: number;
}

/** What a run did (or, dry, would do). */
export interface SyncReport {
  dry_run: boolean;
  copied: Tally;
  updated: Tally;
  deleted: Tally;
  skipped: Tally;
  failed: Tally;
  /** Each failure with its path and reason (the first REPORT_ITEMS). */
  failures: Array<{ path: string; reason: string }>;
  /** The paths copied, updated and deleted (the first REPORT_ITEMS of each), with why. */
  items: { copied: ReportItem[]; updated: ReportItem[]; deleted: ReportItem[] };
  duration_ms: number;
}

export interface ReportItem {
  path: string;
  side: 'src' | 'dst';
  size: number;
  reason: string;
}

export const emptyReport = (dry: boolean): SyncReport => ({
  dry_run: dry,
  copied: { files: 0, bytes: 0 },
  updated: { files: 0, bytes: 0 },
  deleted: { files: 0, bytes: 0 },
  skipped: { files: 0, bytes: 0 },
  failed: { files: 0, bytes: 0 },
  failures: [],
  items: { copied: [], updated: [], deleted: [] },
  duration_ms: 0,
});

/** What a run is given to report its progress (the task's context). */
export interface RunProgress {
  signal: AbortSignal;
  setStatus(s: string): void;
  setProgress(percent: number): void;
  setTotalBytes(n: number): void;
}

const bucketOf = (op: PlanOp): 'copied' | 'updated' | 'deleted' => (op.op === 'copy' ? 'copied' : op.op === 'update' || op.op === 'conflict' ? 'updated' : 'deleted');

/** A plan's changes counted into a report, as a dry run answers them. */
export function planReport(plan: Plan, dry: boolean): SyncReport {
  const r = emptyReport(dry);
  r.skipped = { files: plan.skipped, bytes: plan.skippedBytes };
  for (const op of plan.ops) {
    if (op.op === 'remove_src') continue;
    count(r, bucketOf(op), op);
  }
  return r;
}

function count(r: SyncReport, bucket: 'copied' | 'updated' | 'deleted', op: PlanOp): void {
  r[bucket].files++;
  r[bucket].bytes += op.size;
  if (r.items[bucket].length < REPORT_ITEMS) r.items[bucket].push({ path: op.path, side: op.op === 'delete' ? op.from : op.from === 'src' ? 'dst' : 'src', size: op.size, reason: op.reason });
}

/** Whether the storage holding `p` lists a put file with the time the put gave (false too where the owner may not read there). */
function keepsModified(view: View, p: string): boolean {
  try {
    return view.storageOf(p).driver?.keepsModified === true;
  } catch {
    return false;
  }
}

/** State records written in batches (a killed run loses at most the last one: those files compare equal or are copied again whole). */
class StateWriter {
  private put = new Map<string, SyncStateRow>();
  private drop = new Set<string>();
  private last = Date.now();

  constructor(private readonly repo: SyncJobsRepo, private readonly jobId: number) {}

  async record(row: SyncStateRow): Promise<void> {
    this.drop.delete(row.path);
    this.put.set(row.path, row);
    await this.maybeFlush();
  }

  async forget(p: string): Promise<void> {
    this.put.delete(p);
    this.drop.add(p);
    await this.maybeFlush();
  }

  private async maybeFlush(): Promise<void> {
    if (this.put.size + this.drop.size >= 200 || Date.now() - this.last > 500) await this.flush();
  }

  async flush(): Promise<void> {
    const put = [...this.put.values()];
    const drop = [...this.drop];
    this.put = new Map();
    this.drop = new Set();
    this.last = Date.now();
    await this.repo.writeState(this.jobId, put, drop);
  }
}

/**
 * Carries out a plan through the job owner's view as it is at each operation (so the owner's
 * bits, rules and locks decide every name, and every write is an ordinary write of the view:
 * audit, hooks, the trash). Files go through the storage's put, which writes a temporary file
 * and renames it (or, on S3, completes the object at once): a reader never sees a torn file.
 */
export class PlanRunner {
  private readonly report: SyncReport;
  private readonly state: StateWriter;
  private readonly throttle: Throttle | undefined;
  private readonly failedPaths = new Set<string>();
  private doneBytes = 0;
  private totalBytes = 0;

  constructor(
    private readonly job: SyncJob,
    private readonly live: LiveView<View>,
    repo: SyncJobsRepo,
    private readonly progress: RunProgress,
  ) {
    this.report = emptyReport(false);
    this.state = new StateWriter(repo, job.id);
    this.throttle = job.options.bandwidth_limit > 0 ? new Throttle(job.options.bandwidth_limit * 1024) : undefined;
  }

  private root(side: 'src' | 'dst'): string {
    return side === 'src' ? this.job.src : this.job.dst;
  }

  async run(plan: Plan): Promise<SyncReport> {
    const { max_deletes: maxDeletes, delete_phase: phase } = this.job.options;
    if (maxDeletes >= 0 && plan.deletes > maxDeletes) throw new BadRequest(`the run would delete ${plan.deletes} files, more than max_deletes (${maxDeletes}): nothing was changed`);
    this.report.skipped = { files: plan.skipped, bytes: plan.skippedBytes };
    for (const row of plan.settled) await this.state.record(row);
    for (const p of plan.forgotten) await this.state.forget(p);
    const transfers = plan.ops.filter((o) => o.op === 'copy' || o.op === 'update' || o.op === 'conflict');
    const deletes = plan.ops.filter((o) => o.op === 'delete');
    this.totalBytes = transfers.reduce((n, o) => n + o.size, 0);
    this.progress.setTotalBytes(this.totalBytes);
    if (phase === 'before' && this.job.mode === 'sync') await this.pool(deletes, 1, 'deleting');
    await this.makeFolders(plan);
    await this.pool(transfers, this.job.options.transfers, 'copying');
    if (phase !== 'before' || this.job.mode !== 'sync') await this.pool(deletes, 1, 'deleting');
    await this.pool(plan.ops.filter((o) => o.op === 'remove_src' && !this.failedPaths.has(o.path)), 1, 'removing the moved sources');
    await this.state.flush();
    this.progress.setProgress(100);
    return this.report;
  }

  /** The folders the copies need, made once each, parents first (each file's put then asks for none). */
  private async makeFolders(plan: Plan): Promise<void> {
    this.progress.setStatus('making folders');
    for (const side of ['dst', 'src'] as const) {
      for (const rel of plan.folders[side]) {
        this.progress.signal.throwIfAborted();
        const target = atRoot(this.root(side), rel);
        try {
          await (await this.live.now()).mkdir(target);
        } catch (err) {
          if (isAbort(err)) throw err;
          // The files below it fail on their own, each with its reason; the folder is named once.
          if (this.report.failures.length < REPORT_ITEMS) this.report.failures.push({ path: `${rel === '/' ? '' : rel}/`, reason: (err as Error).message || String(err) });
        }
      }
    }
  }

  private async pool(ops: PlanOp[], n: number, status: string): Promise<void> {
    if (ops.length === 0) return;
    this.progress.setStatus(status);
    let next = 0;
    const worker = async () => {
      while (next < ops.length) {
        this.progress.signal.throwIfAborted();
        const op = ops[next++]!;
        await this.attempt(op);
      }
    };
    await Promise.all(Array.from({ length: Math.min(n, ops.length) }, worker));
  }

  private async attempt(op: PlanOp): Promise<void> {
    try {
      await this.apply(op);
      if (op.op !== 'remove_src') count(this.report, bucketOf(op), op);
    } catch (err) {
      if (isAbort(err) || this.progress.signal.aborted) throw err;
      this.failedPaths.add(op.path);
      this.report.failed.files++;
      this.report.failed.bytes += op.size;
      if (this.report.failures.length < REPORT_ITEMS) this.report.failures.push({ path: op.path, reason: (err as Error).message || String(err) });
    }
  }

  private async apply(op: PlanOp): Promise<void> {
    const other = op.from === 'src' ? 'dst' : 'src';
    if (op.op === 'delete' || op.op === 'remove_src') {
      const target = atRoot(this.root(op.from), op.path);
      await (await this.live.now()).remove(path.posix.dirname(target), [path.posix.basename(target)], { permanent: op.op === 'remove_src' });
      if (op.op === 'delete') await this.state.forget(op.path);
      return;
    }
    if (op.op === 'conflict') {
      // Both kept: the destination's version renamed aside and copied back, then src's over the name.
      const keep = op.keep!;
      await (await this.live.now()).rename(atRoot(this.job.dst, op.path), path.posix.basename(keep), false);
      await this.transfer('dst', 'src', keep, 'none');
      await this.transfer('src', 'dst', op.path, 'none');
      return;
    }
    // What the listing found at the target: nothing (a new file), a file (an update); a folder in the way is left to the put to refuse.
    const known = op.op === 'update' ? 'file' : op.reason === FOLDER_IN_THE_WAY ? undefined : 'none';
    await this.transfer(op.from, other, op.path, known);
  }

  /** One file read from one side and put at the same relative path of the other; its state recorded. */
  private async transfer(from: 'src' | 'dst', to: 'src' | 'dst', rel: string, known?: 'file' | 'none'): Promise<void> {
    const view = await this.live.now();
    const target = atRoot(this.root(to), rel);
    view.checkPut(target);
    const { stream, size, obj } = await view.openRead(atRoot(this.root(from), rel));
    const body = (this.throttle ? throttled(stream, this.throttle) : stream) as Readable;
    const base = this.doneBytes;
    await view.put(target, {
      name: path.posix.basename(target),
      size,
      stream: body,
      modified: obj.modified,
      signal: this.progress.signal,
      onProgress: (b) => this.progress.setProgress(this.totalBytes > 0 ? Math.min(99, ((base + b) / this.totalBytes) * 100) : 99),
    }, true, known);
    this.doneBytes += size;
    const mtime = obj.modified.getTime();
    // The written side's time when its storage keeps the one given (else -1: the next run records what it lists).
    const written = keepsModified(view, target) ? mtime : -1;
    await this.state.record(from === 'src' ? { path: rel, srcSize: size, srcMtime: mtime, dstSize: size, dstMtime: written } : { path: rel, srcSize: size, srcMtime: written, dstSize: size, dstMtime: mtime });
  }
}
