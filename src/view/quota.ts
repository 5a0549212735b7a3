import { Transform, type TransformCallback } from 'node:stream';
import type { Group } from '../db/groups.js';
import type { QuotaOwnerKind, QuotaUsageRepo, Usage } from '../db/quota-usage.js';
import type { User } from '../db/users.js';
import type { Obj } from '../drivers/types.js';
import { isKind, QuotaExceeded } from '../errors.js';
import type { Fs } from '../fs/fs.js';
import type { Logger } from '../logger.js';
import { cleanPath } from '../util/paths.js';
import type { Tree } from './tree.js';

/** Whose quota a write falls under, and its limits (0: none). */
export interface QuotaOwner {
  kind: QuotaOwnerKind;
  id: number;
  name: string;
  quotaBytes: number;
  quotaFiles: number;
  /** The folders its usage is counted in: a user's base path and own roots, a group's roots. */
  areas: string[];
}

/** Entries a scan lists at most per owner before it stops (the usage it found stands, marked in the log). */
const SCAN_LIMIT = 5_000_000;
/** A change the writer can not count exactly (a folder removed, moved or copied) rescans its owner this much later. */
const RESCAN_DELAY_MS = 1500;
/** The background scan of every owner with a quota (repairs usage after a crash, or writes around the view). */
const FULL_SCAN_MS = 60 * 60_000;
/** How often owners whose usage was never scanned (a quota just set) are looked for. */
const NEW_OWNER_MS = 30_000;

const key = (o: Pick<QuotaOwner, 'kind' | 'id'>) => `${o.kind}:${o.id}`;

export const userOwner = (u: User): QuotaOwner => ({
  kind: 'user',
  id: u.id,
  name: u.username,
  quotaBytes: u.quotaBytes ?? 0,
  quotaFiles: u.quotaFiles ?? 0,
  areas: [cleanPath(u.basePath), ...(u.roots ?? []).map((r) => cleanPath(r.path))],
});

export const groupOwner = (g: Group): QuotaOwner => ({
  kind: 'group',
  id: g.id,
  name: g.name,
  quotaBytes: g.quotaBytes,
  quotaFiles: g.quotaFiles,
  areas: g.roots.map((r) => cleanPath(r.path)),
});

const limited = (o: QuotaOwner) => o.quotaBytes > 0 || o.quotaFiles > 0;

/** Where the quota service finds the owners that have a quota (the background scans). */
export interface QuotaOwners {
  withQuota(): Promise<QuotaOwner[]>;
}

/**
 * Quotas of users and groups (docs/access-and-security.md, quotas): decided by the view before
 * the bytes of a write are stored. Usage is kept incrementally, per owner, for owners with a
 * quota: a file stored or removed changes it by its size; a change the writer can not count
 * (a folder removed, moved or copied, an extract) rescans its owner shortly after; every owner
 * is rescanned in the background, and `atrium quota scan` recounts on demand. Bytes being
 * written are reserved in this process, so parallel uploads can not pass the quota together.
 */
export class Quotas {
  private readonly reserved = new Map<string, number>();
  private readonly rescans = new Map<string, NodeJS.Timeout>();
  private timers: NodeJS.Timeout[] = [];
  private owners?: QuotaOwners;

  constructor(
    private readonly repo: QuotaUsageRepo,
    private readonly fs: Fs,
    private readonly log: Logger,
  ) {}

  /** The owner whose quota a write at `p` falls under for this principal, when it has one. */
  ownerAt(user: User, tree: Tree, p: string): QuotaOwner | undefined {
    const holder = tree.holder(p);
    if (holder === undefined) return undefined;
    const owner = holder === 'user' ? userOwner(user) : (user.groups ?? []).find((g) => g.id === holder);
    if (owner === undefined) return undefined;
    const o = 'kind' in owner ? owner : groupOwner(owner);
    return limited(o) ? o : undefined;
  }

  usage(o: Pick<QuotaOwner, 'kind' | 'id'>): Promise<Usage> {
    return this.repo.get(o.kind, o.id);
  }

