import { constants, copyFileSync, createReadStream, type Dirent, realpathSync, renameSync, stat as statCallback, statSync, type Stats, utimesSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { abortError, checkFile, writeUploadTo } from '../write-file.js';
import {
  defineDriver,
  type DriverContext,
  type Driver,
  driverConfig,
  type FormItem,
  item,
  type Link,
  type LinkArgs,
  type LocalFile,
  ObjectNotFound,
  type Obj,
  StorageError,
  UploadIntegrityError,
  type UploadStream,
} from '../types.js';
import { Thumbnailer, TYPE_IMAGE, TYPE_VIDEO } from './thumbnail.js';
import { copyTree } from './copy-tree.js';
import { DIR_SIZE_BUDGET, folderSize, sizeFolders } from './dir-size.js';
import { type FileSource, fileSourceOf } from '../../util/file-source.js';
import { SyncSlices } from '../../util/sync-slices.js';

const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '/', required: true, help: 'absolute path of the folder on this machine' }),
  item('directory_size', 'bool', { default: 'false', help: 'Show the size of each folder (the files below it); this might impact host performance' }),
  item('thumbnail', 'bool', { required: true, help: 'enable thumbnail' }),
  item('thumb_cache_folder', 'string'),
  item('thumb_concurrency', 'string', { default: '16', help: 'How many thumbnails are made at the same time.' }),
  item('video_thumb_pos', 'string', {
    default: '20%',
    help: "Where a video's thumbnail frame is taken: seconds (10, 2.5), or a percentage of the duration when it ends with '%'",
  }),
  item('show_hidden', 'bool', { default: 'true', help: 'show hidden directories and files' }),
  item('mkdir_perm', 'string', { default: '777' }),
  item('recycle_bin_path', 'string', { default: 'delete permanently', help: "path to recycle bin, delete permanently if empty or keep 'delete permanently'" }),
  // Atrium's own: off, no symbolic link below the root is listed or followed (see docs/access-and-security.md).
  item('follow_symlinks', 'bool', { default: 'true', help: 'follow symbolic links that stay inside the root folder; off: links are neither listed nor followed' }),
];

/** Read size of file streams: 512 KiB chunks cut per-chunk overhead of large downloads (64 KiB,
 * the default, halved throughput) while 16 parallel downloads stay under 200 MB of RSS. Used
 * where the bytes pass a speed limit; otherwise /d, /p and WebDAV read `path` directly
 * (http/send-file.ts, LocalPump). */
const READ_CHUNK = 512 * 1024;

/** How many stat calls a listing keeps in flight. */
const STAT_BATCH = 256;

/**
 * Listings stat synchronously, in slices between two turns of the event loop (util/sync-slices.ts):
 * inodes in the kernel's cache answer `statSync` in about a microsecond, several times faster than
 * a round trip through the thread pool; a slice over the budget switches the rest of the listing
 * to asynchronous stats.
 */
const SYNC_FIRST_SLICE = 32;
const SYNC_MAX_SLICE = 512;
const SYNC_SLICE_MS = 10;
/**
 * Single calls (quickSlices) start with slices this small: a small file's copy, its time, size and
 * rename take a few hundred microseconds on a VM's disk, so 32 of them fill the budget and would
 * be taken for a slow disk; the slices grow from here while they stay well within it.
 */
const QUICK_FIRST_SLICE = 4;
/** A put of a file on this disk copies it synchronously (in slices as above) up to this size. */
const SYNC_COPY_MAX_BYTES = 256 * 1024;
/** Single calls' slices that found the disk slow stay asynchronous this long before they try again. */
const SYNC_RETRY_MS = 10_000;

/** Uploads are written here (inside the root, so the final rename stays on one file system). */
export const TEMP_FOLDER = '.atrium-tmp';

/** The temporary-name stems of the Local drivers of this process that are not dropped. */
const LIVE_TEMP_NAMES = new Set<string>();
function liveTempNames(): string {
  const stem = randomBytes(6).toString('hex');
  LIVE_TEMP_NAMES.add(stem);
  return stem;
}

const hasHashes = (up: UploadStream) => up.hashes !== undefined && Object.keys(up.hashes).length > 0;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EINVAL']);

