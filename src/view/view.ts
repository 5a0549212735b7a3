import path from 'node:path';
import { Readable } from 'node:stream';
import { can, isAdmin, PERM } from '../auth/permissions.js';
import type { Core } from '../core.js';
import type { User } from '../db/users.js';
import type { Link, LinkArgs, MultipartTarget, Obj, UploadStream } from '../drivers/types.js';
import { BadRequest, Exists, Forbidden, isKind, KindError, NotEmpty, ServerError, Upstream } from '../errors.js';
import type { Mounted } from '../fs/storages.js';
import { checkName, type FsWriter, type SpooledUpload } from '../fs/write.js';
import type { Task } from '../tasks/manager.js';
import type { ArchiveMeta, InnerFolder } from '../archive/service.js';
import { replaceAll } from '../util/bounded-regex.js';
import { type PathStyle, underRoot, cleanPath } from './paths.js';
import { Rules, signRule } from './rules.js';

export const MSG_NO_ACCESS = 'password is incorrect or you have no permission';
export const MSG_DENIED = 'permission denied';
export const MSG_SYSTEM_FILE = 'system file upload ignored';

/** Names `ignore_system_files` refuses on every front (OpenList's IsSystemFile). */
export const SYSTEM_FILES = new Set(['.DS_Store', 'desktop.ini', 'Thumbs.db', '@eaDir']);
export const isSystemFile = (name: string): boolean => SYSTEM_FILES.has(name) || name.startsWith('._');

/** Entries a move or copy may look through for hidden ones before it refuses (as if one were found). */
const HIDE_WALK_LIMIT = 10_000;

/**
 * What a front adds to the rules: the bit every change through it needs on top of the
 * operation's own (WebDAV the manage bit 512, SFTP and FTP the FTP/SFTP write bit 2048, the API
 * none), and how its clients spell paths. A new front declares its own; the view is unchanged.
 */
export interface FrontPolicy {
  changeBit: number;
  paths: PathStyle;
}

export const FRONTS = {
  api: { changeBit: 0, paths: 'strict' },
  webdav: { changeBit: PERM.WEBDAV_MANAGE, paths: 'navigate' },
  ftp: { changeBit: PERM.FTP_WRITE, paths: 'navigate' },
  // S3 keys are names, not navigation: a `..` segment is refused rather than resolved.
  s3: { changeBit: 0, paths: 'strict' },
} as const satisfies Record<string, FrontPolicy>;

export interface ViewOptions {
  /** A front of FRONTS by name, or a policy of its own. */
  front: keyof typeof FRONTS | FrontPolicy;
  /**
   * The folder passwords the principal presents (API `password` and, for moves and copies,
   * `dst_password`; the WebDAV/FTP guest's password); a rule accepts any of them.
   */
  password?: string | string[];
}


const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);
const parentOf = (p: string) => path.posix.dirname(p);

export interface Listing {
  objs: Obj[];
  storage?: Mounted;
  write: boolean;
  readme: string;
  header: string;
}

/**
 * The filesystem as one principal sees it: every operation a front may ask for, with every rule
 * decided here once — the base path and path cleaning, the operation's permission bit and the
 * front's, hide rules (on the path, and on what a moved or copied folder holds), folder
 * passwords on the source and the destination of every operation, the write rule, and
 * `ignore_system_files`. Fronts (API, raw links, WebDAV, SFTP, FTP, search, offline downloads)
 * call only this; `fs/` below knows nothing of users. The principal is a user record: a real
 * user, or the synthetic one a share link or an S3 key stands for (its base path and bits).
 */
export class View {
  readonly root: string;
  readonly rules: Rules;
  private readonly passwords: string[];
  private readonly changeBit: number;
  private readonly style: PathStyle;

  constructor(
    private readonly core: Core,
    readonly user: User,
    opts: ViewOptions,
  ) {
    this.root = cleanPath(user.basePath);
    this.rules = new Rules(core.metas, user);
    this.passwords = [opts.password ?? ''].flat().filter((p, i) => i === 0 || p !== '');
    const front = typeof opts.front === 'string' ? FRONTS[opts.front] : opts.front;
    this.changeBit = front.changeBit;
    this.style = front.paths;
  }