  /** Bytes the owner may still store (Infinity without a byte quota): quota − usage − what is being written. */
  async room(o: QuotaOwner): Promise<{ bytes: number; files: number; usage: Usage }> {
    const usage = await this.usage(o);
    const bytes = o.quotaBytes > 0 ? o.quotaBytes - usage.bytes - (this.reserved.get(key(o)) ?? 0) : Infinity;
    const files = o.quotaFiles > 0 ? o.quotaFiles - usage.files : Infinity;
    return { bytes, files, usage };
  }

  /** Refuses at once a write of `size` bytes (and `newFiles` new files) that can not fit; `replaces` bytes go. */
  async require(o: QuotaOwner, size: number, newFiles: number, replaces = 0): Promise<void> {
    const room = await this.room(o);
    if (newFiles > 0 && newFiles > room.files) throw new QuotaExceeded();
    if (size > 0 && size - replaces > room.bytes) throw new QuotaExceeded();
  }

  /**
   * Runs a write of a file at most `declared` bytes (-1: unknown) into the owner's area: refused
   * before any byte when it can not fit; a stream of unknown size passes through `limit`, which
   * stops it with QuotaExceeded when it crosses the room left (the put then leaves nothing).
   */
  async write<T>(o: QuotaOwner, declared: number, existing: Obj | undefined, run: (limit: (s: NodeJS.ReadableStream) => NodeJS.ReadableStream) => Promise<T>): Promise<T> {
    const replaces = existing && !existing.isDir ? existing.size : 0;
    await this.require(o, Math.max(0, declared), existing ? 0 : 1, replaces);
    const k = key(o);
    let held = 0;
    const hold = (n: number) => {
      held += n;
      this.reserved.set(k, (this.reserved.get(k) ?? 0) + n);
    };
    if (declared > 0) hold(declared);
    const room = await this.room(o);
    const budget = room.bytes + held + replaces;
    let counted = 0;
    // A declared size was decided against the quota above; a body longer than it declared is the
    // writer's to refuse (drivers/write-file.ts, an upstream request's Content-Length), so only a
    // stream of unknown size is counted here, chunk by chunk (a pass that cost a 1 GiB PUT 6 %).
    const limit = (s: NodeJS.ReadableStream): NodeJS.ReadableStream => {
      if (declared >= 0) return s;
      const t = new Transform({
        transform: (chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) => {
          counted += chunk.length;
          if (counted > budget) return cb(new QuotaExceeded());
          if (declared < 0) hold(chunk.length);
          cb(null, chunk);
        },
      });
      s.on('error', (err) => t.destroy(err));
      return (s as NodeJS.ReadableStream & { pipe<D extends NodeJS.WritableStream>(d: D): D }).pipe(t);
    };
    try {
      const value = await run(limit);
      const size = declared >= 0 ? declared : counted;
      await this.repo.add(o.kind, o.id, size - replaces, existing ? 0 : 1);
      return value;
    } finally {
      const left = (this.reserved.get(k) ?? 0) - held;
      if (left > 0) this.reserved.set(k, left);
      else this.reserved.delete(k);
    }
  }

  /** A file left the owner's area (removed, or moved out). */
  async removed(o: QuotaOwner, obj: Obj): Promise<void> {
    if (obj.isDir) this.rescanSoon(o);
    else await this.repo.add(o.kind, o.id, -obj.size, -1);
  }

  /** A file the storage stored itself (a multipart upload it assembled), replacing `before` if there was one. */
  async stored(o: QuotaOwner, obj: Obj | undefined, before: Obj | undefined): Promise<void> {
    if (!obj || obj.isDir) return this.rescanSoon(o);
    const replaced = before && !before.isDir ? before.size : 0;
    await this.repo.add(o.kind, o.id, obj.size - replaced, before ? 0 : 1);
  }

  /** A file came into the owner's area without a put (moved or copied in). */
  async added(o: QuotaOwner, obj: Obj): Promise<void> {
    if (obj.isDir) this.rescanSoon(o);
    else await this.repo.add(o.kind, o.id, obj.size, 1);
  }

