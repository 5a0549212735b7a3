import type { Obj } from '../drivers/types.js';
import { BadRequest, isKind } from '../errors.js';
import { differs, sameFile } from '../fs/compare.js';
import type { SyncStateRow } from '../db/sync-jobs.js';
import type { FilterSet } from './filters.js';
import type { SyncJob } from './job.js';

/** The entries a side may hold for one run (each listed once, in memory). */
export const MAX_ENTRIES = 1_000_000;

/** What a run sees of one side: its files and folders by relative path (`/a/b.txt`). */
export interface Tree {
  files: Map<string, Obj>;
  dirs: Set<string>;
  /** False when the side's root folder does not exist yet. */
  exists: boolean;
}

/** The listing operation a walk needs (the job owner's view at that moment). */
export type Lister = (p: string) => Promise<Obj[]>;

const joinRel = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);
export const atRoot = (root: string, rel: string) => (rel === '/' ? root : root === '/' ? rel : `${root}${rel}`);

/** Lists a tree below `root`, `parallel` folders at a time; a missing root is an empty tree. */
export async function walk(list: Lister, root: string, parallel = 8, signal?: AbortSignal): Promise<Tree> {
  const tree: Tree = { files: new Map(), dirs: new Set(), exists: true };
  const queue: string[] = ['/'];
  let entries = 0;
  const one = async (rel: string) => {
    let objs: Obj[];
    try {
      objs = await list(atRoot(root, rel));
    } catch (err) {
      if (rel === '/' && isKind(err, 'NotFound')) {
        tree.exists = false;
        return;
      }
      throw err;
    }
    for (const o of objs) {
      if (++entries > MAX_ENTRIES) throw new BadRequest(`a sync job lists ${MAX_ENTRIES} entries per side at most: split the job`);
      const r = joinRel(rel, o.name);
      if (o.isDir) {
        tree.dirs.add(r);
        queue.push(r);
      } else tree.files.set(r, o);
    }
  };
  while (queue.length > 0) {
    signal?.throwIfAborted();
    const batch = queue.splice(0, parallel);
    await Promise.all(batch.map(one));
  }
  return tree;
}

export const FOLDER_IN_THE_WAY = 'a folder is in the way';

export type OpKind = 'copy' | 'update' | 'delete' | 'remove_src' | 'conflict';

/** One change of a plan. `from`: the side whose file is read (copy, update) or changed (delete, remove_src). */
export interface PlanOp {
  op: OpKind;
  path: string;
  from: 'src' | 'dst';
  size: number;
  isDir?: boolean;
  reason: string;
  /** conflict, keep_both: the name the destination's version is kept under. */
  keep?: string;
}

export interface Plan {
  ops: PlanOp[];
  /** Files left as they are (unchanged). */
  skipped: number;
  skippedBytes: number;
  /** Paths whose state record is filled in or replaced without a transfer (both sides already equal). */
  settled: SyncStateRow[];
  /** Paths whose state record is dropped (gone on both sides). */
  forgotten: string[];
  deletes: number;
  /** Folders each side lacks for the files it receives, parents first (made before the copies). */
  folders: { src: string[]; dst: string[] };
}

const rec = (path: string, s: Obj, d: Obj): SyncStateRow => ({ path, srcSize: s.size, srcMtime: s.modified.getTime(), dstSize: d.size, dstMtime: d.modified.getTime() });

/**
 * Both sides as the last run left them: the record names the same sizes and times (a destination
 * that sets its own times on write, as S3, is known by what the run recorded after writing).
 */
export function inStep(r: SyncStateRow | undefined, s: Obj, d: Obj, window: number): boolean {
  if (!r || r.srcSize !== s.size || Math.abs(r.srcMtime - s.modified.getTime()) > window) return false;
  return r.dstSize === d.size && (r.dstMtime < 0 || Math.abs(r.dstMtime - d.modified.getTime()) <= window);
}