/** fs.stat through its callback form: on large folders about 2.5x faster than fs.promises.stat. */
function quickStat(file: string): Promise<Stats> {
  return new Promise((resolve, reject) => statCallback(file, (err, st) => (err ? reject(err) : resolve(st))));
}

function isMissing(err: unknown): boolean {
  return MISSING.has((err as NodeJS.ErrnoException).code ?? '');
}

/**
 * An OS error as clients may see it: missing things are "object not found"; anything else
 * keeps its code but never the host path (which node puts into the message).
 */
export function fsError(err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  if (isMissing(e)) return new ObjectNotFound();
  if (e.code === 'EACCES' || e.code === 'EPERM') return new StorageError('Forbidden', 'permission denied by the file system');
  if (e.code === 'EEXIST') return new StorageError('Exists', 'file exists');
  if (e.code === 'ENOTEMPTY') return new StorageError('NotEmpty', 'file exists');
  if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return new StorageError('TooLarge', 'no space left on the storage');
  if (e.code === 'EISDIR') return new StorageError('BadRequest', 'is a folder');
  if (e.code) return new Error(`file system error ${e.code}`);
  return e instanceof Error ? e : new Error(String(e));
}

export class LocalDriver implements Driver {
  readonly root: string;
  private rootReal = '';
  /** Uploads of this driver writing into TEMP_FOLDER now (the last one done removes the empty folder). */
  private putsInFlight = 0;
  /** The removal of the emptied temporary folder, which a put starting meanwhile waits for (else it could remove the folder under that put). */
  private tempRemoval: Promise<void> | undefined;
  /** TEMP_FOLDER was made by a put still running (each put then asks for it no more). */
  private tempMade = false;
  /** The slices of single calls (quickSlices), and since when they have found the disk slow. */
  private quick: SyncSlices | undefined;
  private quickSlowSince = 0;
  /** Temporary names: this process's, unique by a random stem and a count (no random bytes drawn per put). */
  private readonly tempNames = liveTempNames();
  private tempCount = 0;
  readonly showHidden: boolean;
  readonly keepsModified = true;
  private readonly followLinks: boolean;
  readonly opts: Record<string, unknown>;
  private readonly thumbs?: Thumbnailer;

  constructor(
    opts: Record<string, unknown>,
    private readonly ctx: DriverContext,
  ) {
    this.opts = opts;
    this.root = path.resolve(String(opts.root_folder_path));
    this.showHidden = Boolean(opts.show_hidden);
    this.followLinks = opts.follow_symlinks !== false;
    if (opts.thumbnail) {
      const cache = String(opts.thumb_cache_folder ?? '');
      const pos = String(opts.video_thumb_pos ?? '').trim() || '20%';
      if (!/^\d+(\.\d+)?%?$/.test(pos) || (pos.endsWith('%') && Number.parseFloat(pos) > 100)) {
        throw new Error(`video_thumb_pos must be seconds (e.g. 10) or a percentage of the duration (e.g. 20%), not ${pos}`);
      }
      this.thumbs = new Thumbnailer(cache ? path.resolve(cache) : '', Number.parseInt(String(opts.thumb_concurrency), 10) || 16, pos);
    }
  }

  private toObj(name: string, st: Stats): Obj {
    const modified = st.mtime;
    const isDir = st.isDirectory();
    const obj: Obj = { name, size: isDir ? 0 : st.size, isDir, modified, created: st.birthtimeMs > 0 ? st.birthtime : modified };
    if (this.thumbs && !isDir) {
      const kind = this.ctx.fileType(name);
      if (kind === TYPE_IMAGE || kind === TYPE_VIDEO) obj.selfThumb = true;
    }
    return obj;
  }

