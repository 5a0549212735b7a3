import type { Obj } from '../drivers/types.js';

interface Entry {
  objs: Obj[];
  expires: number;
  /** The driver's validator of the folder at listing time (e.g. its mtime), if it has one. */
  stamp?: string;
}

/**
 * Folder listings by storage and path, kept `cache_expiration` minutes, least recently used
 * dropped first once the total number of cached entries passes `maxObjects`.
 */
export class ListingCache {
  private entries = new Map<string, Entry>();
  private objects = 0;
  /**
   * Off while this process cannot hear other processes' invalidations (its cluster bus is down):
   * listings are then read from the storage each time, and what was cached before is dropped
   * when the bus is back, since writes made elsewhere in between went unannounced.
   */
  private trusted = true;

  constructor(private readonly maxObjects = 2_000_000) {}

  /** Cached folders and the entries they hold (for the metrics). */
  size(): { folders: number; objects: number } {
    return { folders: this.entries.size, objects: this.objects };
  }

  private key(storageId: number, path: string): string {
    return `${storageId}\0${path}`;
  }

  get(storageId: number, path: string, now = Date.now()): Entry | undefined {
    if (!this.trusted) return undefined;
    const k = this.key(storageId, path);
    const e = this.entries.get(k);
    if (!e) return undefined;
    if (e.expires <= now) {
      this.remove(k, e);
      return undefined;
    }
    this.entries.delete(k);
    this.entries.set(k, e);
    return e;
  }

  set(storageId: number, path: string, objs: Obj[], ttlMs: number, stamp?: string): void {
    if (!this.trusted || ttlMs <= 0 || objs.length === 0 || objs.length > this.maxObjects) return;
    const k = this.key(storageId, path);
    const old = this.entries.get(k);
    if (old) this.remove(k, old);
    this.entries.set(k, { objs, expires: Date.now() + ttlMs, stamp });
    this.objects += objs.length;
    for (const [key, e] of this.entries) {
      if (this.objects <= this.maxObjects) break;
      this.remove(key, e);
    }
  }

  private remove(k: string, e: Entry): void {
    this.entries.delete(k);
    this.objects -= e.objs.length;
  }

  /** Drops the listing of `path` and, with `recursive`, of every folder below it. */
  invalidate(storageId: number, path: string, recursive = false): void {
    const k = this.key(storageId, path);
    const prefix = this.key(storageId, path === '/' ? '/' : `${path}/`);
    for (const [key, e] of this.entries) {
      if (key === k || (recursive && key.startsWith(prefix))) this.remove(key, e);
    }
  }

  /** Stops using the cache (bus down), or drops everything and uses it again (bus back). */
  setTrusted(trusted: boolean): void {
    if (trusted && !this.trusted) this.clear();
    this.trusted = trusted;
  }

  clear(): void {
    this.entries.clear();
    this.objects = 0;
  }

  dropStorage(storageId: number): void {
    const prefix = `${storageId}\0`;
    for (const [key, e] of this.entries) if (key.startsWith(prefix)) this.remove(key, e);
  }
}
