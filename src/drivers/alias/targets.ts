// The named virtual paths an overlay shows (Alias, Strm): `paths` as the original reads it, and
// which of those paths a path of the overlay stands for.

import { isKind } from '../../errors.js';
import path from 'node:path';
import { cleanPath, isSubPath } from '../../util/paths.js';
import { type Obj, ObjectNotFound, type VirtualFs } from '../types.js';

/**
 * `paths` as the original reads it: one entry per line, `/some/path` (named by its base name)
 * or `name:/some/path` (when `name` has no `/`). Entries sharing a name are merged, in order.
 */
export function parseAliasPaths(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    let name: string;
    let target: string;
    if (colon > 0 && !line.slice(0, colon).includes('/')) {
      name = line.slice(0, colon);
      target = cleanPath(line.slice(colon + 1));
    } else {
      target = cleanPath(line);
      name = path.posix.basename(target) || 'root';
    }
    const list = out.get(name) ?? [];
    list.push(target);
    out.set(name, list);
  }
  return out;
}

const folder = (name: string): Obj => ({ name, size: 0, isDir: true, modified: new Date(0) });

/**
 * An overlay's names and the virtual paths each stands for. With a single name its targets'
 * content is shown straight at the mount (flat); with several, the root holds one folder a name.
 */
export class AliasTargets {
  readonly byName: Map<string, string[]>;
  readonly flat: boolean;

  constructor(paths: unknown) {
    this.byName = parseAliasPaths(String(paths));
    this.flat = this.byName.size === 1;
  }

  /**
   * Refuses no paths at all, and a target inside the overlay's own mount `own` (the overlay would
   * show itself), in the words `inside` gives.
   */
  check(own: string, inside: (target: string) => string): void {
    if (this.byName.size === 0) throw new Error('paths is required');
    for (const list of this.byName.values()) {
      for (const t of list) if (isSubPath(own, t)) throw new Error(inside(t));
    }
  }

  /** The segments of an overlay path; `.`, `..` and NUL name nothing. */
  private segments(p: string): string[] {
    const segs = p.split('/').filter(Boolean);
    if (segs.some((s) => s === '.' || s === '..' || s.includes('\0'))) throw new ObjectNotFound();
    return segs;
  }

  /** The virtual paths `p` stands for, in order; undefined for the root of several names. */
  sources(p: string): string[] | undefined {
    const segs = this.segments(p);
    if (this.flat) return [...this.byName.values()][0]!.map((t) => cleanPath(path.posix.join(t, ...segs)));
    if (segs.length === 0) return undefined;
    const list = this.byName.get(segs[0]!);
    if (!list) throw new ObjectNotFound();
    return list.map((t) => cleanPath(path.posix.join(t, ...segs.slice(1))));
  }

  /** Whether `p` is one of several names: a folder of the root, standing for its targets. */
  isName(p: string): boolean {
    return !this.flat && this.segments(p).length === 1;
  }

  /** The folder the overlay itself shows at `p` (the root, or one of several names); undefined below them. */
  ownFolder(p: string): Obj | undefined {
    const segs = this.segments(p);
    if (segs.length === 0) return folder('');
    if (this.flat || segs.length > 1) return undefined;
    if (!this.byName.has(segs[0]!)) throw new ObjectNotFound();
    return folder(segs[0]!);
  }

  /** The root's folders, one a name. */
  rootFolders(): Obj[] {
    return [...this.byName.keys()].map(folder);
  }
}

/**
 * Lists each of `dirs` in turn and hands each listing to `take`; a missing folder is passed over.
 * Fails only when none could be listed: with the first other error, else as not found.
 */
export async function listEach(vfs: VirtualFs, dirs: string[], take: (dir: string, objs: Obj[]) => void): Promise<void> {
  let listed = false;
  let failure: unknown;
  for (const dir of dirs) {
    try {
      take(dir, await vfs.list(dir));
      listed = true;
    } catch (err) {
      if (!isKind(err, 'NotFound')) failure ??= err;
    }
  }
  if (!listed) throw failure ?? new ObjectNotFound();
}
