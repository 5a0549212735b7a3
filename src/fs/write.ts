import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Driver, HttpDirectUpload, LocalFile, MultipartTarget, Obj, UploadStream } from '../drivers/types.js';
import { AbortError, AppError, BadRequest, Exists, Forbidden, isAbort, isKind, KindError, Missing, Unavailable, Unsupported, Upstream } from '../errors.js';
import { type Task, type TaskContext, type TaskCreator, type TaskManager } from '../tasks/manager.js';
import { refuseOne, SkippedNames } from '../tasks/creator.js';
import { cleanPath, isSubPath } from '../util/paths.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import { type SpeedLimits, throttled } from '../net/speed-limit.js';
import { FsChanges } from './changes.js';
import type { Fs } from './fs.js';
import { type Mounted, STATUS_WORK } from './storages.js';
import { type Deleter, inTrash, type TrashBin } from './trash.js';
import { wholeFile } from '../util/file-source.js';

export const MSG_EMPTY_NAMES = 'Empty file names';
export const MSG_DELETE_ROOT = 'delete root folder is not allowed, please goto the manage page to delete the storage instead';
const MAX_NAME_BYTES = 255;

/** A remove of a storage's root (kind Forbidden; OpenList's fs/remove answers it 500: server/api-codes.ts). */
export class DeleteRoot extends KindError {
  constructor() {
    super('Forbidden', MSG_DELETE_ROOT);
  }
}

/** A file where a folder of the path should be (kind Exists; OpenList answers it 500: server/api-codes.ts). */
export class FileInTheWay extends KindError {
  constructor() {
    super('Exists', 'file exists');
  }
}

/** A name for a single path segment: not empty, not `.`/`..`, no separators or NUL, ≤ 255 bytes. */
export function checkName(name: string): string {
  if (name === '' || name.trim() === '') throw new BadRequest('name is empty');
  if (name === '.' || name === '..') throw new BadRequest(`name ${name} is not allowed`);
  if (name.includes('/') || name.includes('\\')) throw new BadRequest(`name ${name} must not contain / or \\`);
  if (name.includes('\0')) throw new BadRequest('name must not contain NUL');
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw new BadRequest(`name is longer than ${MAX_NAME_BYTES} bytes`);
  return name;
}

const join = (dir: string, name: string) => cleanPath(path.posix.join(dir, name));

interface Resolved {
  storage: Mounted;
  driver: Driver;
  actualPath: string;
}

export interface PutOptions {
  /** false: refuse when the file exists (`file exists`); otherwise replace it. */
  overwrite: boolean;
  creator?: TaskCreator;
  /**
   * What the caller's listing of a moment ago found (a sync run, which made the folders first):
   * the parent folder exists and the target is a file (`file`) or nothing (`none`), so the put
   * asks the storage neither for each parent nor for the target. A storage that changed since
   * refuses the put itself (a folder in the way, a parent gone).
   */
  known?: 'file' | 'none';
}

/** An `upload` task's payload: a body spooled into temp_dir, and where it goes. */
export interface SpooledUpload {
  target: string;
  name: string;
  /** The spooled body (owned by the task, see TempOwner). */
  temp: string;
  overwrite: boolean;
  /** Milliseconds since the epoch. */
  modified?: number;
  mimetype?: string;
  hashes?: Record<string, string>;
}


/** Deletes made by the server itself (a task's clean-up), as the trash records them. */
const SYSTEM_DELETER: Deleter = { userId: 0, username: '', front: 'system' };

/**
 * Every change clients can ask for, on cleaned virtual paths (access already checked by the
 * caller). Same-storage operations use the driver's own; across storages, copy and move run as
 * tasks that read from one driver and put into the other.
 */
export class FsWriter {
  /** Every folder a write touched, for services that follow the tree (the search index). */
  readonly changes = new FsChanges();

  constructor(
    private readonly fs: Fs,
    private readonly tasks: TaskManager,
    private readonly links: LinkFetcher,
    private readonly speed?: SpeedLimits,
    /** Where deletes go on storages that keep a trash (fs/trash.ts). */
    private readonly trash?: TrashBin,
  ) {
    tasks.registerResumer('copy', (p) => (ctx) => this.copyAcross(p as TransferPayload, ctx));
    tasks.registerResumer('move', (p) => (ctx) => this.moveAcross(p as TransferPayload, ctx));
    tasks.registerResumer('upload', (p) => (ctx) => this.putSpooled(p as SpooledUpload, ctx));
  }