/** copy, sync, move: what makes dst hold src's files. */
export function planOneWay(job: SyncJob, src: Tree, dst: Tree, state: Map<string, SyncStateRow>, filters: FilterSet, now = Date.now()): Plan {
  const plan: Plan = { ops: [], skipped: 0, skippedBytes: 0, settled: [], forgotten: [], deletes: 0, folders: { src: [], dst: [] } };
  const window = job.options.modify_window;
  for (const [path, s] of src.files) {
    if (!filters.admits(path, s.size, s.modified, now)) continue;
    const d = dst.files.get(path);
    const r = state.get(path);
    if (!d) plan.ops.push({ op: 'copy', path, from: 'src', size: s.size, reason: dst.dirs.has(path) ? FOLDER_IN_THE_WAY : 'new' });
    else if (inStep(r, s, d, window) || sameFile(s, d, job.compare, window)) {
      plan.skipped++;
      plan.skippedBytes += s.size;
      if (!r || r.dstMtime < 0 || !inStep(r, s, d, 0)) plan.settled.push(rec(path, s, d));
    } else plan.ops.push({ op: 'update', path, from: 'src', size: s.size, reason: differs(s, d, job.compare, window) ?? 'changed' });
    if (job.mode === 'move') plan.ops.push({ op: 'remove_src', path, from: 'src', size: s.size, reason: 'moved' });
  }
  if (job.mode === 'sync') planDeletes(plan, src, dst, filters, now);
  for (const path of state.keys()) if (!src.files.has(path) && !dst.files.has(path)) plan.forgotten.push(path);
  plan.folders = foldersFor(plan.ops, src, dst);
  return plan;
}

/** sync: the destination's files and folders the source lacks (excluded files are kept, and so the folders holding them). */
function planDeletes(plan: Plan, src: Tree, dst: Tree, filters: FilterSet, now: number): void {
  const kept = new Set<string>();
  const extra: Array<[string, Obj]> = [];
  for (const [path, d] of dst.files) {
    if (src.files.has(path)) continue;
    if (!filters.admits(path, d.size, d.modified, now)) {
      for (let p = path; p !== '/'; p = p.slice(0, p.lastIndexOf('/')) || '/') kept.add(p);
      continue;
    }
    extra.push([path, d]);
  }
  const gone = [...dst.dirs].filter((p) => !src.dirs.has(p) && !kept.has(p)).sort();
  const removedDirs: string[] = [];
  for (const dir of gone) {
    if (removedDirs.some((r) => dir.startsWith(`${r}/`))) continue;
    removedDirs.push(dir);
    plan.ops.push({ op: 'delete', path: dir, from: 'dst', size: 0, isDir: true, reason: 'not in the source' });
  }
  for (const [path, d] of extra) {
    plan.deletes++;
    if (removedDirs.some((r) => path.startsWith(`${r}/`))) continue;
    plan.ops.push({ op: 'delete', path, from: 'dst', size: d.size, reason: 'not in the source' });
  }
}

/** The name a conflicting destination version is kept under (keep_both): `name.conflict-<stamp>.ext`. */
export function conflictName(path: string, at: number): string {
  const stamp = new Date(at).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const slash = path.lastIndexOf('/');
  const base = path.slice(slash + 1);
  const dot = base.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
  return `${path.slice(0, slash + 1)}${stem}.conflict-${stamp}${ext}`;
}

/** bisync's answer to a file changed on both sides. */
function resolveConflict(job: SyncJob, path: string, s: Obj, d: Obj, now: number): PlanOp {
  const rule = job.options.conflict;
  if (rule === 'keep_both') return { op: 'conflict', path, from: 'src', size: s.size + d.size, reason: 'changed on both sides: both kept', keep: conflictName(path, now) };
  const dstWins = rule === 'newer' && d.modified.getTime() > s.modified.getTime() + job.options.modify_window;
  const why = rule === 'newer' ? `changed on both sides: the newer (${dstWins ? 'dst' : 'src'}) wins` : 'changed on both sides: src wins';
  return dstWins ? { op: 'update', path, from: 'dst', size: d.size, reason: why } : { op: 'update', path, from: 'src', size: s.size, reason: why };
}

