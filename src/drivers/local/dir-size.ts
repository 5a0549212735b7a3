import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Entries one listing may visit to size its folders (`directory_size`), all folders together. */
export const DIR_SIZE_BUDGET = 200_000;
/** Folders of one listing sized at the same time. */
const PARALLEL = 8;

export interface SizeBudget {
  left: number;
}

/**
 * The bytes of every file below `dir` (a host path), or undefined when the budget ran out first
 * (the folder is then shown without a size). Symbolic links are not followed (a link cannot lead
 * the walk out of the root or round in a loop); unreadable entries count as nothing; names the
 * listing hides (`keep` false) are left out of the sum too.
 */
export async function folderSize(dir: string, budget: SizeBudget, keep: (name: string) => boolean): Promise<number | undefined> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const e of entries) {
    if (--budget.left < 0) return undefined;
    if (!keep(e.name) || e.isSymbolicLink()) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      const sub = await folderSize(full, budget, keep);
      if (sub === undefined) return undefined;
      total += sub;
    } else if (e.isFile()) {
      try {
        total += (await fs.lstat(full)).size;
      } catch {
        /* gone meanwhile */
      }
    }
  }
  return total;
}

/** Fills in the size of each folder of a listing of host folder `dir`, within one budget. */
export async function sizeFolders(dir: string, objs: Array<{ name: string; isDir: boolean; size: number; symlink?: boolean }>, keep: (name: string) => boolean): Promise<void> {
  const budget: SizeBudget = { left: DIR_SIZE_BUDGET };
  const folders = objs.filter((o) => o.isDir && !o.symlink);
  for (let i = 0; i < folders.length; i += PARALLEL) {
    await Promise.all(
      folders.slice(i, i + PARALLEL).map(async (o) => {
        o.size = (await folderSize(path.join(dir, o.name), budget, keep)) ?? 0;
      }),
    );
  }
}