  // ---- paths ----

  /** A client path (below the principal's root) as a virtual path; refuses what is over the limits. */
  virtual(clientPath: string): string {
    return underRoot(this.root, clientPath, this.style);
  }

  /** A client path from the root of the whole tree (admins only, `/api/fs/dirs` force_root). */
  virtualFromTop(clientPath: string): string {
    if (!isAdmin(this.user)) throw new Forbidden('Permission denied');
    return underRoot('/', clientPath, this.style);
  }

  /** A virtual path as the client sees it. */
  client(virtualPath: string): string {
    if (this.root === '/') return virtualPath;
    return virtualPath.slice(this.root.length) || '/';
  }

  // ---- rules ----

  /** May the principal read the path: not hidden, and the folder password given where one is set. */
  requireRead(p: string): void {
    if (this.rules.isHidden(p)) throw new KindError('Hidden', MSG_NO_ACCESS);
    if (!this.rules.passwordOk(p, this.passwords)) throw new KindError('PasswordRequired', MSG_NO_ACCESS);
  }

  mayRead(p: string): boolean {
    return !this.rules.isHidden(p) && this.rules.passwordOk(p, this.passwords);
  }

  visible(dir: string, objs: Obj[]): Obj[] {
    return this.rules.visible(dir, objs);
  }

  /**
   * A change at each path: the front's bit and the operation's, no path hidden, and the password
   * of each path and of its folder (writing inside a protected folder needs what reading needs).
   */
  private requireChange(bit: number, ...targets: string[]): void {
    if ((this.changeBit && !can(this.user, this.changeBit)) || (bit && !can(this.user, bit))) throw new Forbidden(MSG_DENIED);
    for (const t of targets) if (this.rules.isHidden(t)) throw new Forbidden(MSG_DENIED);
    for (const t of targets) {
      if (!this.rules.passwordOk(t, this.passwords) || !this.rules.passwordOk(parentOf(t), this.passwords)) {
        throw new KindError('PasswordRequired', MSG_NO_ACCESS);
      }
    }
  }

  /** Changing a hidden entry is refused whether it exists or not (WebDAV checks it before any method's own work). */
  requireChangeable(p: string): void {
    if (this.rules.isHidden(p)) throw new Forbidden(MSG_DENIED);
  }

  /** Creating at `p` (mkdir, upload, set time or properties): the write bit or a write rule on its folder, then as any change. */
  requireCreate(p: string): void {
    if (this.changeBit && !can(this.user, this.changeBit)) throw new Forbidden(MSG_DENIED);
    if (!this.rules.canWrite(parentOf(p))) throw new Forbidden(MSG_DENIED);
    this.requireChange(0, p);
  }

  /**
   * Hide and password rules follow the data: a folder holding entries hidden from the principal,
   * or a folder protected by a password the principal lacks, is not moved, copied or renamed by
   * them (the rules are keyed by path and would not travel with it).
   */
  private async requireCarryable(p: string, obj: Obj): Promise<void> {
    if (!obj.isDir) return;
    if (this.rules.lockedInside(p, this.passwords)) throw new KindError('PasswordRequired', MSG_NO_ACCESS);
    if (await this.hiddenInside(p)) throw new Forbidden(MSG_DENIED);
  }

  private async hiddenInside(folder: string): Promise<boolean> {
    if (!this.rules.mayHideInside(folder)) return false;
    let budget = HIDE_WALK_LIMIT;
    const walk = async (dir: string): Promise<boolean> => {
      const { objs } = await this.core.fs.list(dir, { refresh: true });
      if (this.rules.visible(dir, objs).length !== objs.length) return true;
      for (const o of objs) {
        if (--budget < 0) return true;
        if (o.isDir && (await walk(join(dir, o.name)))) return true;
      }
      return false;
    };
    return walk(folder);
  }

  // ---- reads ----

  async get(p: string): Promise<{ obj: Obj; storage?: Mounted }> {
    this.requireRead(p);
    return this.core.fs.get(p);
  }

  async stat(p: string): Promise<Obj> {
    return (await this.get(p)).obj;
  }

