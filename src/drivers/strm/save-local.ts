import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Obj, VirtualFs } from '../types.js';

/** OpenList's SaveLocalMode: write missing files / also rewrite changed ones / also delete what is gone. */
export type SaveMode = 'insert' | 'update' | 'sync';

/** What a listed name of the Strm tree is, as far as saving it to disk goes. */
export type SavedEntry = { kind: 'dir'; obj: Obj } | { kind: 'pass'; source: string; obj: Obj } | { kind: 'strm'; content: Buffer; obj: Obj };

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    const st = await fs.stat(file);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Mirrors one listed folder of a Strm storage into `root` on this machine (SaveStrmToLocal), as
 * media servers that scan a disk folder want it: `.strm` files with their links, the
 * pass-through files (subtitles) with their bytes. Runs whenever the folder is listed.
 */
export async function saveStrmFiles(root: string, dir: string, entries: Map<string, SavedEntry>, mode: SaveMode, vfs: VirtualFs): Promise<void> {
  const segs = dir.split('/').filter(Boolean);
  const target = path.join(path.resolve(root), ...segs);
  await fs.mkdir(target, { recursive: true });
  for (const [name, e] of entries) {
    const file = path.join(target, name);
    if (e.kind === 'dir') {
      await fs.mkdir(file, { recursive: true });
      continue;
    }
    const have = await sizeOf(file);
    if (e.kind === 'strm') {
      if (have === undefined || (mode !== 'insert' && !(await fs.readFile(file)).equals(e.content))) await fs.writeFile(file, e.content);
    } else if (have === undefined || (mode !== 'insert' && have !== e.obj.size)) {
      const partial = `${file}.part`;
      await pipeline(await vfs.open(e.source, 0, e.obj.size - 1), createWriteStream(partial));
      await fs.rename(partial, file);
    }
  }
  if (mode !== 'sync') return;
  for (const name of await fs.readdir(target)) {
    if (!entries.has(name)) await fs.rm(path.join(target, name), { recursive: true, force: true });
  }
}