  private resolve(virtualPath: string): Resolved {
    const { storage, actualPath } = this.fs.resolveStorage(virtualPath);
    if (storage.row.status !== STATUS_WORK || !storage.driver) throw new Unavailable(`storage not init: ${storage.row.status}`);
    return { storage, driver: storage.driver, actualPath };
  }

  private need<K extends keyof Driver>(r: Resolved, cap: K): NonNullable<Driver[K]> {
    const fn = r.driver[cap];
    if (!fn) throw new Unsupported('not implement');
    const bound = (fn as (...a: unknown[]) => unknown).bind(r.driver) as NonNullable<Driver[K]>;
    const limit = this.speed?.serverUpload;
    if (cap !== 'put' || !limit) return bound;
    // Every byte sent to a storage passes the server upload limit (max_server_upload_speed).
    const put = bound as NonNullable<Driver['put']>;
    return ((dir: string, up: UploadStream) => put(dir, { ...up, stream: throttled(up.stream, limit) as Readable })) as NonNullable<Driver[K]>;
  }

  private async stat(r: Resolved, actualPath = r.actualPath): Promise<Obj | undefined> {
    try {
      return await r.driver.get(actualPath);
    } catch (err) {
      if (isKind(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  private changed(virtualDir: string, recursive = false): void {
    this.fs.invalidate(virtualDir, recursive);
    this.changes.emit(virtualDir, recursive);
  }

  /** Creates a folder and its missing parents; an existing folder is fine, a file is not. */
  async mkdir(virtualPath: string): Promise<void> {
    await this.fs.storages.ready(virtualPath);
    const r = this.resolve(virtualPath);
    const makeDir = this.need(r, 'makeDir');
    let current = '/';
    const segments = r.actualPath.split('/').filter(Boolean);
    /** Index of the first folder this call made, or -1. */
    let made = -1;
    for (const [i, segment] of segments.entries()) {
      const next = join(current, segment);
      const existing = await this.stat(r, next);
      if (existing && !existing.isDir) throw new FileInTheWay();
      if (!existing) {
        try {
          await wrap(makeDir(current, checkName(segment)));
          if (made < 0) made = i;
        } catch (err) {
          // Concurrent uploads into one new folder (S3 and rclone with many transfers) race to
          // create it: the folder made by the other one is as good as our own.
          if (!(await this.stat(r, next).catch(() => undefined))?.isDir) throw err;
        }
      }
      current = next;
    }
    // Only what was made changed: the listing holding the first new folder, and that folder.
    // (Every upload calls this for its folder: dropping its parent's listings recursively each
    // time would empty the cache of every sibling folder, however big, on every upload.)
    if (made < 0) return;
    const virtualSegments = virtualPath.split('/').filter(Boolean);
    const first = `/${virtualSegments.slice(0, virtualSegments.length - (segments.length - 1 - made)).join('/')}`;
    this.changed(path.posix.dirname(first));
    this.changed(first, true);
  }

  async rename(virtualPath: string, name: string, overwrite = false): Promise<void> {
    checkName(name);
    await this.fs.storages.ready(virtualPath);
    const r = this.resolve(virtualPath);
    if (r.actualPath === '/') throw new BadRequest('the root of a storage can not be renamed, edit the storage instead');
    if (!(await this.stat(r))) throw new Missing('object not found');
    const target = join(path.posix.dirname(r.actualPath), name);
    if (target === r.actualPath) return;
    const existing = await this.stat(r, target);
    if (existing) {
      if (!overwrite || existing.isDir) throw new Exists(`file [${name}] exists`);
      await wrap(this.need(r, 'remove')(target));
    }
    await wrap(this.need(r, 'rename')(r.actualPath, name));
    this.changed(path.posix.dirname(virtualPath));
    this.changed(virtualPath, true);
  }

  /** Checks names and resolves source and destination folders of a batch operation. */
  private async batch(srcDir: string, dstDir: string, names: string[]) {
    if (names.length === 0) throw new BadRequest(MSG_EMPTY_NAMES);
    for (const n of names) checkName(n);
    await this.fs.storages.ready(srcDir, dstDir);
    const src = this.resolve(srcDir);
    const dst = this.resolve(dstDir);
    const dstObj = await this.stat(dst);
    if (!dstObj || !dstObj.isDir) throw new Missing(`destination ${dstDir} is not a folder`);
    return { src, dst };
  }

  /**
   * Refuses an existing target unless `overwrite`. A same-storage operation then removes it
   * first (drivers do not replace); a transfer task leaves it, since put replaces a file only
   * once the new one is complete.
   */
  private async conflict(dst: Resolved, name: string, overwrite: boolean, sameStorage: boolean): Promise<void> {
    const existing = await this.stat(dst, join(dst.actualPath, name));
    if (!existing) return;
    if (!overwrite) throw new Exists(`file [${name}] exists`);
    if (sameStorage) await wrap(this.need(dst, 'remove')(join(dst.actualPath, name)));
  }

  async move(srcDir: string, dstDir: string, names: string[], opts: { overwrite?: boolean; creator?: TaskCreator } = {}): Promise<Task[]> {
    const { src, dst } = await this.batch(srcDir, dstDir, names);
    const tasks: Task[] = [];
    for (const name of names) {
      const from = join(srcDir, name);
      if (isSubPath(from, dstDir)) throw new BadRequest(`can not move ${name} into itself`);
      if (srcDir === dstDir) continue;
      if (!(await this.stat(src, join(src.actualPath, name)))) throw new Missing(`object not found: ${name}`);
      await this.conflict(dst, name, opts.overwrite ?? false, src.storage === dst.storage);
      if (src.storage === dst.storage) {
        await wrap(this.need(src, 'move')(join(src.actualPath, name), dst.actualPath));
      } else {
        tasks.push(this.transferTask('move', { from, toDir: dstDir }, opts.creator));
      }
      this.changed(from, true);
    }
    this.changed(srcDir);
    this.changed(dstDir);
    await Promise.all(tasks.map((t) => t.stored));
    return tasks;
  }

  /** Same storage: the driver copies now (no task). Across storages: one task per name. */
  /**
   * `merge` (OpenList's dialog, without `overwrite`): a name already at the destination is left
   * as it is, except a folder on both sides, which a copy task enters, walking both trees as it
   * runs (not in the request: its cost follows the trees) and copying only what the destination
   * lacks.
   */
  async copy(srcDir: string, dstDir: string, names: string[], opts: { overwrite?: boolean; merge?: boolean; creator?: TaskCreator } = {}): Promise<Task[]> {
    const { src, dst } = await this.batch(srcDir, dstDir, names);
    const tasks: Task[] = [];
    const merge = (opts.merge ?? false) && !opts.overwrite;
    for (const name of names) {
      const from = join(srcDir, name);
      if (isSubPath(from, dstDir)) throw new BadRequest(`can not copy ${name} into itself`);
      const obj = await this.stat(src, join(src.actualPath, name));
      if (!obj) throw new Missing(`object not found: ${name}`);
      if (srcDir === dstDir) throw new Exists(`file [${name}] exists`);
      const there = merge ? await this.stat(dst, join(dst.actualPath, name)) : undefined;
      if (there) {
        if (there.isDir && obj.isDir) tasks.push(this.transferTask('copy', { from, toDir: dstDir, merge: true }, opts.creator));
        continue;
      }
      const sameStorage = src.storage === dst.storage && src.driver.copy !== undefined;
      await this.conflict(dst, name, opts.overwrite ?? false, sameStorage);
      if (sameStorage) {
        await wrap(this.need(src, 'copy')(join(src.actualPath, name), dst.actualPath));
      } else {
        tasks.push(this.transferTask('copy', { from, toDir: dstDir }, opts.creator));
      }
    }
    this.changed(dstDir);
    await Promise.all(tasks.map((t) => t.stored));
    return tasks;
  }

  /**
   * Deletes names of `dir`: into the storage's trash where it keeps one (unless `permanent`),
   * recorded as `by`'s; for good otherwise.
   */
  async remove(dir: string, names: string[], opts: { permanent?: boolean; by?: Deleter } = {}): Promise<void> {
    if (names.length === 0) throw new BadRequest(MSG_EMPTY_NAMES);
    for (const n of names) checkName(n);
    await this.fs.storages.ready(dir);
    for (const name of names) {
      const target = join(dir, name);
      if (this.fs.storages.isMountRoot(target)) throw new DeleteRoot();
      const r = this.resolve(target);
      if (r.actualPath === '/') throw new DeleteRoot();
      if (!(await this.stat(r))) continue;
      if (this.trash && !opts.permanent && this.trash.enabled(r.storage)) await wrap(this.trash.put(r.storage, r.driver, r.actualPath, target, opts.by ?? SYSTEM_DELETER));
      else await wrap(this.need(r, 'remove')(r.actualPath));
      this.changed(target, true);
    }
    this.changed(dir);
  }

  /**
   * Deletes every folder below `dir` that holds (recursively) nothing but empty folders. A
   * folder `keep` names (by virtual path) counts as not empty and is not looked into.
   */
  async removeEmptyDirs(dir: string, keep: (virtualPath: string) => boolean = () => false): Promise<number> {
    await this.fs.storages.ready(dir);
    const r = this.resolve(dir);
    const remove = this.need(r, 'remove');
    let removed = 0;
    const visit = async (actual: string): Promise<boolean> => {
      const children = await r.driver.list(actual);
      let empty = true;
      for (const c of children) {
        if (!c.isDir) {
          empty = false;
          continue;
        }
        const sub = join(actual, c.name);
        // The trash (fs/trash.ts) keeps what it holds, empty folders too.
        if (inTrash(sub) || keep(join(dir, path.posix.relative(r.actualPath, sub)))) {
          empty = false;
          continue;
        }
        if (await visit(sub)) {
          await wrap(remove(sub));
          removed++;
        } else empty = false;
      }
      return empty;
    };
    await wrap(visit(r.actualPath));
    this.changed(dir, true);
    return removed;
  }

  /**
   * Moves every file found below `srcDir` straight into `dstDir` (folders are not kept). A name
   * already in `dstDir`, or met twice below `srcDir`, is a conflict: `cancel` refuses before
   * anything moves, `skip` leaves that file where it is, `overwrite` replaces (the last one wins).
   */
  async recursiveMove(srcDir: string, dstDir: string, creator?: TaskCreator, policy: 'cancel' | 'overwrite' | 'skip' = 'cancel'): Promise<{ moved: number; tasks: Task[] }> {
    if (isSubPath(srcDir, dstDir)) throw new BadRequest('can not move a folder into itself');
    const files: Array<{ dir: string; name: string }> = [];
    const walk = async (dir: string) => {
      for (const o of (await this.fs.list(dir, { refresh: true })).objs) {
        if (o.isDir) await walk(join(dir, o.name));
        else files.push({ dir, name: o.name });
      }
    };
    await walk(srcDir);
    const taken = new Set((await this.fs.list(dstDir, { refresh: true })).objs.map((o) => o.name));
    const chosen: typeof files = [];
    for (const f of files) {
      if (f.dir === dstDir) continue;
      if (taken.has(f.name) && policy === 'cancel') throw new Exists(`file [${f.name}] exists`);
      if (taken.has(f.name) && policy === 'skip') continue;
      taken.add(f.name);
      chosen.push(f);
    }
    const tasks: Task[] = [];
    for (const f of chosen) tasks.push(...(await this.move(f.dir, dstDir, [f.name], { creator, overwrite: policy === 'overwrite' })));
    return { moved: chosen.length, tasks };
  }

  /**
   * Moves or renames one object to a full target path (WebDAV MOVE, SFTP rename): within a storage
   * with the driver's rename/move, across storages by copying then deleting the source. An existing
   * target is replaced only with `overwrite`. The target's folder must exist.
   */
  async moveTo(src: string, dst: string, overwrite: boolean): Promise<void> {
    if (src === dst) return;
    if (isSubPath(src, dst)) throw new BadRequest('can not move a folder into itself');
    const dstName = checkName(path.posix.basename(dst));
    const { s, d, obj } = await this.pathPair(src, dst, overwrite);
    const srcDir = path.posix.dirname(s.actualPath);
    const srcName = path.posix.basename(s.actualPath);
    if (s.storage === d.storage) {
      if (srcDir === path.posix.dirname(d.actualPath)) {
        await wrap(this.need(s, 'rename')(s.actualPath, dstName));
      } else if (srcName === dstName) {
        await wrap(this.need(s, 'move')(s.actualPath, path.posix.dirname(d.actualPath)));
      } else {
        // Drivers move under the same name: rename first to a name nobody uses in either folder.
        const temp = `.atrium-move-${randomBytes(6).toString('hex')}`;
        await wrap(this.need(s, 'rename')(s.actualPath, temp));
        await wrap(this.need(s, 'move')(join(srcDir, temp), path.posix.dirname(d.actualPath)));
        await wrap(this.need(s, 'rename')(join(path.posix.dirname(d.actualPath), temp), dstName));
      }
    } else {
      await this.copyObject(src, obj, dst);
      await wrap(this.need(s, 'remove')(s.actualPath));
    }
    this.changed(path.posix.dirname(src));
    this.changed(src, true);
    this.changed(path.posix.dirname(dst));
  }

  /**
   * Copies one object to a full target path (WebDAV COPY): the driver's copy where it can keep the
   * name, otherwise by reading and putting, folders recursively (`shallow`: the folder alone).
   */
  async copyTo(src: string, dst: string, overwrite: boolean, shallow = false): Promise<void> {
    if (src === dst) throw new Exists(`file [${path.posix.basename(dst)}] exists`);
    if (isSubPath(src, dst)) throw new BadRequest('can not copy a folder into itself');
    checkName(path.posix.basename(dst));
    const { obj } = await this.pathPair(src, dst, overwrite);
    await this.copyObject(src, obj, dst, shallow);
    this.changed(path.posix.dirname(dst));
  }

  /** Resolves both ends of a move or copy, and clears the way at the target (`overwrite`). */
  private async pathPair(src: string, dst: string, overwrite: boolean) {
    await this.fs.storages.ready(src, dst);
    const s = this.resolve(src);
    const d = this.resolve(dst);
    if (s.actualPath === '/') throw new Forbidden('the root of a storage can not be moved or copied');
    const obj = await this.stat(s);
    if (!obj) throw new Missing('object not found');
    const parent = await this.stat(d, path.posix.dirname(d.actualPath));
    if (!parent?.isDir) throw new Missing(`destination folder ${path.posix.dirname(dst)} not found`);
    if (await this.stat(d)) {
      if (!overwrite) throw new Exists(`file [${path.posix.basename(dst)}] exists`);
      await wrap(this.need(d, 'remove')(d.actualPath));
      this.changed(dst, true);
    }
    return { s, d, obj };
  }

  private async copyObject(src: string, obj: Obj, dst: string, shallow = false): Promise<void> {
    const s = this.resolve(src);
    const d = this.resolve(dst);
    const dstDir = path.posix.dirname(d.actualPath);
    const sameName = path.posix.basename(s.actualPath) === path.posix.basename(d.actualPath);
    if (!shallow && s.storage === d.storage && s.driver.copy && sameName && path.posix.dirname(s.actualPath) !== dstDir) {
      await wrap(s.driver.copy(s.actualPath, dstDir));
      return;
    }
    if (obj.isDir) {
      await wrap(this.need(d, 'makeDir')(dstDir, path.posix.basename(d.actualPath)));
      if (shallow) return;
      for (const child of (await this.fs.list(src, { refresh: true })).objs) {
        await this.copyObject(join(src, child.name), child, join(dst, child.name));
      }
      this.changed(dst);
      return;
    }
    const stream = await this.openRead(src, obj);
    await wrap(this.need(d, 'put')(dstDir, { name: path.posix.basename(d.actualPath), size: obj.size, stream, modified: obj.modified }));
  }

  /** Checks an upload's target: storage accepts uploads, no folder there, a file only with overwrite. */
  private async putTarget(virtualPath: string, name: string, overwrite: boolean, known?: PutOptions['known']) {
    checkName(name);
    await this.fs.storages.ready(virtualPath);
    const r = this.resolve(virtualPath);
    if (r.storage.factory.config.noUpload) throw new Unsupported('upload not supported');
    const put = this.need(r, 'put');
    if (known === 'file' && !overwrite) throw new Exists('file exists');
    const existing = known ? undefined : await this.stat(r);
    if (existing) {
      if (existing.isDir) throw new Exists(`file [${name}] exists`);
      if (!overwrite) throw new Exists('file exists');
    }
    return { r, put, dir: path.posix.dirname(virtualPath), actualDir: path.posix.dirname(r.actualPath) };
  }

  /** Stores an upload at `virtualPath`, creating missing parents. */
  async put(virtualPath: string, up: UploadStream, opts: PutOptions): Promise<void> {
    const { put, dir, actualDir } = await this.putTarget(virtualPath, up.name, opts.overwrite, opts.known);
    if (!opts.known) await this.mkdir(dir);
    await wrap(put(actualDir, up));
    this.changed(dir);
  }

  /**
   * Stores a finished file of the local disk at `virtualPath` (a resumable upload's staging
   * file): taken over by the driver where it can (Local: a rename on one file system), otherwise
   * streamed once through the driver's put. The file is gone once stored.
   */
  async putFile(virtualPath: string, file: Omit<LocalFile, 'name'> & { mimetype?: string }, opts: PutOptions): Promise<void> {
    const name = path.posix.basename(virtualPath);
    const { r, put, dir, actualDir } = await this.putTarget(virtualPath, name, opts.overwrite);
    await this.mkdir(dir);
    const taken = r.driver.putFile ? await wrap(r.driver.putFile(actualDir, { ...file, name })) : false;
    if (!taken) {
      await wrap(put(actualDir, { name, size: file.size, stream: createReadStream(file.path, { highWaterMark: 1 << 20 }), modified: file.modified, mimetype: file.mimetype, hashes: file.hashes, onProgress: file.onProgress }));
      await rm(file.path, { force: true });
    }
    this.changed(dir);
  }

  /** The multipart upload of the storage holding `virtualPath` (S3), when it has one and takes uploads. */
  multipartTarget(virtualPath: string): MultipartTarget | undefined {
    const r = this.resolve(virtualPath);
    if (r.storage.factory.config.noUpload || !r.driver.put) return undefined;
    return r.driver.multipart;
  }

  /**
   * The direct upload tools of the storage holding folder `virtualDir` (OpenList's
   * direct_upload_tools): none for a virtual folder, a storage not working or taking no uploads.
   */
  directUploadTools(virtualDir: string): string[] {
    const r = this.fs.storages.resolve(virtualDir, { turn: false });
    const driver = r?.storage.driver;
    if (!r || r.storage.row.status !== STATUS_WORK || !driver?.directUploadTools || !driver.directUploadInfo) return [];
    if (r.storage.factory.config.noUpload || !driver.put) return [];
    return driver.directUploadTools();
  }

  /**
   * Where a client sends the file at `virtualPath` straight to the storage with `tool`; undefined
   * when the storage does not offer that tool. Checked as a put (no folder there, a file only with
   * `overwrite`), and its folder made first. The storage tells nothing when the client is done:
   * the folder's cached listing is dropped now, and one listed again later (a refresh, the cache
   * expiring) shows the file.
   */
  async directUploadInfo(virtualPath: string, args: { tool: string; size: number; overwrite: boolean }): Promise<HttpDirectUpload | undefined> {
    await this.fs.storages.ready(virtualPath);
    const dirPath = path.posix.dirname(virtualPath);
    if (!this.directUploadTools(dirPath).includes(args.tool)) return undefined;
    const { r, dir, actualDir } = await this.putTarget(virtualPath, path.posix.basename(virtualPath), args.overwrite);
    await this.mkdir(dir);
    const info = await wrap(r.driver.directUploadInfo!(actualDir, path.posix.basename(r.actualPath), { tool: args.tool, size: args.size }));
    if (info) this.fs.invalidate(dir);
    return info;
  }

  /** The free bytes of the storage holding `virtualPath`, where its driver reports its usage (undefined otherwise, or when it fails to). */
  async freeSpace(virtualPath: string): Promise<number | undefined> {
    await this.fs.storages.ready(virtualPath);
    const { driver } = this.resolve(virtualPath);
    if (!driver.usage) return undefined;
    return driver.usage().then(
      (u) => u.free,
      () => undefined,
    );
  }

  private multipart(virtualPath: string) {
    const r = this.resolve(virtualPath);
    const m = r.driver.multipart;
    if (!m) throw new Unsupported('the storage takes no multipart uploads');
    return { m, dir: path.posix.dirname(r.actualPath), name: checkName(path.posix.basename(r.actualPath)) };
  }

  /** Starts a multipart upload of the object at `virtualPath`; returns its id. */
  async beginMultipart(virtualPath: string, mimetype?: string): Promise<string> {
    await this.fs.storages.ready(virtualPath);
    const { m, dir, name } = this.multipart(virtualPath);
    return wrap(m.begin(dir, name, mimetype));
  }

  /** Sends part `n` of a multipart upload (through the server upload speed limit). */
  async putPart(virtualPath: string, uploadId: string, n: number, body: Readable, size: number): Promise<string> {
    await this.fs.storages.ready(virtualPath);
    const { m, dir, name } = this.multipart(virtualPath);
    const limit = this.speed?.serverUpload;
    return wrap(m.part(dir, name, uploadId, n, limit ? (throttled(body, limit) as Readable) : body, size));
  }

  /** Makes the object of a multipart upload appear (rules as for a put: no folder there, overwrite). */
  async finishMultipart(virtualPath: string, uploadId: string, parts: Array<{ n: number; etag: string }>, opts: PutOptions): Promise<void> {
    const { dir } = await this.putTarget(virtualPath, path.posix.basename(virtualPath), opts.overwrite);
    await this.mkdir(dir);
    const { m, dir: actualDir, name } = this.multipart(virtualPath);
    await wrap(m.finish(actualDir, name, uploadId, parts));
    this.changed(dir);
  }

  async abortMultipart(virtualPath: string, uploadId: string): Promise<void> {
    await this.fs.storages.ready(virtualPath);
    const { m, dir, name } = this.multipart(virtualPath);
    await wrap(m.abort(dir, name, uploadId));
  }

  /** Sets the modification time of a file or folder (SFTP setstat). */
  async setModified(virtualPath: string, modified: Date): Promise<void> {
    await this.fs.storages.ready(virtualPath);
    const r = this.resolve(virtualPath);
    await wrap(this.need(r, 'setModified')(r.actualPath, modified));
    this.changed(path.posix.dirname(virtualPath));
  }

  /**
   * Queues an `upload` task storing a body the caller spooled into temp_dir. The task owns the
   * spooled file (deleted once stored, or after the last failed attempt), so a restart resumes it.
   */
  async putAsTask(virtualPath: string, spooled: Omit<SpooledUpload, 'target' | 'overwrite'>, opts: PutOptions): Promise<Task> {
    const { r, actualDir } = await this.putTarget(virtualPath, spooled.name, opts.overwrite);
    const payload: SpooledUpload = { ...spooled, target: virtualPath, overwrite: opts.overwrite };
    return this.tasks.submitStored({
      kind: 'upload',
      name: `upload ${spooled.name} to [${r.storage.row.mount_path}](${actualDir})`,
      creator: opts.creator,
      status: 'uploading',
      payload,
      run: (ctx) => this.putSpooled(payload, ctx),
    });
  }

  private async putSpooled(p: SpooledUpload, ctx: TaskContext): Promise<void> {
    try {
      const size = await stat(p.temp).then(
        (st) => st.size,
        () => {
          throw new Error('the uploaded data is no longer in the temp folder; upload the file again');
        },
      );
      ctx.setTotalBytes(size);
      // Decided as a direct upload of the name, on the creator's account as it is now.
      const rules = await ctx.rules();
      refuseOne(p.name, () => rules.checkPut(p.target));
      await this.put(
        p.target,
        {
          name: p.name,
          size,
          stream: createReadStream(p.temp),
          modified: p.modified === undefined ? undefined : new Date(p.modified),
          mimetype: p.mimetype,
          hashes: p.hashes,
          signal: ctx.signal,
          onProgress: (b) => ctx.setProgress(size > 0 ? (b / size) * 100 : 100),
        },
        { overwrite: p.overwrite },
      );
    } catch (err) {
      if (ctx.lastAttempt || ctx.signal.aborted) await rm(p.temp, { force: true });
      throw err;
    }
    await rm(p.temp, { force: true });
  }

  private transferTask(kind: 'copy' | 'move', payload: TransferPayload, creator?: TaskCreator): Task {
    const src = this.resolve(payload.from);
    const dst = this.resolve(payload.toDir);
    return this.tasks.submit({
      kind,
      name: `${kind} [${src.storage.row.mount_path}](${src.actualPath}) to [${dst.storage.row.mount_path}](${dst.actualPath})`,
      creator,
      payload,
      run: (ctx) => (kind === 'copy' ? this.copyAcross(payload, ctx) : this.moveAcross(payload, ctx)),
    });
  }

  /** Copies a file or folder tree from one storage to another by reading and putting. */
  private async copyAcross(p: TransferPayload, ctx: TaskContext): Promise<void> {
    ctx.setStatus('getting src object');
    const { obj } = await this.fs.get(p.from);
    const files: Array<{ from: string; toDir: string; obj: Obj }> = [];
    const dirs: string[] = [];
    if (obj.isDir) {
      ctx.setStatus('src object is dir, listing objs');
      const walk = async (from: string, toDir: string) => {
        dirs.push(toDir);
        // merge: what the destination folder holds, listed once (a name there is left, a folder there entered)
        const there = p.merge ? await this.kindsAt(toDir) : undefined;
        for (const o of (await this.fs.list(from, { refresh: true })).objs) {
          const isDir = there?.get(o.name);
          if (o.isDir) {
            if (isDir !== false) await walk(join(from, o.name), join(toDir, o.name));
          } else if (isDir === undefined) files.push({ from: join(from, o.name), toDir, obj: o });
        }
      };
      await walk(p.from, join(p.toDir, obj.name));
    } else {
      files.push({ from: p.from, toDir: p.toDir, obj });
    }
    const total = files.reduce((n, f) => n + f.obj.size, 0);
    ctx.setTotalBytes(total);
    // Every name is decided on the creator's view as it is when it is written (a direct mkdir or upload of it).
    const skipped = new SkippedNames();
    const rel = (target: string) => path.posix.relative(p.toDir, target);
    for (const d of dirs) {
      const rules = await ctx.rules();
      await skipped.attempt(`${rel(d)}/`, async () => {
        rules.checkMkdir(d);
        await this.mkdir(d);
      });
    }
    let done = 0;
    ctx.setStatus('copying');
    for (const f of files) {
      if (ctx.signal.aborted) throw new AbortError('context canceled');
      const rules = await ctx.rules();
      const base = done;
      done += f.obj.size;
      await skipped.attempt(rel(join(f.toDir, f.obj.name)), async () => {
        rules.checkRead(f.from);
        rules.checkPut(join(f.toDir, f.obj.name));
        const dst = this.resolve(f.toDir);
        const put = this.need(dst, 'put');
        const stream = await this.openRead(f.from, f.obj);
        await wrap(
          put(dst.actualPath, {
            name: f.obj.name,
            size: f.obj.size,
            stream,
            modified: f.obj.modified,
            signal: ctx.signal,
            onProgress: (b) => ctx.setProgress(total > 0 ? ((base + b) / total) * 100 : 100),
          }),
        );
        this.changed(f.toDir);
      });
    }
    // A move that skipped a name keeps its whole source (moveAcross removes it only after this).
    skipped.throwIfAny();
  }

  private async moveAcross(p: TransferPayload, ctx: TaskContext): Promise<void> {
    await this.copyAcross(p, ctx);
    ctx.setStatus('removing the source');
    const src = this.resolve(p.from);
    await wrap(this.need(src, 'remove')(src.actualPath));
    this.changed(path.posix.dirname(p.from));
    this.changed(p.from, true);
  }

  /** The names of folder `dir` with whether each is a folder; none when it does not exist yet. */
  private async kindsAt(dir: string): Promise<Map<string, boolean>> {
    try {
      return new Map((await this.fs.list(dir, { refresh: true })).objs.map((o) => [o.name, o.isDir]));
    } catch (err) {
      if (isKind(err, 'NotFound')) return new Map();
      throw err;
    }
  }

  /** A readable of a whole file, from the driver's reader or its URL. */
  private async openRead(virtualPath: string, obj: Obj): Promise<Readable> {
    const { link } = await this.fs.link(virtualPath, {});
    const paced = (r: Readable) => (this.speed ? (throttled(r, this.speed.serverDownload) as Readable) : r);
    const file = link.file;
    if (file) {
      if (obj.size === 0) return Readable.from([]);
      // A file on this disk: a writer to this disk may copy it instead (util/file-source.ts); a pace makes a new stream, which is read.
      if (file.path) return paced(wholeFile(file.path, file.size, () => file.open(0, file.size - 1)));
      return paced(await file.open(0, file.size - 1));
    }
    if (!link.url) throw new Unsupported(`no way to read ${virtualPath}`);
    const res = await this.links.open(link);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      res.resume();
      throw new Upstream(`reading ${virtualPath} failed: HTTP ${status}`);
    }
    return paced(res);
  }
}

interface TransferPayload {
  from: string;
  toDir: string;
  /** Copy only: into a folder already there, copying what it lacks (a name there is left as it is). */
  merge?: boolean;
}

/** Driver failures as the client sees them: typed errors (and cancellation) pass, the rest are the storage's text (Upstream). */
async function wrap<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof AppError || isAbort(err)) throw err;
    throw new Upstream((err as Error).message || String(err));
  }
}