  /** The object at a path, or undefined when there is none or it is hidden. */
  async find(p: string): Promise<Obj | undefined> {
    try {
      return await this.stat(p);
    } catch (err) {
      if (isKind(err, 'NotFound', 'Hidden')) return undefined;
      throw err;
    }
  }

  async folder(p: string): Promise<Obj> {
    const obj = await this.stat(p);
    if (!obj.isDir) throw new BadRequest('not a folder');
    return obj;
  }

  /** A folder's entries the principal may see, with the folder's readme, header and write flag. */
  async list(p: string, opts: { refresh?: boolean } = {}): Promise<Listing> {
    this.requireRead(p);
    const write = this.rules.canWrite(p);
    if (opts.refresh && !write) throw new Forbidden('Refresh without permission');
    const listed = await this.core.fs.list(p, { refresh: opts.refresh ?? false });
    return { objs: this.rules.visible(p, listed.objs), storage: listed.storage, write, readme: this.rules.readme(p), header: this.rules.header(p) };
  }

  /** Entries of a folder that must exist as a folder (SFTP/FTP listings). */
  async entries(p: string): Promise<Obj[]> {
    await this.folder(p);
    return (await this.list(p)).objs;
  }

  readme(p: string): string {
    return this.rules.readme(p);
  }

  header(p: string): string {
    return this.rules.header(p);
  }

  /** Which entries of folder `dir` carry a sign in their raw links (wire-api.md §8). */
  signTest(dir: string, storage: Mounted | undefined): (name: string) => boolean {
    if (this.core.settings.getBool('sign_all') || storage?.row.enable_sign) return () => true;
    return signRule(this.core.metas, dir);
  }

  async link(p: string, args: LinkArgs): Promise<{ link: Link; obj: Obj; storage: Mounted }> {
    this.requireRead(p);
    return this.core.fs.link(p, args);
  }

  /** Where a readable path really is once its storage followed every symlink (share links). */
  async canonical(p: string): Promise<string> {
    this.requireRead(p);
    return this.core.fs.canonical(p);
  }

  /** The storage holding a readable path (its proxy and WebDAV policies). */
  storageOf(p: string): Mounted {
    this.requireRead(p);
    return this.core.fs.resolveStorage(p).storage;
  }

  async other(p: string, method: string, data: unknown): Promise<unknown> {
    this.requireRead(p);
    return this.core.fs.other(p, method, data);
  }

  /**
   * A file to be read at any offsets (SFTP): decided once, as `openRead` decides each reader; with
   * the local file holding its bytes when the storage serves it from one (Local), for positional
   * reads of one open file.
   */
  async readable(p: string): Promise<{ obj: Obj; localPath?: string }> {
    const obj = await this.stat(p);
    if (obj.isDir) throw new BadRequest('is a folder');
    const { link } = await this.core.fs.link(p, {});
    return { obj, localPath: link.file?.path };
  }