/**
 * bisync: changes on either side since the last run go to the other (the state records what the
 * last run left in step); a file changed on both sides follows the job's conflict rule; a file
 * deleted on one side and unchanged on the other is deleted there too (into its trash).
 */
export function planBisync(job: SyncJob, src: Tree, dst: Tree, state: Map<string, SyncStateRow>, filters: FilterSet, now = Date.now()): Plan {
  const plan: Plan = { ops: [], skipped: 0, skippedBytes: 0, settled: [], forgotten: [], deletes: 0, folders: { src: [], dst: [] } };
  const w = job.options.modify_window;
  const paths = new Set([...src.files.keys(), ...dst.files.keys()]);
  const sameAs = (o: Obj, size: number, mtime: number) => o.size === size && (mtime < 0 || Math.abs(o.modified.getTime() - mtime) <= w);
  for (const path of paths) {
    const s = src.files.get(path);
    const d = dst.files.get(path);
    const either = (s ?? d)!;
    if (!filters.admits(path, either.size, either.modified, now)) continue;
    const r = state.get(path);
    const sCh = !r || !s || !sameAs(s, r.srcSize, r.srcMtime);
    const dCh = !r || !d || !sameAs(d, r.dstSize, r.dstMtime);
    if (s && d) {
      if (r && !sCh && !dCh) {
        plan.skipped++;
        plan.skippedBytes += s.size;
        if (r.srcMtime < 0 || r.dstMtime < 0) plan.settled.push(rec(path, s, d));
      } else if (sameFile(s, d, job.compare, w)) {
        plan.skipped++;
        plan.skippedBytes += s.size;
        plan.settled.push(rec(path, s, d));
      } else if (r && sCh && !dCh) plan.ops.push({ op: 'update', path, from: 'src', size: s.size, reason: 'changed in src' });
      else if (r && !sCh && dCh) plan.ops.push({ op: 'update', path, from: 'dst', size: d.size, reason: 'changed in dst' });
      else plan.ops.push(resolveConflict(job, path, s, d, now));
    } else if (s) {
      if (r && !sCh) {
        plan.deletes++;
        plan.ops.push({ op: 'delete', path, from: 'src', size: s.size, reason: 'deleted in dst' });
      } else plan.ops.push({ op: 'copy', path, from: 'src', size: s.size, reason: r ? 'deleted in dst, changed in src' : 'new in src' });
    } else if (d) {
      if (r && !dCh) {
        plan.deletes++;
        plan.ops.push({ op: 'delete', path, from: 'dst', size: d.size, reason: 'deleted in src' });
      } else plan.ops.push({ op: 'copy', path, from: 'dst', size: d.size, reason: r ? 'deleted in src, changed in dst' : 'new in dst' });
    }
  }
  for (const path of state.keys()) if (!paths.has(path)) plan.forgotten.push(path);
  plan.folders = foldersFor(plan.ops, src, dst);
  return plan;
}

/** The folders a side lacks for the files the plan puts there (its root when the side has none yet), parents first. */
export function foldersFor(ops: PlanOp[], src: Tree, dst: Tree): { src: string[]; dst: string[] } {
  const need = { src: new Set<string>(), dst: new Set<string>() };
  const add = (side: 'src' | 'dst', file: string) => {
    const tree = side === 'src' ? src : dst;
    if (!tree.exists) need[side].add('/');
    for (let d = file.slice(0, file.lastIndexOf('/')); d !== ''; d = d.slice(0, d.lastIndexOf('/'))) if (!tree.dirs.has(d)) need[side].add(d);
  };
  for (const op of ops) {
    if (op.op === 'copy' || op.op === 'update') add(op.from === 'src' ? 'dst' : 'src', op.path);
    if (op.op === 'conflict') {
      add('dst', op.path);
      add('src', op.keep!);
    }
  }
  const order = (s: Set<string>) => [...s].sort((a, b) => (a === '/' ? -1 : b === '/' ? 1 : a.split('/').length - b.split('/').length || a.localeCompare(b)));
  return { src: order(need.src), dst: order(need.dst) };
}
