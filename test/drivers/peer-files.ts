import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Writes a seed tree (keys relative to `root`, folders end in "/") straight into a host folder. */
export function writeTree(root: string, tree: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(tree)) {
    const full = path.join(root, rel);
    if (rel.endsWith('/')) mkdirSync(full, { recursive: true });
    else {
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
}

/** A file of a host folder, or undefined when it is missing (or a folder). */
export function readHostFile(root: string, rel: string): Buffer | undefined {
  try {
    return readFileSync(path.join(root, rel));
  } catch {
    return undefined;
  }
}