  /** A file's bytes from `start` to the end (SFTP and FTP downloads). */
  async openRead(p: string, start = 0): Promise<{ stream: Readable; size: number; obj: Obj }> {
    const obj = await this.stat(p);
    if (obj.isDir) throw new BadRequest('is a folder');
    const { link } = await this.core.fs.link(p, {});
    if (link.file) {
      const size = link.file.size;
      const stream = start >= size ? Readable.from([]) : await link.file.open(start, size - 1);
      return { stream, size, obj };
    }
    if (!link.url) throw new ServerError('this file can not be read');
    const res = await this.core.links.open(link, { headers: start > 0 ? { range: `bytes=${start}-` } : {} });
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300 || (start > 0 && status !== 206)) {
      res.resume();
      throw new Upstream(status < 200 || status >= 300 ? `reading the file failed: HTTP ${status}` : 'the storage can not read from an offset');
    }
    return { stream: res, size: obj.size, obj };
  }

  // ---- archives ----

  /** Reading inside an archive: the read-archives bit, then the archive file's own rules (hide, password). */
  private requireArchiveRead(p: string): void {
    if (!can(this.user, PERM.READ_ARCHIVES)) throw new Forbidden(MSG_DENIED);
    this.requireRead(p);
  }

  async archiveMeta(p: string, opts: { password?: string; refresh?: boolean }): Promise<ArchiveMeta> {
    this.requireArchiveRead(p);
    return this.core.archives.meta(p, opts);
  }

  async archiveList(p: string, inner: string, opts: { password?: string; refresh?: boolean }): Promise<InnerFolder> {
    this.requireArchiveRead(p);
    return this.core.archives.list(p, inner, opts);
  }

  /** One file entry's bytes (share links' `/sad`). */
  async archiveEntry(p: string, inner: string, password: string, signal?: AbortSignal) {
    this.requireArchiveRead(p);
    return this.core.archives.entry(p, inner, password, signal);
  }

  /**
   * Extracts archives of `srcDir` into `dstDir` as tasks: the decompress bit, each archive
   * readable, and the target folder creatable as for any upload.
   */
  async decompress(srcDir: string, names: string[], dstDir: string, opts: { password: string; inner: string; putIntoNewDir: boolean; overwrite: boolean }): Promise<Task[]> {
    if (!can(this.user, PERM.DECOMPRESS)) throw new Forbidden(MSG_DENIED);
    for (const n of names) checkName(n);
    for (const n of names) this.requireRead(join(srcDir, n));
    if (!this.rules.canWrite(dstDir)) throw new Forbidden(MSG_DENIED);
    this.requireChange(0, dstDir);
    const tasks: Task[] = [];
    for (const n of names) {
      // A storage that extracts on its side (an OpenList peer) leaves no task here.
      const task = await this.core.archives.decompress(join(srcDir, n), dstDir, opts, this.user);
      if (task) tasks.push(task);
    }
    return tasks;
  }

  // ---- changes ----

  async mkdir(p: string): Promise<void> {
    this.requireCreate(p);
    await this.core.writer.mkdir(p);
  }

  /** Checks an upload to `p` before its body is read; returns the file's name. */
  checkPut(p: string): string {
    this.requireCreate(p);
    const name = path.posix.basename(p);
    if (this.core.settings.getBool('ignore_system_files') && isSystemFile(name)) throw new Forbidden(MSG_SYSTEM_FILE, 500);
    return name;
  }

  async put(p: string, up: UploadStream, overwrite: boolean): Promise<void> {
    this.checkPut(p);
    await this.core.writer.put(p, up, { overwrite, creator: this.user });
  }

  /** Stores a finished local file at `p` (a resumable upload), taken over where the storage can. */
  async putFile(p: string, file: Parameters<FsWriter['putFile']>[1], overwrite: boolean): Promise<void> {
    this.checkPut(p);
    await this.core.writer.putFile(p, file, { overwrite, creator: this.user });
  }

  /** The storage's multipart upload for a file at `p` (S3), when it has one. */
  multipartTarget(p: string): MultipartTarget | undefined {
    this.checkPut(p);
    return this.core.writer.multipartTarget(p);
  }

  async beginMultipart(p: string, mimetype?: string): Promise<string> {
    this.checkPut(p);
    return this.core.writer.beginMultipart(p, mimetype);
  }

  /** Makes the file of a multipart upload appear at `p`, decided as a put. */
  async finishMultipart(p: string, uploadId: string, parts: Array<{ n: number; etag: string }>, overwrite: boolean): Promise<void> {
    this.checkPut(p);
    await this.core.writer.finishMultipart(p, uploadId, parts, { overwrite, creator: this.user });
  }

  async putAsTask(p: string, spooled: Omit<SpooledUpload, 'target' | 'overwrite'>, overwrite: boolean): Promise<Task> {
    this.checkPut(p);
    return this.core.writer.putAsTask(p, spooled, { overwrite, creator: this.user });
  }

  /** May the principal store a file at `p` (SFTP/FTP open for writing): returns what is there. */
  async checkUpload(p: string, overwrite: boolean): Promise<Obj | undefined> {
    this.checkPut(p);
    await this.folder(parentOf(p));
    const existing = await this.find(p);
    if (existing?.isDir) throw new BadRequest('is a folder');
    if (existing && !overwrite) throw new Exists('file exists');
    return existing;
  }

  /** Stores a stream of unknown size at `p` (SFTP and FTP uploads, after checkUpload). */
  async upload(p: string, stream: Readable, overwrite = true): Promise<void> {
    await this.put(p, { name: path.posix.basename(p), size: -1, stream }, overwrite);
  }

  /** Creates one folder in an existing folder; a name already there is refused (SFTP, FTP). */
  async makeFolder(p: string): Promise<void> {
    this.requireCreate(p);
    await this.folder(parentOf(p));
    if (await this.find(p)) throw new Exists('file exists');
    await this.core.writer.mkdir(p);
  }

  /**
   * Renames or moves `from` to `to` as a file system would (SFTP, FTP): the target's folder must
   * exist, and an existing file there is replaced only with `overwrite` (a folder never).
   */
  async renamePath(from: string, to: string, overwrite: boolean): Promise<void> {
    await this.folder(parentOf(to));
    const existing = await this.find(to);
    if (existing && (!overwrite || existing.isDir)) throw new Exists('file exists');
    await this.moveTo(from, to, overwrite);
  }

  async setModified(p: string, modified: Date): Promise<void> {
    this.requireCreate(p);
    await this.stat(p);
    await this.core.writer.setModified(p, modified);
  }

  async rename(p: string, name: string, overwrite = false): Promise<void> {
    checkName(name);
    if (p === this.root) throw new Forbidden('the root folder can not be renamed');
    this.requireChange(PERM.RENAME, p, join(parentOf(p), name));
    const obj = await this.core.fs.get(p).then((r) => r.obj, () => undefined);
    if (obj) await this.requireCarryable(p, obj);
    await this.core.writer.rename(p, name, overwrite);
  }

  async batchRename(dir: string, pairs: Array<{ src_name: string; new_name: string }>): Promise<void> {
    this.requireChange(PERM.RENAME, dir);
    for (const p of pairs) {
      if (!p.src_name || !p.new_name) continue;
      checkName(p.src_name);
      checkName(p.new_name);
      this.requireChange(PERM.RENAME, dir, join(dir, p.src_name), join(dir, p.new_name));
    }
    for (const p of pairs) {
      if (!p.src_name || !p.new_name) continue;
      await this.rename(join(dir, p.src_name), p.new_name);
    }
  }

  /** Renames every visible entry whose name matches, first match replaced; returns how many. */
  async regexRename(dir: string, pattern: string, replacement: string): Promise<number> {
    this.requireChange(PERM.RENAME, dir);
    const { objs } = await this.core.fs.list(dir, { refresh: true });
    const names = this.rules.visible(dir, objs).map((o) => o.name);
    const renamed = await replaceAll(pattern, replacement, names);
    let n = 0;
    for (const [i, next] of renamed.entries()) {
      if (next === null || next === names[i]) continue;
      await this.rename(join(dir, names[i]!), checkName(next));
      n++;
    }
    return n;
  }

  /** Checks names and both folders of a batch move or copy, and every entry it carries. */
  private async checkBatch(bit: number, srcDir: string, dstDir: string, names: string[]): Promise<void> {
    for (const n of names) checkName(n);
    this.requireChange(bit, srcDir, dstDir, ...names.flatMap((n) => [join(srcDir, n), join(dstDir, n)]));
    for (const n of names) {
      const from = join(srcDir, n);
      const obj = await this.core.fs.get(from).then((r) => r.obj, () => undefined);
      if (obj) await this.requireCarryable(from, obj);
    }
  }

  async move(srcDir: string, dstDir: string, names: string[], overwrite = false): Promise<Task[]> {
    await this.checkBatch(PERM.MOVE, srcDir, dstDir, names);
    return this.core.writer.move(srcDir, dstDir, names, { overwrite, creator: this.user });
  }

  async copy(srcDir: string, dstDir: string, names: string[], overwrite = false): Promise<Task[]> {
    await this.checkBatch(PERM.COPY, srcDir, dstDir, names);
    return this.core.writer.copy(srcDir, dstDir, names, { overwrite, creator: this.user });
  }

  /** Moves every file below `srcDir` into `dstDir` (folders are not kept). */
  async recursiveMove(srcDir: string, dstDir: string): Promise<{ moved: number; tasks: Task[] }> {
    this.requireChange(PERM.MOVE, srcDir, dstDir);
    await this.requireCarryable(srcDir, { name: '', size: 0, isDir: true, modified: new Date(0) });
    return this.core.writer.recursiveMove(srcDir, dstDir, this.user);
  }

  async remove(dir: string, names: string[]): Promise<void> {
    for (const n of names) checkName(n);
    this.requireChange(PERM.REMOVE, dir, ...names.map((n) => join(dir, n)));
    await this.core.writer.remove(dir, names);
  }

  /** Deletes an entry by path (WebDAV DELETE, SFTP/FTP remove): `folder` says which kind it must be. */
  async removePath(p: string, kind?: 'file' | 'folder' | 'empty-folder'): Promise<void> {
    if (p === this.root) throw new Forbidden('the root folder can not be removed');
    this.requireChange(PERM.REMOVE, p);
    const obj = await this.stat(p);
    if (kind !== 'file' && kind !== undefined && !obj.isDir) throw new BadRequest('not a folder');
    if (kind === 'file' && obj.isDir) throw new BadRequest('is a folder');
    if (kind === 'empty-folder' && (await this.core.fs.list(p, { refresh: true })).objs.length > 0) throw new NotEmpty();
    await this.core.writer.remove(parentOf(p), [path.posix.basename(p)]);
  }

  /** Deletes the empty folders below `dir`; hidden and protected ones are left alone. */
  async removeEmptyDirs(dir: string): Promise<number> {
    this.requireChange(PERM.REMOVE, dir);
    return this.core.writer.removeEmptyDirs(dir, (p) => !this.mayRead(p));
  }

  /**
   * Moves or renames one object to a full path (WebDAV MOVE, SFTP/FTP rename): the rename bit in
   * the same folder, the move bit across folders; an existing target is replaced only with `overwrite`.
   */
  async moveTo(src: string, dst: string, overwrite: boolean): Promise<void> {
    if (src === this.root) throw new Forbidden('the root folder can not be renamed');
    checkName(path.posix.basename(dst));
    this.requireChange(parentOf(src) === parentOf(dst) ? PERM.RENAME : PERM.MOVE, src, dst);
    const obj = await this.stat(src);
    await this.requireCarryable(src, obj);
    await this.core.writer.moveTo(src, dst, overwrite);
  }

  /** Copies one object to a full path (WebDAV COPY; `shallow`: a folder without its contents). */
  async copyTo(src: string, dst: string, overwrite: boolean, shallow = false): Promise<void> {
    checkName(path.posix.basename(dst));
    this.requireChange(PERM.COPY, src, dst);
    const obj = await this.stat(src);
    if (!shallow) await this.requireCarryable(src, obj);
    const across = this.core.fs.resolveStorage(src).storage !== this.core.fs.resolveStorage(parentOf(dst)).storage;
    if (!shallow && obj.isDir && across && path.posix.basename(dst) === obj.name) {
      // A folder across storages is copied by a task, as the original does.
      if (overwrite && (await this.find(dst))) await this.core.writer.remove(parentOf(dst), [obj.name]);
      await this.core.writer.copy(parentOf(src), parentOf(dst), [obj.name], { overwrite: true, creator: this.user });
      return;
    }
    await this.core.writer.copyTo(src, dst, overwrite, shallow);
  }

  /** Where an offline download may store its files: the offline bit, and a folder the principal may write. */
  requireOfflineTarget(dir: string): void {
    if (!can(this.user, PERM.OFFLINE_DOWNLOAD)) throw new Forbidden(MSG_DENIED);
    if (!this.rules.canWrite(dir)) throw new Forbidden(MSG_DENIED);
    this.requireChange(0, dir);
  }
}

/** May a user use SFTP and FTP: enabled, and holding the FTP/SFTP read bit (1024). */
export const mayConnect = (u: User | undefined): u is User => u !== undefined && !u.disabled && can(u, PERM.FTP_READ);

/** Makes views; the one door from a front to `fs/` for a principal's requests. */
export class Views {
  constructor(private readonly core: Core) {}

  for(user: User, opts: ViewOptions): View {
    return new View(this.core, user, opts);
  }
}