  async init(): Promise<void> {
    if (!path.isAbsolute(String(this.opts.root_folder_path))) throw new Error('root folder path must be absolute');
    let st: Stats;
    try {
      st = await fs.stat(this.root);
    } catch (err) {
      throw new Error(`root folder ${this.root} is not accessible: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!st.isDirectory()) throw new Error(`root folder ${this.root} is not a directory`);
    this.rootReal = await fs.realpath(this.root);
    await this.sweepTemp();
  }

  /** Removes what interrupted uploads left: temp files whose writing process is gone. */
  private async sweepTemp(): Promise<void> {
    let names: string[];
    try {
      names = await fs.readdir(path.join(this.rootReal, TEMP_FOLDER));
    } catch {
      return;
    }
    for (const name of names) {
      const [pidPart, stem] = name.split('-');
      const pid = Number.parseInt(pidPart ?? '', 10);
      // This process's own names are swept too (a restarted container has the same pid), except
      // those of a driver of this storage still serving (mounted again, the old one serves meanwhile).
      if ((pid === process.pid && !LIVE_TEMP_NAMES.has(stem ?? '')) || !Number.isFinite(pid) || !pidAlive(pid)) {
        await fs.rm(path.join(this.rootReal, TEMP_FOLDER, name), { force: true, recursive: true }).catch(() => undefined);
      }
    }
    // Empty once swept (another live process's upload keeps it): not left in the storage.
    await fs.rmdir(path.join(this.rootReal, TEMP_FOLDER)).catch(() => undefined);
  }

  async drop(): Promise<void> {
    LIVE_TEMP_NAMES.delete(this.tempNames);
  }

  addition(): Record<string, unknown> {
    return this.opts;
  }

  private inside(real: string): boolean {
    return real === this.rootReal || real.startsWith(this.rootReal.endsWith(path.sep) ? this.rootReal : this.rootReal + path.sep);
  }

  private hiddenName(name: string): boolean {
    return name === TEMP_FOLDER || (!this.showHidden && name.startsWith('.'));
  }

  /**
   * The real path of `rel` (a cleaned, absolute path inside the storage), refusing anything
   * whose real location — after every symlink — is outside the root: such paths do not exist.
   * Without follow_symlinks, a path through any link below the root does not exist either.
   */
  async resolve(rel: string): Promise<string> {
    if (rel.includes('\0')) throw new ObjectNotFound();
    if (rel.split('/').some((seg) => seg === '..' || this.hiddenName(seg))) throw new ObjectNotFound();
    let real: string;
    try {
      const full = path.join(this.root, rel);
      const slices = this.quickSlices();
      real = slices ? slices.run(() => realpathSync.native(full)) : await fs.realpath(full);
      if (slices?.full) await slices.pause();
    } catch (err) {
      throw fsError(err);
    }
    if (!this.inside(real)) throw new ObjectNotFound();
    // No link on the way: the real path is the root's real path plus the path as asked.
    if (!this.followLinks && real !== path.join(this.rootReal, ...rel.split('/').filter(Boolean))) throw new ObjectNotFound();
    return real;
  }

  async canonical(rel: string): Promise<string> {
    const real = await this.resolve(rel);
    const inner = path.relative(this.rootReal, real).split(path.sep).join('/');
    return inner === '' ? '/' : `/${inner}`;
  }

  async list(dir: string): Promise<Obj[]> {
    const real = await this.resolve(dir);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(real, { withFileTypes: true });
    } catch (err) {
      throw fsError(err);
    }
    const out: Obj[] = [];
    let i = 0;
    const slices = new SyncSlices(SYNC_FIRST_SLICE, SYNC_MAX_SLICE, SYNC_SLICE_MS);
    while (i < entries.length && slices.sync) {
      const e = entries[i++]!;
      const o = e.isSymbolicLink() ? await this.entry(real, e) : slices.run(() => this.entryNow(real, e));
      if (o) out.push(o);
      if (slices.full && i < entries.length) await slices.pause();
    }
    for (; i < entries.length; i += STAT_BATCH) {
      const batch = entries.slice(i, i + STAT_BATCH);
      const objs = await Promise.all(batch.map((e) => this.entry(real, e)));
      for (const o of objs) if (o) out.push(o);
    }
    if (this.opts.directory_size) await sizeFolders(real, out, (n) => !this.hiddenName(n));
    return out;
  }

  /** `entry` of a name that is not a symbolic link, with a synchronous stat. */
  private entryNow(dir: string, e: Dirent): Obj | undefined {
    if (this.hiddenName(e.name)) return undefined;
    try {
      const st = statSync(`${dir}${dir.endsWith(path.sep) ? '' : path.sep}${e.name}`, { throwIfNoEntry: false });
      return st && this.toObj(e.name, st);
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
      throw fsError(err);
    }
  }

  /** One listed entry, or undefined when it must not be shown (hidden, dangling, escaping link). */
  private async entry(dir: string, e: Dirent): Promise<Obj | undefined> {
    if (this.hiddenName(e.name)) return undefined;
    const full = `${dir}${dir.endsWith(path.sep) ? '' : path.sep}${e.name}`;
    try {
      if (e.isSymbolicLink() && (!this.followLinks || !this.inside(await fs.realpath(full)))) return undefined;
      const obj = this.toObj(e.name, await quickStat(full));
      if (e.isSymbolicLink()) obj.symlink = true;
      return obj;
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
      throw fsError(err);
    }
  }

  /** A link to the thumbnail of an image or video (the file itself for SVG). */
  private async thumbLink(real: string, rel: string, st: Stats): Promise<Link> {
    const kind = this.ctx.fileType(path.posix.basename(rel));
    if (!this.thumbs) throw new Error('thumbnails are disabled for this storage');
    if (kind !== TYPE_IMAGE && kind !== TYPE_VIDEO) throw new Error('no thumbnail for this kind of file');
    if (rel.toLowerCase().endsWith('.svg')) {
      return { file: { size: st.size, modified: st.mtime, open: async (start, end) => createReadStream(real, { start, end }) } };
    }
    let png: Buffer;
    try {
      png = await this.thumbs.thumbnail(real, kind, { size: st.size, mtimeMs: st.mtimeMs });
    } catch (err) {
      // Tool errors carry the command line, host path included: say what failed, not where.
      const e = err as NodeJS.ErrnoException & { cmd?: string };
      const why = e.code === 'ENOENT' ? 'ffmpeg is not installed' : e.cmd ? 'ffmpeg could not read the video' : 'the image could not be read';
      throw new Error(`failed to make a thumbnail: ${why}`);
    }
    return {
      contentType: 'image/png',
      file: { size: png.length, modified: st.mtime, open: async (start, end) => Readable.from([png.subarray(start, end + 1)]) },
    };
  }

  private mkdirMode(): number {
    const mode = Number.parseInt(String(this.opts.mkdir_perm || '777'), 8);
    return Number.isFinite(mode) ? mode : 0o777;
  }

  /** Host path of `name` in the (existing, confined) folder `dir`. */
  private async child(dir: string, name: string): Promise<string> {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\\') || name.includes('\0') || this.hiddenName(name)) {
      throw new ObjectNotFound('invalid name');
    }
    return path.join(await this.resolve(dir), name);
  }

  async makeDir(parent: string, name: string): Promise<void> {
    const target = await this.child(parent, name);
    try {
      await fs.mkdir(target, { mode: this.mkdirMode() });
    } catch (err) {
      throw fsError(err);
    }
  }

  async rename(rel: string, newName: string): Promise<void> {
    const src = await this.resolve(rel);
    const dst = await this.child(path.posix.dirname(rel), newName);
    await this.renameOrCopy(src, dst);
  }

  async move(src: string, dstDir: string): Promise<void> {
    const from = await this.resolve(src);
    const to = await this.child(dstDir, path.posix.basename(src));
    await this.renameOrCopy(from, to);
  }

  async copy(src: string, dstDir: string): Promise<void> {
    const from = await this.resolve(src);
    const to = await this.child(dstDir, path.posix.basename(src));
    try {
      await copyTree(from, to);
    } catch (err) {
      throw fsError(err);
    }
  }

  async remove(rel: string): Promise<void> {
    const target = await this.resolve(rel);
    if (target === this.rootReal) throw new Error('the root folder can not be removed');
    const bin = String(this.opts.recycle_bin_path ?? '').trim();
    try {
      if (bin === '' || bin === 'delete permanently') {
        await fs.rm(target, { recursive: true, force: true });
        return;
      }
      await fs.mkdir(bin, { recursive: true });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      await this.renameOrCopy(target, path.join(bin, `${path.basename(target)}.${stamp}.${randomBytes(3).toString('hex')}`));
    } catch (err) {
      throw fsError(err);
    }
  }

  /** rename(2), or copy then delete where source and target are on different file systems. */
  private async renameOrCopy(from: string, to: string): Promise<void> {
    try {
      await fs.rename(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw fsError(err);
      try {
        await copyTree(from, to);
        await fs.rm(from, { recursive: true, force: true });
      } catch (e) {
        throw fsError(e);
      }
    }
  }

  async put(dstDir: string, up: UploadStream): Promise<void> {
    const target = await this.child(dstDir, up.name);
    const tempDir = path.join(this.rootReal, TEMP_FOLDER);
    this.putsInFlight++;
    try {
      if (this.tempRemoval) await this.tempRemoval;
      if (!this.tempMade) {
        await fs.mkdir(tempDir, { recursive: true });
        this.tempMade = true;
      }
      const temp = path.join(tempDir, `${process.pid}-${this.tempNames}-${(this.tempCount++).toString(36)}`);
      try {
        const source = fileSourceOf(up.stream);
        if (source && source.size === up.size && !hasHashes(up)) {
          await this.copyIn(source, temp, target, up);
        } else {
          await writeUploadTo(temp, up);
          if (up.modified) await fs.utimes(temp, up.modified, up.modified);
          await fs.rename(temp, target);
        }
      } catch (err) {
        await fs.rm(temp, { force: true });
        if (isMissing(err)) this.tempMade = false; // the folder went (removed by hand): the next put makes it again
        if ((err as NodeJS.ErrnoException).code && !(err as Error).name.startsWith('Abort')) throw fsError(err);
        throw err;
      }
    } finally {
      // No empty temporary folder is left in the storage once its last upload here is done.
      if (--this.putsInFlight === 0) {
        this.tempMade = false;
        const removal = fs.rmdir(tempDir).catch(() => undefined);
        this.tempRemoval = removal;
        await removal;
        if (this.tempRemoval === removal) this.tempRemoval = undefined;
      }
    }
  }

  /**
   * Stores the file of this disk that a put's stream stands for (util/file-source.ts) by copying
   * it rather than reading the stream: a small one with synchronous calls in slices (no round
   * trip through the thread pool for each of copy, time, size and rename), a larger one by the
   * thread pool (copy_file_range in the kernel). The copy must hold the bytes the put declared,
   * as a streamed body must (the file may have changed since it was looked at).
   */
  private async copyIn(source: FileSource, temp: string, target: string, up: UploadStream): Promise<void> {
    if (up.signal?.aborted) throw abortError(up.signal);
    const slices = this.quickSlices();
    let size: number;
    if (slices && source.size <= SYNC_COPY_MAX_BYTES) {
      size = slices.run(() => {
        copyFileSync(source.path, temp, constants.COPYFILE_EXCL);
        if (up.modified) utimesSync(temp, up.modified, up.modified);
        const copied = statSync(temp).size;
        if (copied === up.size) renameSync(temp, target);
        return copied;
      });
      if (slices.full) await slices.pause();
    } else {
      await fs.copyFile(source.path, temp, constants.COPYFILE_EXCL);
      if (up.modified) await fs.utimes(temp, up.modified, up.modified);
      size = (await fs.stat(temp)).size;
      if (size === up.size) await fs.rename(temp, target);
    }
    if (size !== up.size) throw new UploadIntegrityError(`the file holds ${size} bytes, not the ${up.size} declared`);
    source.copied(size);
    up.stream.destroy();
    up.onProgress?.(size);
  }

  /**
   * The slices of this storage's single calls (a path's resolution, a stat, a small file's copy)
   * while they are synchronous; a new try once SYNC_RETRY_MS have passed since they found the
   * disk slow. Each call alone would cost a round trip through the thread pool several times
   * its own time (listings batch their stats in slices of their own).
   */
  private quickSlices(): SyncSlices | undefined {
    if (this.quick && !this.quick.sync) {
      const now = Date.now();
      this.quickSlowSince ||= now;
      if (now - this.quickSlowSince <= SYNC_RETRY_MS) return undefined;
      this.quick = undefined;
    }
    if (!this.quick) {
      this.quick = new SyncSlices(QUICK_FIRST_SLICE, SYNC_MAX_SLICE, SYNC_SLICE_MS);
      this.quickSlowSince = 0;
    }
    return this.quick;
  }

  /**
   * Takes a finished file over by renaming it into place (atomic, nothing copied), after checking
   * its size and any declared hash; false when it lies on another file system than the target.
   */
  async putFile(dstDir: string, file: LocalFile): Promise<boolean> {
    const target = await this.child(dstDir, file.name);
    let st: Stats;
    try {
      st = await fs.stat(file.path);
      if (st.dev !== (await fs.stat(path.dirname(target))).dev) return false;
    } catch (err) {
      throw fsError(err);
    }
    if (st.size !== file.size) throw new UploadIntegrityError(`the file holds ${st.size} bytes, not the ${file.size} declared`);
    if (file.hashes && Object.keys(file.hashes).length) await checkFile(file.path, file);
    try {
      if (file.modified) await fs.utimes(file.path, file.modified, file.modified);
      await fs.rename(file.path, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EXDEV') return false;
      throw fsError(err);
    }
    file.onProgress?.(file.size);
    return true;
  }

  async setModified(rel: string, modified: Date): Promise<void> {
    const real = await this.resolve(rel);
    try {
      await fs.utimes(real, modified, modified);
    } catch (err) {
      throw fsError(err);
    }
  }

  /** The file system holding the root: its size and the space an unprivileged writer may still use. */
  async usage(): Promise<{ total: number; free: number }> {
    const st = await fs.statfs(this.root);
    return { total: st.blocks * st.bsize, free: st.bavail * st.bsize };
  }

  async listStamp(dir: string): Promise<string> {
    const st = await fs.stat(await this.resolve(dir));
    return `${st.ino}:${st.mtimeMs}`;
  }

  private async stat(real: string): Promise<Stats> {
    try {
      const slices = this.quickSlices();
      if (!slices) return await fs.stat(real);
      const st = slices.run(() => statSync(real));
      if (slices.full) await slices.pause();
      return st;
    } catch (err) {
      throw fsError(err);
    }
  }

  async get(rel: string): Promise<Obj> {
    const real = await this.resolve(rel);
    const obj = this.toObj(rel === '/' ? '' : path.posix.basename(rel), await this.stat(real));
    if (obj.isDir && this.opts.directory_size) obj.size = (await folderSize(real, { left: DIR_SIZE_BUDGET }, (n) => !this.hiddenName(n))) ?? 0;
    return obj;
  }

  async link(rel: string, args: LinkArgs): Promise<Link> {
    const real = await this.resolve(rel);
    const st = await this.stat(real);
    if (st.isDirectory()) throw new ObjectNotFound('not a file');
    return this.linkTo(real, rel, st, args);
  }

  /** The entry and its link from one resolution and one stat (a folder's entry has no link: fs refuses it). */
  async getLink(rel: string, args: LinkArgs): Promise<{ obj: Obj; link: Link }> {
    const real = await this.resolve(rel);
    const st = await this.stat(real);
    const obj = this.toObj(rel === '/' ? '' : path.posix.basename(rel), st);
    if (st.isDirectory()) return { obj, link: {} };
    return { obj, link: await this.linkTo(real, rel, st, args) };
  }

  private async linkTo(real: string, rel: string, st: Stats, args: LinkArgs): Promise<Link> {
    if (args.type === 'thumb') return this.thumbLink(real, rel, st);
    return {
      file: {
        size: st.size,
        modified: st.mtime,
        path: real,
        open: async (start, end) => createReadStream(real, { start, end, highWaterMark: READ_CHUNK }),
      },
    };
  }
}

// Unlike the original, Local listings may be cached: the folder's mtime validates every cached
// listing (listStamp), so files added or removed outside this server still show at once.
export const localDriver = defineDriver(
  driverConfig({ name: 'Local', localSort: true, onlyLocal: true, defaultRoot: '/' }),
  ADDITIONAL,
  (options, ctx) => new LocalDriver(options, ctx),
);
