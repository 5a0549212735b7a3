import path from 'node:path';
import type { Driver, Link, LinkArgs, Obj } from '../drivers/types.js';
import { AppError, isAbort, isKind, KindError, Missing, Unavailable, Unsupported, Upstream } from '../errors.js';
import { naturalCompare } from '../util/natural-compare.js';
import type { ListingCache } from './cache.js';
import { type Mounted, STATUS_WORK, type Storages } from './storages.js';
import { inTrash, TRASH_DIR } from './trash.js';

export const MSG_OBJECT_NOT_FOUND = 'object not found';


/** Storage-level sorting of drivers with local sort (wire-api.md §7.7). */
export function sortObjs(objs: Obj[], orderBy: string, direction: string, extractFolder: string): Obj[] {
  let out = objs;
  if (orderBy === 'name' || orderBy === 'size' || orderBy === 'modified') {
    const sign = direction === 'desc' ? -1 : 1;
    const cmp =
      orderBy === 'name'
        ? (a: Obj, b: Obj) => naturalCompare(a.name, b.name)
        : orderBy === 'size'
          ? (a: Obj, b: Obj) => a.size - b.size
          : (a: Obj, b: Obj) => a.modified.getTime() - b.modified.getTime();
    out = [...objs].sort((a, b) => sign * cmp(a, b));
  }
  if (extractFolder === 'front' || extractFolder === 'back') {
    const dirs = out.filter((o) => o.isDir);
    const files = out.filter((o) => !o.isDir);
    out = extractFolder === 'front' ? [...dirs, ...files] : [...files, ...dirs];
  }
  return out;
}

/** A missing object as clients see it (500 with the original's text); overlay drivers (Alias,
 * Crypt) recognise its kind to report the object as missing in turn. */
export const MissingObject = Missing;

/** A folder where a file is needed (kind BadRequest: raw links answer 400; OpenList's API 500: server/api-codes.ts). */
export class NotAFile extends KindError {
  constructor() {
    super('BadRequest', 'not a file');
  }
}

/** A driver's failure as this server reports it: a missing object in the original's words, typed errors kept, the rest as the peer's text. */
export function wrapNotFound(prefix: string, err: unknown): never {
  if (isKind(err, 'NotFound')) throw new MissingObject(`${prefix}${(err as Error).message}`);
  if (err instanceof AppError || isAbort(err)) throw err;
  throw new Upstream(`${prefix}${(err as Error).message}`);
}


/** A path into a storage's trash folder is, for every front, no path at all (fs/trash.ts reaches it). */
function outsideTrash<T extends { actualPath: string }>(r: T): T {
  if (inTrash(r.actualPath)) throw new MissingObject('object not found');
  return r;
}

/**
 * The virtual filesystem: every operation clients can ask for lives here once, on cleaned
 * absolute virtual paths, whatever protocol asked. Access rules are applied by the caller's
 * per-user view above (src/view); this layer knows storages, drivers and caches.
 */
export class Fs {
  /** Called after a write dropped cached listings (the cluster passes it to other processes). */
  onInvalidate: (storageId: number, actualPath: string, recursive: boolean) => void = () => {};

  constructor(
    readonly storages: Storages,
    private readonly cache: ListingCache,
  ) {}

  private working(storage: Mounted) {
    if (storage.row.status !== STATUS_WORK || !storage.driver) throw new Unavailable(`storage not init: ${storage.row.status}`);
    return storage.driver;
  }

  /** The storage owning a path, or the original's error when none does. */
  resolveStorage(virtualPath: string): { storage: Mounted; actualPath: string } {
    const r = this.storages.resolve(virtualPath);
    if (r) return outsideTrash(r);
    if (virtualPath === '/') throw new MissingObject('failed get storage: storage not found; please add a storage first');
    throw new MissingObject(`failed get storage: storage not found; rawPath: ${virtualPath}`);
  }

  /**
   * The working driver and its path behind a virtual path, for capabilities this layer does not
   * wrap itself (archives read on the storage's side, src/archive/service.ts).
   */
  async driverAt(virtualPath: string): Promise<{ driver: Driver; actualPath: string; storage: Mounted }> {
    await this.storages.ready(virtualPath);
    const { storage, actualPath } = this.resolveStorage(virtualPath);
    return { driver: this.working(storage), actualPath, storage };
  }

  /** A folder's entries from its storage (cached per storage settings), sorted, then virtual mounts merged in. */
  async list(virtualPath: string, opts: { refresh?: boolean } = {}): Promise<{ objs: Obj[]; storage?: Mounted }> {
    await this.storages.ready(virtualPath);
    const virtual = this.storages.virtualChildren(virtualPath);
    const resolved = this.storages.resolve(virtualPath);
    if (!resolved) {
      if (virtual.length === 0) this.resolveStorage(virtualPath);
      return { objs: virtual.map((v) => ({ name: v.name, size: 0, isDir: true, modified: new Date(v.modified) })) };
    }
    const { storage, actualPath } = outsideTrash(resolved);
    let objs: Obj[];
    try {
      objs = await this.listStorage(storage, actualPath, opts.refresh ?? false);
      // The trash folder at a storage's root is listed by no front (fs/trash.ts).
      if (actualPath === '/' && objs.some((o) => o.name === TRASH_DIR)) objs = objs.filter((o) => o.name !== TRASH_DIR);
    } catch (err) {
      // A mount below a path its parent storage does not have still lists its virtual folders.
      if (isKind(err, 'NotFound') && virtual.length > 0) objs = [];
      else wrapNotFound('failed get objs: failed get dir: ', err);
    }
    if (virtual.length === 0) return { objs, storage };
    const names = new Set(objs.map((o) => o.name));
    const merged = [...objs];
    for (const v of virtual) {
      if (!names.has(v.name)) merged.push({ name: v.name, size: 0, isDir: true, modified: new Date(v.modified) });
    }
    return { objs: merged, storage };
  }

