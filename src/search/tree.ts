import { isKind } from '../errors.js';
import type { Obj } from '../drivers/types.js';
import type { Fs } from '../fs/fs.js';
import { STATUS_WORK } from '../fs/storages.js';
import type { Settings } from '../settings/service.js';
import { isSubPath } from '../util/paths.js';
import { inTrash, TRASH_DIR } from '../fs/trash.js';

/**
 * What the indexer walks: folder listings and single objects of the virtual tree, as the admin
 * sees it (hidden and password-protected entries included; search filters per user).
 */
export interface TreeSource {
  /** The entries of a folder; throws when it cannot be listed. */
  list(dir: string): Promise<Obj[]>;
  /** One object, or undefined when nothing is there. */
  stat(virtualPath: string): Promise<Obj | undefined>;
}

/**
 * The live tree through the mount table. Listings go straight to the drivers, bypassing the
 * listing cache, so a walk over a million entries neither reads stale data nor fills the cache.
 */
export class FsTreeSource implements TreeSource {
  constructor(private readonly fs: Fs) {}

  async list(dir: string): Promise<Obj[]> {
    const storages = this.fs.storages;
    await storages.ready(dir);
    const virtual = storages.virtualChildren(dir).map((v) => ({ name: v.name, size: 0, isDir: true, modified: new Date(v.modified) }));
    const resolved = storages.resolve(dir);
    if (!resolved) return virtual;
    const { storage, actualPath } = resolved;
    if (storage.row.status !== STATUS_WORK || !storage.driver) throw new Error(`storage not init: ${storage.row.status}`);
    // The storage's trash is no part of the tree (fs/trash.ts).
    if (inTrash(actualPath)) return [];
    let objs: Obj[];
    try {
      objs = await storage.driver.list(actualPath);
      if (actualPath === '/') objs = objs.filter((o) => o.name !== TRASH_DIR);
    } catch (err) {
      if (isKind(err, 'NotFound') && virtual.length > 0) objs = [];
      else throw err;
    }
    if (virtual.length === 0) return objs;
    const names = new Set(objs.map((o) => o.name));
    return [...objs, ...virtual.filter((v) => !names.has(v.name))];
  }

  async stat(virtualPath: string): Promise<Obj | undefined> {
    try {
      return (await this.fs.get(virtualPath)).obj;
    } catch {
      return undefined;
    }
  }
}

/**
 * Paths the index leaves out: the lines of the `ignore_paths` setting and the mount paths of
 * storages with `disable_index`. Matching is path-aware (`/a` ignores `/a/b`, not `/ab`).
 */
export function ignoredPaths(settings: Settings, fs: Fs): string[] {
  const lines = settings
    .get('ignore_paths')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('/'));
  const disabled = fs.storages
    .all()
    .filter((m) => m.row.disable_index)
    .map((m) => m.actualMount);
  return [...lines, ...disabled];
}

export function isIgnored(ignored: string[], virtualPath: string): boolean {
  return ignored.some((p) => isSubPath(p, virtualPath) && p !== '/');
}

/** Number of path segments: `/` is 0, `/a` 1, `/a/b` 2. */
export function depthOf(virtualPath: string): number {
  return virtualPath === '/' ? 0 : virtualPath.split('/').length - 1;
}
