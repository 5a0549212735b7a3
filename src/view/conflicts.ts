import type { Obj } from '../drivers/types.js';

/** What a batch move or copy does with a name already at its destination (OpenList's dialog). */
export interface BatchConflict {
  /** Replace it (files; a folder is replaced whole). */
  overwrite?: boolean;
  /** Leave it, and carry the other names. */
  skipExisting?: boolean;
  /** Copy only: go into a folder that exists on both sides and copy what it lacks, recursively (a task: fs/write.ts). */
  merge?: boolean;
}

/** `recursive_move`'s `conflict_policy`: refuse before anything moves, replace, or leave the file where it is. */
export const CONFLICT_POLICIES = ['cancel', 'overwrite', 'skip'] as const;
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

/** The view operation skip_existing needs. */
export interface ExistingNames {
  find(p: string): Promise<Obj | undefined>;
}

const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/** The names not yet at `dstDir`. */
export async function absentAt(view: ExistingNames, dstDir: string, names: string[]): Promise<string[]> {
  const absent: string[] = [];
  for (const n of names) if (!(await view.find(join(dstDir, n)))) absent.push(n);
  return absent;
}
