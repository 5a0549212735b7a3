import type { Task } from '../tasks/manager.js';
import type { Obj } from '../drivers/types.js';
import { BadRequest } from '../errors.js';

/** What a batch move or copy does with a name already at its destination (OpenList's dialog). */
export interface BatchConflict {
  /** Replace it (files; a folder is replaced whole). */
  overwrite?: boolean;
  /** Leave it, and carry the other names. */
  skipExisting?: boolean;
  /** Copy only: go into a folder that exists on both sides and copy what it lacks, recursively. */
  merge?: boolean;
}

/** `recursive_move`'s `conflict_policy`: refuse before anything moves, replace, or leave the file where it is. */
export const CONFLICT_POLICIES = ['cancel', 'overwrite', 'skip'] as const;
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

/** Entries a merge looks at before it stops (the request would otherwise grow with the tree). */
export const MERGE_LIMIT = 10_000;

/** The view operations a merge needs (the per-user view: every name is decided as for a copy). */
export interface MergeSource {
  find(p: string): Promise<Obj | undefined>;
  list(p: string): Promise<{ objs: Obj[] }>;
  copy(srcDir: string, dstDir: string, names: string[], conflict?: boolean | BatchConflict): Promise<Task[]>;
}

const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/** The names not yet at `dstDir`. */
export async function absentAt(view: Pick<MergeSource, 'find'>, dstDir: string, names: string[]): Promise<string[]> {
  const absent: string[] = [];
  for (const n of names) if (!(await view.find(join(dstDir, n)))) absent.push(n);
  return absent;
}

/**
 * Copies what `dstDir` lacks: a name missing there is copied whole, a folder on both sides is
 * entered and merged, a file already there is left as it is. Bounded by MERGE_LIMIT entries.
 */
export async function mergeCopy(view: MergeSource, srcDir: string, dstDir: string, names: string[], budget = { left: MERGE_LIMIT }): Promise<Task[]> {
  const tasks: Task[] = [];
  const missing: string[] = [];
  for (const n of names) {
    if (--budget.left < 0) throw new BadRequest(`a merge looks at ${MERGE_LIMIT} entries at most: copy the folders one by one`);
    const there = await view.find(join(dstDir, n));
    if (!there) missing.push(n);
    else if (there.isDir && (await view.find(join(srcDir, n)))?.isDir) {
      const inner = (await view.list(join(srcDir, n))).objs.map((o) => o.name);
      tasks.push(...(await mergeCopy(view, join(srcDir, n), join(dstDir, n), inner, budget)));
    }
  }
  if (missing.length > 0) tasks.push(...(await view.copy(srcDir, dstDir, missing, false)));
  return tasks;
}
