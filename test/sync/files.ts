import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { TRASH_DIR } from '../../src/fs/trash.js';

/** Every file below `root` (relative, sorted), the trash and temp folders left out. */
export function filesBelow(root: string, rel = ''): string[] {
  if (!existsSync(path.join(root, rel))) return [];
  const out: string[] = [];
  for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (r === TRASH_DIR || r === '.atrium-tmp') continue;
    if (e.isDirectory()) out.push(...filesBelow(root, r));
    else out.push(r);
  }
  return out.sort();
}
