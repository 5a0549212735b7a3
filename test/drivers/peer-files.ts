import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A file of a host folder, or undefined when it is missing (or a folder). */
export function readHostFile(root: string, rel: string): Buffer | undefined {
  try {
    return readFileSync(path.join(root, rel));
  } catch {
    return undefined;
  }
}