  private async listStorage(storage: Mounted, actualPath: string, refresh: boolean): Promise<Obj[]> {
    const driver = this.working(storage);
    const ttl = storage.factory.config.noCache ? 0 : storage.row.cache_expiration * 60_000;
    if (!refresh && ttl > 0) {
      const hit = this.cache.get(storage.row.id, actualPath);
      if (hit && (hit.stamp === undefined || !driver.listStamp || hit.stamp === (await driver.listStamp(actualPath).catch(() => '')))) {
        return hit.objs;
      }
    }
    const stamp = ttl > 0 && driver.listStamp ? await driver.listStamp(actualPath) : undefined;
    let objs = await driver.list(actualPath, { refresh });
    if (storage.factory.config.localSort) {
      objs = sortObjs(objs, storage.row.order_by, storage.row.order_direction, storage.row.extract_folder);
    }
    if (ttl > 0) this.cache.set(storage.row.id, actualPath, objs, ttl, stamp);
    else this.cache.invalidate(storage.row.id, actualPath);
    return objs;
  }

  /** One object. Paths that exist only as mount points are folders; `/` always exists. */
  async get(virtualPath: string): Promise<{ obj: Obj; storage?: Mounted }> {
    await this.storages.ready(virtualPath);
    const name = virtualPath === '/' ? 'root' : path.posix.basename(virtualPath);
    const resolved = this.storages.resolve(virtualPath);
    const virtualFolder = () => {
      const children = this.storages.virtualChildren(virtualPath);
      if (children.length === 0 && virtualPath !== '/') return undefined;
      const modified = this.storages.all().find((m) => m.actualMount.startsWith(virtualPath))?.row.modified ?? 0;
      return { name, size: 0, isDir: true, modified: new Date(modified) };
    };
    if (!resolved) {
      const v = virtualFolder();
      if (!v) this.resolveStorage(virtualPath);
      return { obj: v! };
    }
    const { storage, actualPath } = outsideTrash(resolved);
    try {
      const obj = await this.working(storage).get(actualPath);
      return { obj: { ...obj, name: actualPath === '/' ? name : obj.name }, storage };
    } catch (err) {
      const v = isKind(err, 'NotFound') ? virtualFolder() : undefined;
      if (v) return { obj: v, storage };
      wrapNotFound('failed get obj: ', err);
    }
  }

  /** How to read a file: the driver's link (a URL to redirect to, or a local reader). */
  async link(virtualPath: string, args: LinkArgs): Promise<{ link: Link; obj: Obj; storage: Mounted }> {
    await this.storages.ready(virtualPath);
    const { storage, actualPath } = this.resolveStorage(virtualPath);
    const driver = this.working(storage);
    try {
      if (driver.getLink) {
        const { obj, link } = await driver.getLink(actualPath, args);
        if (obj.isDir) throw new NotAFile();
        return { link, obj, storage };
      }
      const obj = await driver.get(actualPath);
      if (obj.isDir) throw new NotAFile();
      return { link: await driver.link(actualPath, args), obj, storage };
    } catch (err) {
      wrapNotFound('failed link: ', err);
    }
  }

  /** The virtual path once the storage has followed every symlink on it (itself where the driver has none). */
  async canonical(virtualPath: string): Promise<string> {
    await this.storages.ready(virtualPath);
    const { storage, actualPath } = this.resolveStorage(virtualPath);
    const driver = this.working(storage);
    if (!driver.canonical) return virtualPath;
    let inner: string;
    try {
      inner = await driver.canonical(actualPath);
    } catch (err) {
      wrapNotFound('failed get obj: ', err);
    }
    const mount = storage.row.mount_path;
    if (mount === '/') return inner;
    return inner === '/' ? mount : `${mount}${inner}`;
  }

  async other(virtualPath: string, method: string, data: unknown): Promise<unknown> {
    await this.storages.ready(virtualPath);
    const { storage, actualPath } = this.resolveStorage(virtualPath);
    const driver = this.working(storage);
    if (!driver.other) throw new Unsupported('not implement');
    try {
      await driver.get(actualPath);
      return await driver.other(actualPath, method, data);
    } catch (err) {
      wrapNotFound('failed get obj: ', err);
    }
  }

  /** Forget cached listings of a folder (and below, with `recursive`) after a change. */
  invalidate(virtualPath: string, recursive = false): void {
    const r = this.storages.resolve(virtualPath);
    if (!r) return;
    this.cache.invalidate(r.storage.row.id, r.actualPath, recursive);
    this.onInvalidate(r.storage.row.id, r.actualPath, recursive);
  }

  /** Drops cached listings another process reported changed (no further notice). */
  invalidateStorage(storageId: number, actualPath: string, recursive: boolean): void {
    this.cache.invalidate(storageId, actualPath, recursive);
  }

  /** Cluster mode: whether other processes' invalidations reach this one (cache.ts setTrusted). */
  trustListingCache(trusted: boolean): void {
    this.cache.setTrusted(trusted);
  }

  dropStorageCache(storageId: number): void {
    this.cache.dropStorage(storageId);
  }
}
