import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeTree } from '../helpers/files.js';

/** Writes a seed tree (keys relative to `root`, folders end in "/") straight into a host folder. */
export function writeTree(root: string, tree: Record<string, string | Buffer>): void {
  makeTree(tree, root);
}

/** A file of a host folder, or undefined when it is missing (or a folder). */
export function readHostFile(root: string, rel: string): Buffer | undefined {
  try {
    return readFileSync(path.join(root, rel));
  } catch {
    return undefined;
  }
}