  /** Counts the owner again shortly (debounced): for changes the writer can not count file by file. */
  rescanSoon(o: QuotaOwner): void {
    const k = key(o);
    clearTimeout(this.rescans.get(k));
    const t = setTimeout(() => {
      this.rescans.delete(k);
      this.scan(o).catch((err: unknown) => this.log.warn({ err, owner: k }, 'quota rescan failed'));
    }, RESCAN_DELAY_MS);
    t.unref();
    this.rescans.set(k, t);
  }

  /** The files and bytes below the folders `dirs` (listed afresh), at most SCAN_LIMIT entries; `complete` false past it. */
  private async count(dirs: string[]): Promise<{ bytes: number; files: number; complete: boolean }> {
    let bytes = 0;
    let files = 0;
    let budget = SCAN_LIMIT;
    const walk = async (dir: string): Promise<void> => {
      let objs: Obj[];
      try {
        ({ objs } = await this.fs.list(dir, { refresh: true }));
      } catch (err) {
        if (isKind(err, 'NotFound')) return;
        throw err;
      }
      for (const obj of objs) {
        if (--budget < 0) return;
        const p = dir === '/' ? `/${obj.name}` : `${dir}/${obj.name}`;
        if (obj.isDir) await walk(p);
        else {
          bytes += obj.size;
          files++;
        }
      }
    };
    for (const d of dirs) await walk(d);
    return { bytes, files, complete: budget >= 0 };
  }

  /** Counts the files and bytes of the owner's areas and stores them as its usage. */
  async scan(o: QuotaOwner): Promise<Usage> {
    // an area inside another of the same owner is counted once
    const areas = [...new Set(o.areas)].filter((area) => !o.areas.some((a) => a !== area && (a === '/' || area.startsWith(`${a}/`))));
    const { bytes, files, complete } = await this.count(areas);
    if (!complete) this.log.warn({ owner: key(o) }, `quota scan stopped after ${SCAN_LIMIT} entries`);
    await this.repo.set(o.kind, o.id, bytes, files);
    return { bytes, files, scannedAt: Date.now() };
  }

  /**
   * What the entries at `paths` hold (a file its size, a folder what is below it): taken before
   * and after a folder copy or move, their difference changes the owner's usage by what the copy
   * brought, at a cost that follows the copy's size rather than the owner's whole tree.
   */
  async measure(paths: string[]): Promise<{ bytes: number; files: number; complete: boolean }> {
    let bytes = 0;
    let files = 0;
    const dirs: string[] = [];
    for (const p of paths) {
      const obj = await this.fs.get(p).then((g) => g.obj, () => undefined);
      if (!obj) continue;
      if (obj.isDir) dirs.push(p);
      else {
        bytes += obj.size;
        files++;
      }
    }
    const below = await this.count(dirs);
    return { bytes: bytes + below.bytes, files: files + below.files, complete: below.complete };
  }

  /** Changes the owner's usage by what a change brought or took (`measure` before and after). */
  async adjust(o: QuotaOwner, bytes: number, files: number): Promise<void> {
    if (bytes !== 0 || files !== 0) await this.repo.add(o.kind, o.id, bytes, files);
  }

  /** Starts the background scans: owners never scanned (a quota just set) soon, every owner hourly. */
  start(owners: QuotaOwners): void {
    this.owners = owners;
    const fresh = async () => {
      for (const o of await owners.withQuota()) if ((await this.usage(o)).scannedAt === 0) await this.scan(o);
    };
    const all = async () => {
      for (const o of await owners.withQuota()) await this.scan(o);
    };
    const guard = (fn: () => Promise<void>) => () => void fn().catch((err: unknown) => this.log.warn({ err }, 'quota scan failed'));
    this.timers = [setInterval(guard(fresh), NEW_OWNER_MS), setInterval(guard(all), FULL_SCAN_MS)];
    for (const t of this.timers) t.unref();
  }

  /** Every owner with a quota (the CLI's scan). */
  async all(): Promise<QuotaOwner[]> {
    return this.owners ? this.owners.withQuota() : [];
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    for (const t of this.rescans.values()) clearTimeout(t);
    this.timers = [];
    this.rescans.clear();
  }
}
