import path from 'node:path';
import { Readable } from 'node:stream';
import { can, isAdmin, PERM } from '../auth/permissions.js';
import type { ViewDeps } from './deps.js';
import type { User } from '../db/users.js';
import type { HttpDirectUpload, Link, LinkArgs, MultipartTarget, Obj, UploadStream } from '../drivers/types.js';
import { BadRequest, Exists, Forbidden, isKind, KindError, NotEmpty, NotFound, Unsupported, Upstream } from '../errors.js';
import type { Mounted } from '../fs/storages.js';
import { checkName, type FsWriter, type SpooledUpload } from '../fs/write.js';
import type { Task } from '../tasks/manager.js';
import type { TaskCreator } from '../tasks/creator.js';
import type { ArchiveMeta, InnerFolder } from '../archive/service.js';
import { replaceAll } from '../util/bounded-regex.js';
import { type PathStyle, underRoot } from './paths.js';
import { Tree } from './tree.js';
import type { QuotaOwner } from './quota.js';
import { Rules, signRule } from './rules.js';
import { LiveView } from './live.js';
import { absentAt, type BatchConflict, type ConflictPolicy } from './conflicts.js';
import { MSG_LOCKED } from '../fs/locks.js';
import type { EventFront, EventOrigin } from '../audit/events.js';
import { countBytes, Recorder, type TransferDone } from '../audit/record.js';
import type { Deleter, RestorePolicy } from '../fs/trash.js';
import type { TrashEntry } from '../db/trash.js';
import type { Throttle } from '../net/speed-limit.js';
import type { Meter } from './meters.js';
import { digestFile } from '../util/digest-file.js';
import { wholeFile } from '../util/file-source.js';

export const MSG_NO_ACCESS = 'password is incorrect or you have no permission';
export const MSG_DENIED = 'permission denied';
export const MSG_SYSTEM_FILE = 'system file upload ignored';

/** A system file (.DS_Store, Thumbs.db…) refused by ignore_system_files (kind Forbidden; OpenList answers it 500: server/api-codes.ts). */
export class SystemFile extends KindError {
  constructor() {
    super('Forbidden', MSG_SYSTEM_FILE);
  }
}

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
  /** The front decides WebDAV locks itself, with the tokens its requests submit (WebDAV); others are refused a locked path. */
  checksLocks?: boolean;
}

export const FRONTS = {
  api: { changeBit: 0, paths: 'strict' },
  webdav: { changeBit: PERM.WEBDAV_MANAGE, paths: 'navigate', checksLocks: true },
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
  /**
   * Who asks and from where, for the operation events the view emits (audit/events.ts): the
   * front's name, the client's address and the request's (or `task:<id>`) id. Without it the
   * events name the front of `front` (`api` for a policy of its own).
   */
  origin?: EventOrigin;
}

/** Fronts whose work is no client's transfer: not counted against an account's rates and max_transfers. */
const UNMETERED: ReadonlySet<string> = new Set(['task', 'cli']);

/** The setting that adds listings to the operation events (off: listings are not recorded). */
export const AUDIT_LISTINGS_SETTING = 'audit_log_listings';


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
  /** The principal's own root (base path): the client's `/`. */
  readonly root: string;
  /** The base path and the named roots the client sees at `/<name>` (several roots per user). */
  readonly tree: Tree;
  readonly rules: Rules;
  private readonly passwords: string[];
  private readonly changeBit: number;
  private readonly style: PathStyle;
  private readonly checksLocks: boolean;
  /** Emits this principal's operation events (one per operation, see record.ts). */
  private readonly rec: Recorder;
  /** The front this principal acts through (the trash records it). */
  private readonly front: EventFront;

  constructor(
    private readonly core: ViewDeps,
    readonly user: User,
    opts: ViewOptions,
  ) {
    this.tree = new Tree(user);
    this.root = this.tree.base;
    this.rules = new Rules(core.metas, user);
    this.passwords = [opts.password ?? ''].flat().filter((p, i) => i === 0 || p !== '');
    const front: FrontPolicy = typeof opts.front === 'string' ? FRONTS[opts.front] : opts.front;
    this.changeBit = front.changeBit;
    this.style = front.paths;
    this.checksLocks = front.checksLocks === true;
    const defaultFront: EventFront = typeof opts.front === 'string' ? opts.front : 'api';
    this.rec = new Recorder(core.events, user.username, opts.origin ?? { front: defaultFront });
    this.front = opts.origin?.front ?? defaultFront;
  }

  /**
   * This principal's meter (its account's rates and transfers in flight, view/meters.ts); a
   * task's, the system's and the command line's work is not a client's transfer and is not metered.
   */
  private meter(): Meter | undefined {
    return UNMETERED.has(this.front) ? undefined : this.core.meters.of(this.user);
  }

  /**
   * A client's transfer of `p` begins: refused beyond max_transfers (recorded). `sent` records its
   * end and ends it; `release` only ends it (once, whichever comes first: a front calls it when its
   * answer is over however it went, a HEAD or a failure that records nothing included).
   */
  private beginTransfer(p: string, meter = this.meter()): { sent: TransferDone; release: () => void } {
    const recorded = this.rec.transfer(p);
    let release: () => void;
    try {
      release = meter?.begin() ?? (() => undefined);
    } catch (err) {
      recorded(0, err);
      throw err;
    }
    const sent: TransferDone = (bytes, err) => {
      release();
      recorded(bytes, err);
    };
    return { sent, release };
  }

  /** Who a task started here runs as: this principal and the folder passwords it presented (each name is decided again on its live view). */
  private get taskCreator(): TaskCreator {
    return { id: this.user.id, username: this.user.username, role: this.user.role, passwords: this.passwords };
  }

  // ---- paths ----

  /** A client path (below the principal's root, or a named root at `/<name>`) as a virtual path; refuses what is over the limits. */
  virtual(clientPath: string): string {
    return this.tree.virtual(clientPath, this.style);
  }

  /** A client path from the root of the whole tree (admins only, `/api/fs/dirs` force_root). */
  virtualFromTop(clientPath: string): string {
    if (!isAdmin(this.user)) throw new Forbidden('Permission denied');
    return underRoot('/', clientPath, this.style);
  }

  /** A virtual path as the client sees it. */
  client(virtualPath: string): string {
    return this.tree.client(virtualPath);
  }

  /** True when a virtual path is in the principal's tree (its base path or a named root). */
  contains(virtualPath: string): boolean {
    return this.tree.contains(virtualPath);
  }

  /** True when a virtual path is the top of the principal's tree or of one of its roots (never renamed or removed). */
  isTop(virtualPath: string): boolean {
    return this.tree.isTop(virtualPath);
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
    for (const t of targets) if (this.rules.isHidden(t) || this.shadowed(t)) throw new Forbidden(MSG_DENIED);
    for (const t of targets) {
      if (!this.rules.passwordOk(t, this.passwords) || !this.rules.passwordOk(parentOf(t), this.passwords)) {
        throw new KindError('PasswordRequired', MSG_NO_ACCESS);
      }
    }
  }

  /** Changing a hidden entry is refused whether it exists or not (WebDAV checks it before any method's own work). */
  requireChangeable(p: string): void {
    if (this.rules.isHidden(p) || this.shadowed(p)) throw new Forbidden(MSG_DENIED);
  }

  /**
   * An entry of the base path that a named root stands in for (a batch operation naming a root
   * by folder and name would otherwise reach the entry the client does not see).
   */
  private shadowed(p: string): boolean {
    if (this.tree.named.length === 0 || parentOf(p) !== this.root) return false;
    const name = path.posix.basename(p);
    return this.tree.named.some((r) => r.name === name);
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
    const got = await this.core.fs.get(p);
    return { ...got, obj: this.named(p, got.obj) };
  }

  /** An entry under the name this principal's tree gives it (a root's own name), else its own. */
  private named(p: string, obj: Obj): Obj {
    const name = this.tree.nameOf(p);
    return name === undefined ? obj : { ...obj, name };
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
    if (!this.core.settings.getBool(AUDIT_LISTINGS_SETTING)) return this.listNow(p, opts);
    return this.rec.run('list', p, () => this.listNow(p, opts));
  }

  private async listNow(p: string, opts: { refresh?: boolean }): Promise<Listing> {
    this.requireRead(p);
    const write = this.rules.canWrite(p);
    if (opts.refresh && !write) throw new Forbidden('Refresh without permission');
    const listed = await this.core.fs.list(p, { refresh: opts.refresh ?? false });
    const objs = this.rules.visible(p, listed.objs);
    return { objs: p === this.root ? await this.withRoots(objs) : objs, storage: listed.storage, write, readme: this.rules.readme(p), header: this.rules.header(p) };
  }

  /**
   * The top folder's entries with each named root as a folder of its name (standing in for an
   * entry of that name in the base path); a root whose folder is missing, or hidden from the
   * principal, is left out.
   */
  private async withRoots(objs: Obj[]): Promise<Obj[]> {
    if (this.tree.named.length === 0) return objs;
    const roots = await Promise.all(this.tree.named.map(async (r) => {
      if (this.rules.isHidden(r.path)) return undefined;
      const obj = await this.core.fs.get(r.path).then((g) => g.obj, () => undefined);
      return obj?.isDir ? { ...obj, name: r.name } : undefined;
    }));
    const names = new Set(this.tree.named.map((r) => r.name));
    return [...objs.filter((o) => !names.has(o.name)), ...roots.filter((o): o is Obj => o !== undefined)];
  }

  /** Entries of a folder that must exist as a folder (SFTP/FTP listings). */
  async entries(p: string): Promise<Obj[]> {
    const read = async () => {
      await this.folder(p);
      return (await this.listNow(p, {})).objs;
    };
    return this.core.settings.getBool(AUDIT_LISTINGS_SETTING) ? this.rec.run('list', p, read) : read();
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

  /**
   * A file's link to be sent to the client (`/sd`, WebDAV GET, S3 GetObject): as `link`, with
   * `sent`, which the front calls once when its transfer ends with the bytes it sent (one
   * `download` event per transfer). A refused or failed lookup is recorded at once.
   */
  async download(p: string, args: LinkArgs): Promise<{ link: Link; obj: Obj; storage: Mounted; sent: TransferDone; release: () => void; pace?: Throttle }> {
    const meter = this.meter();
    const { sent, release } = this.beginTransfer(p, meter);
    try {
      return { ...(await this.link(p, args)), sent, release, pace: meter?.throttle('down') };
    } catch (err) {
      sent(0, err);
      throw err;
    }
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
  async readable(p: string): Promise<{ obj: Obj; localPath?: string; open: (start: number) => Promise<Readable>; sent: TransferDone }> {
    const meter = this.meter();
    const { sent } = this.beginTransfer(p, meter);
    try {
      const obj = await this.stat(p);
      if (obj.isDir) throw new BadRequest('is a folder');
      const { link } = await this.core.fs.link(p, {});
      // Positional reads of the local file pass no throttle: with a download rate, streams only.
      const localPath = meter?.limited('down') ? undefined : link.file?.path;
      const open = async (start: number) => {
        const { stream } = await this.openReadNow(p, start);
        return meter ? meter.paced(stream, 'down') : stream;
      };
      return { obj, localPath, open, sent };
    } catch (err) {
      sent(0, err);
      throw err;
    }
  }

  /**
   * A file's bytes from `start` to the end (FTP downloads, files of a zip download): one
   * `download` event when the stream ends or is closed, with the bytes read. `recorded: false`
   * for the reads of a transfer recorded as a whole (an SFTP handle, see `readable`).
   */
  async openRead(p: string, start = 0, opts: { recorded?: boolean } = {}): Promise<{ stream: Readable; size: number; obj: Obj }> {
    if (opts.recorded === false) return this.openReadNow(p, start);
    const meter = this.meter();
    const { sent } = this.beginTransfer(p, meter);
    try {
      const r = await this.openReadNow(p, start);
      return { ...r, stream: countBytes(meter ? (meter.paced(r.stream, 'down') as Readable) : r.stream, sent) };
    } catch (err) {
      sent(0, err);
      throw err;
    }
  }

  private async openReadNow(p: string, start: number): Promise<{ stream: Readable; size: number; obj: Obj }> {
    this.requireRead(p);
    // The entry comes with the link (one look on Local); a failure is answered as a look at the
    // path alone answers it (a folder, a mount point, a missing name).
    const { link, obj: found } = await this.core.fs.link(p, {}).catch(async (err: unknown) => {
      if ((await this.stat(p)).isDir) throw new BadRequest('is a folder');
      throw err;
    });
    const obj = this.named(p, found);
    const file = link.file;
    if (file) {
      const size = file.size;
      if (start >= size) return { stream: Readable.from([]), size, obj };
      // The whole of a file on this disk: a writer to this disk may copy it instead (util/file-source.ts).
      if (file.path && start === 0) {
        return { stream: wholeFile(file.path, size, () => file.open(0, size - 1)), size, obj };
      }
      return { stream: await file.open(start, size - 1), size, obj };
    }
    if (!link.url) throw new Unsupported('this file can not be read');
    const res = await this.core.links.open(link, { headers: start > 0 ? { range: `bytes=${start}-` } : {} });
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300 || (start > 0 && status !== 206)) {
      res.resume();
      throw new Upstream(status < 200 || status >= 300 ? `reading the file failed: HTTP ${status}` : 'the storage can not read from an offset');
    }
    return { stream: res, size: obj.size, obj };
  }

  /**
   * The `algo` digest (md5, sha1, sha256) of a readable file whose storage keeps it on this
   * machine's disk (Local), read now; undefined for other storages, whose files are not
   * downloaded to be hashed.
   */
  async localDigest(p: string, algo: string, signal?: AbortSignal): Promise<string | undefined> {
    const obj = await this.stat(p);
    if (obj.isDir) throw new BadRequest('is a folder');
    const { link } = await this.core.fs.link(p, {});
    return link.file?.path ? digestFile(link.file.path, algo, signal) : undefined;
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
    const sent = this.rec.transfer(p, inner);
    try {
      this.requireArchiveRead(p);
      const found = await this.core.archives.entry(p, inner, password, signal);
      return { ...found, stream: countBytes(found.stream, sent) };
    } catch (err) {
      sent(0, err);
      throw err;
    }
  }

  /**
   * Extracts archives of `srcDir` into `dstDir` as tasks: the decompress bit, each archive
   * readable, and the target folder creatable as for any upload.
   */
  async decompress(srcDir: string, names: string[], dstDir: string, opts: { password: string; inner: string; putIntoNewDir: boolean; overwrite: boolean }): Promise<Task[]> {
    return this.rec.runEach('extract', names.map((n) => [join(srcDir, n), dstDir]), async () => {
      if (!can(this.user, PERM.DECOMPRESS)) throw new Forbidden(MSG_DENIED);
      for (const n of names) checkName(n);
      for (const n of names) this.requireRead(join(srcDir, n));
      if (!this.rules.canWrite(dstDir)) throw new Forbidden(MSG_DENIED);
      this.requireChange(0, dstDir);
      this.recountLater(dstDir);
      const tasks: Task[] = [];
      for (const n of names) {
        // A storage that extracts on its side (an OpenList peer) leaves no task here.
        const task = await this.core.archives.decompress(join(srcDir, n), dstDir, opts, this.taskCreator);
        if (task) tasks.push(task);
      }
      return tasks;
    });
  }

  // ---- changes ----

  /**
   * Refuses a change to a path a WebDAV lock covers (or, `deep`, a lock below it), on every front
   * but WebDAV, which submits the lock's token itself: `file is locked` until the lock expires or
   * is released (fs/locks.ts; no query on one process, one in cluster mode).
   */
  private async requireUnlocked(...targets: Array<[string, boolean]>): Promise<void> {
    if (this.checksLocks) return;
    const locks = await this.core.locks.current();
    if (locks.isEmpty()) return;
    for (const [p, deep] of targets) {
      if (locks.blocking(p, new Set(), deep).length > 0) throw new Forbidden(MSG_LOCKED);
    }
  }

  async mkdir(p: string): Promise<void> {
    await this.rec.run('mkdir', p, async () => {
      this.requireCreate(p);
      await this.requireUnlocked([p, false]);
      await this.core.writer.mkdir(p);
    });
  }

  /** Checks an upload to `p` before its body is read; returns the file's name. */
  checkPut(p: string): string {
    this.requireCreate(p);
    const name = path.posix.basename(p);
    if (this.core.settings.getBool('ignore_system_files') && isSystemFile(name)) throw new SystemFile();
    return name;
  }

  /** Would a put at `p` be allowed now (WOPI's UserCanWrite): as `checkPut`, without throwing. */
  mayPut(p: string): boolean {
    try {
      this.checkPut(p);
      return true;
    } catch {
      return false;
    }
  }

  /** Would renaming `p` be allowed now (WOPI's UserCanRename): the rename bit, and `p` changeable. */
  mayRename(p: string): boolean {
    if (this.isTop(p)) return false;
    try {
      this.requireChange(PERM.RENAME, p);
      return true;
    } catch {
      return false;
    }
  }

  /** Stores a stream at `p`; its `upload` event carries the declared size, or the bytes counted when none was declared. */
  /** `known`: what the caller's listing found at `p` (FsWriter's PutOptions.known: a sync run). */
  async put(p: string, up: UploadStream, overwrite: boolean, known?: 'file' | 'none'): Promise<void> {
    const meter = this.meter();
    const release = meter?.begin();
    try {
      await this.putNow(p, meter ? { ...up, stream: meter.paced(up.stream, 'up') as Readable } : up, overwrite, known);
    } finally {
      release?.();
    }
  }

  private async putNow(p: string, up: UploadStream, overwrite: boolean, known?: 'file' | 'none'): Promise<void> {
    let counted = 0;
    const body = up.size >= 0 ? up : { ...up, stream: countBytes(up.stream, (n) => (counted = n)) };
    await this.rec.run('upload', p, async () => {
      this.checkPut(p);
      await this.requireUnlocked([p, false]);
      const owner = this.quotaOwner(p);
      if (!owner) return this.core.writer.put(p, body, { overwrite, creator: this.user, known });
      const existing = await this.core.fs.get(p).then((g) => g.obj, () => undefined);
      await this.core.quotas.write(owner, up.size, existing, (limit) =>
        this.core.writer.put(p, { ...body, stream: limit(body.stream) as unknown as Readable }, { overwrite, creator: this.user, known }));
    }, () => ({ bytes: up.size >= 0 ? up.size : counted }));
  }

  // ---- quotas (view/quota.ts) ----

  /** The quota a write at `p` falls under for this principal, when there is one. */
  quotaOwner(p: string): QuotaOwner | undefined {
    return this.core.quotas.ownerAt(this.user, this.tree, p);
  }

  /** Refuses at once a file of `size` bytes at `p` that its quota has no room for (tus and multipart at init). */
  async requireRoom(p: string, size: number): Promise<void> {
    const owner = this.quotaOwner(p);
    if (!owner) return;
    const existing = await this.core.fs.get(p).then((g) => g.obj, () => undefined);
    await this.core.quotas.require(owner, Math.max(0, size), existing ? 0 : 1, existing && !existing.isDir ? existing.size : 0);
  }

  /** The quota and usage of the owner holding `p` (WebDAV's RFC 4331 properties), when it has a byte quota. */
  async quotaAt(p: string): Promise<{ quota: number; used: number } | undefined> {
    const owner = this.quotaOwner(p);
    if (!owner || owner.quotaBytes === 0) return undefined;
    return { quota: owner.quotaBytes, used: (await this.core.quotas.usage(owner)).bytes };
  }

  /** Runs a change that takes `src` out of its owner's area and (with `dst`) into another's, counting both. */
  private async carried<T>(src: string, dst: string | undefined, copy: boolean, run: () => Promise<T>): Promise<T> {
    const from = copy ? undefined : this.quotaOwner(src);
    const to = dst === undefined ? undefined : this.quotaOwner(dst);
    const same = from && to && from.kind === to.kind && from.id === to.id;
    if (same || (!from && !to)) return run();
    const obj = await this.core.fs.get(src).then((g) => g.obj, () => undefined);
    if (to && obj && !obj.isDir) await this.core.quotas.require(to, obj.size, 1);
    const value = await run();
    if (obj && from) await this.core.quotas.removed(from, obj);
    if (obj && to) await this.core.quotas.added(to, obj);
    return value;
  }

  /** Stores a finished local file at `p` (a resumable upload), taken over where the storage can. */
  async putFile(p: string, file: Parameters<FsWriter['putFile']>[1], overwrite: boolean): Promise<void> {
    await this.rec.run('upload', p, async () => {
      this.checkPut(p);
      await this.requireUnlocked([p, false]);
      const owner = this.quotaOwner(p);
      if (!owner) return this.core.writer.putFile(p, file, { overwrite, creator: this.user });
      const existing = await this.core.fs.get(p).then((g) => g.obj, () => undefined);
      await this.core.quotas.write(owner, file.size, existing, () => this.core.writer.putFile(p, file, { overwrite, creator: this.user }));
    }, { bytes: file.size });
  }

  /** The storage's multipart upload for a file at `p` (S3), when it has one. */
  multipartTarget(p: string): MultipartTarget | undefined {
    this.checkPut(p);
    return this.core.writer.multipartTarget(p);
  }

  /**
   * The direct upload tools offered in folder `p` (fs/list's direct_upload_tools): the storage's,
   * to a principal who may create files there; none otherwise.
   */
  directUploadTools(p: string): string[] {
    if (!this.rules.canWrite(p) || (this.changeBit && !can(this.user, this.changeBit))) return [];
    return this.core.writer.directUploadTools(p);
  }

  /**
   * Where the principal's client sends the file `p` straight to the storage with `tool`
   * (OpenList's get_direct_upload_info), decided as a put; undefined when the storage offers no
   * such upload. The answer is a capability valid until it expires, so it is recorded when issued
   * (`direct_upload`, the declared size): the bytes never pass through this server.
   */
  async directUpload(p: string, args: { tool: string; size: number; overwrite: boolean }): Promise<HttpDirectUpload | undefined> {
    this.requireCreate(p);
    if (!this.directUploadTools(parentOf(p)).includes(args.tool)) return undefined;
    return this.rec.run('direct_upload', p, async () => {
      this.checkPut(p);
      await this.requireUnlocked([p, false]);
      return this.core.writer.directUploadInfo(p, args);
    }, { bytes: Math.max(0, args.size) });
  }

  async beginMultipart(p: string, mimetype?: string): Promise<string> {
    this.checkPut(p);
    return this.core.writer.beginMultipart(p, mimetype);
  }

  /** Makes the file of a multipart upload appear at `p`, decided as a put. */
  async finishMultipart(p: string, uploadId: string, parts: Array<{ n: number; etag: string }>, overwrite: boolean): Promise<void> {
    await this.rec.run('upload', p, async () => {
      this.checkPut(p);
      await this.requireUnlocked([p, false]);
      const owner = this.quotaOwner(p);
      const before = owner && (await this.core.fs.get(p).then((g) => g.obj, () => undefined));
      await this.core.writer.finishMultipart(p, uploadId, parts, { overwrite, creator: this.user });
      // The storage assembled the parts (its own multipart upload, begun after the size was checked at init): counted now.
      if (owner) await this.core.quotas.stored(owner, await this.core.fs.get(p).then((g) => g.obj, () => undefined), before);
    });
  }

  async putAsTask(p: string, spooled: Omit<SpooledUpload, 'target' | 'overwrite'>, overwrite: boolean): Promise<Task> {
    return this.rec.run('upload', p, async () => {
      this.checkPut(p);
      await this.requireUnlocked([p, false]);
      return this.core.writer.putAsTask(p, spooled, { overwrite, creator: this.taskCreator });
    });
  }

  /** May the principal store a file at `p` (SFTP/FTP open for writing): returns what is there. */
  async checkUpload(p: string, overwrite: boolean): Promise<Obj | undefined> {
    this.checkPut(p);
    await this.requireUnlocked([p, false]);
    await this.folder(parentOf(p));
    const existing = await this.find(p);
    if (existing?.isDir) throw new BadRequest('is a folder');
    if (existing && !overwrite) throw new Exists('file exists');
    return existing;
  }

  /**
   * A client's upload body that is not a put (a chunk, a tus PATCH, an FTP or SFTP partial):
   * holds a transfer of the account's max_transfers while `run` stores it, paced by its upload
   * rate. Refused (TooManyRequests) before a byte is read when the account runs its maximum.
   */
  async receive<T>(body: Readable, run: (paced: Readable) => Promise<T>): Promise<T> {
    const meter = this.meter();
    const release = meter?.begin();
    try {
      return await run(meter ? (meter.paced(body, 'up') as Readable) : body);
    } finally {
      release?.();
    }
  }

  /** Holds one of the account's max_transfers for an upload written piece by piece (an SFTP handle); the answer releases it, once. */
  holdTransfer(): () => void {
    return this.meter()?.begin() ?? (() => undefined);
  }

  /** `body` paced by the account's upload rate (an upload whose transfer is held by holdTransfer). */
  pacedUpload(body: Readable): Readable {
    const meter = this.meter();
    return meter ? (meter.paced(body, 'up') as Readable) : body;
  }

  /** How long an upload's `n` bytes wait for the account's upload rate (SFTP answers each write after it). */
  uploadDelay(n: number): number {
    return this.meter()?.delayFor(n, 'up') ?? 0;
  }

  /** Stores a stream of unknown size at `p` (SFTP and FTP uploads, after checkUpload). */
  async upload(p: string, stream: Readable, overwrite = true): Promise<void> {
    await this.put(p, { name: path.posix.basename(p), size: -1, stream }, overwrite);
  }

  /** Creates one folder in an existing folder; a name already there is refused (SFTP, FTP). */
  async makeFolder(p: string): Promise<void> {
    await this.rec.run('mkdir', p, async () => {
      this.requireCreate(p);
      await this.folder(parentOf(p));
      if (await this.find(p)) throw new Exists('file exists');
      await this.requireUnlocked([p, false]);
      await this.core.writer.mkdir(p);
    });
  }

  /**
   * Renames or moves `from` to `to` as a file system would (SFTP, FTP): the target's folder must
   * exist, and an existing file there is replaced only with `overwrite` (a folder never).
   */
  async renamePath(from: string, to: string, overwrite: boolean): Promise<void> {
    await this.rec.run(moveOp(from, to), from, async () => {
      await this.folder(parentOf(to));
      const existing = await this.find(to);
      if (existing && (!overwrite || existing.isDir)) throw new Exists('file exists');
      await this.moveToNow(from, to, overwrite);
    }, { dst: to });
  }

  async setModified(p: string, modified: Date): Promise<void> {
    this.requireCreate(p);
    await this.stat(p);
    await this.requireUnlocked([p, false]);
    await this.core.writer.setModified(p, modified);
  }

  async rename(p: string, name: string, overwrite = false): Promise<void> {
    await this.rec.run('rename', p, async () => {
      checkName(name);
      if (this.isTop(p)) throw new Forbidden('the root folder can not be renamed');
      this.requireChange(PERM.RENAME, p, join(parentOf(p), name));
      const obj = await this.core.fs.get(p).then((r) => r.obj, () => undefined);
      if (obj) await this.requireCarryable(p, obj);
      await this.requireUnlocked([p, true], [join(parentOf(p), name), true]);
      await this.core.writer.rename(p, name, overwrite);
    }, { dst: join(parentOf(p), name) });
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

  /** `conflict`: `overwrite` as a boolean, or OpenList's dialog choices (skip existing names). */
  async move(srcDir: string, dstDir: string, allNames: string[], conflict: boolean | BatchConflict = false): Promise<Task[]> {
    const { overwrite = false, skipExisting = false } = typeof conflict === 'boolean' ? { overwrite: conflict } : conflict;
    const names = skipExisting && !overwrite ? await absentAt(this, dstDir, allNames) : allNames;
    if (names.length === 0 && allNames.length > 0) return []; // every name was skipped
    return this.rec.runEach('move', pairsOf(srcDir, dstDir, names), async () => {
      await this.checkBatch(PERM.MOVE, srcDir, dstDir, names);
      await this.requireUnlocked(...names.flatMap((n): Array<[string, boolean]> => [[join(srcDir, n), true], [join(dstDir, n), true]]));
      return this.counted(srcDir, dstDir, names, () => this.core.writer.move(srcDir, dstDir, names, { overwrite, creator: this.taskCreator }));
    });
  }

  /** `conflict`: `overwrite` as a boolean, or OpenList's dialog choices (skip existing names, merge folders). */
  async copy(srcDir: string, dstDir: string, allNames: string[], conflict: boolean | BatchConflict = false): Promise<Task[]> {
    const { overwrite = false, skipExisting = false, merge = false } = typeof conflict === 'boolean' ? { overwrite: conflict } : conflict;
    const names = skipExisting && !overwrite && !merge ? await absentAt(this, dstDir, allNames) : allNames;
    if (names.length === 0 && allNames.length > 0) return []; // every name was skipped
    return this.rec.runEach('copy', pairsOf(srcDir, dstDir, names), async () => {
      await this.checkBatch(PERM.COPY, srcDir, dstDir, names);
      await this.requireUnlocked(...names.map((n): [string, boolean] => [join(dstDir, n), true]));
      return this.counted(undefined, dstDir, names, () => this.core.writer.copy(srcDir, dstDir, names, { overwrite, merge, creator: this.taskCreator }));
    });
  }

  /**
   * A batch move (`srcDir` set) or copy of `names` into `dstDir`, with the quota owners' usage
   * following it: done at once, what the names hold at the destination before and after (and, for
   * a move, at the source) changes each owner by the difference, a cost that follows the batch's
   * size; done by tasks (another storage) or past the walk's bound, the owners are counted again
   * shortly and by the background scans. A move within one owner's area changes nothing.
   */
  private async counted(srcDir: string | undefined, dstDir: string, names: string[], run: () => Promise<Task[]>): Promise<Task[]> {
    const from = srcDir === undefined ? undefined : this.quotaOwner(srcDir);
    const to = this.quotaOwner(dstDir);
    const same = from !== undefined && to !== undefined && from.kind === to.kind && from.id === to.id;
    if (same || (!from && !to)) return run();
    const at = (dir: string) => names.map((n) => join(dir, n));
    const quotas = this.core.quotas;
    const [srcBefore, dstBefore] = await Promise.all([from ? quotas.measure(at(srcDir!)) : undefined, to ? quotas.measure(at(dstDir)) : undefined]);
    const tasks = await run();
    if (tasks.length > 0 || srcBefore?.complete === false || dstBefore?.complete === false) {
      this.recountLater(...(srcDir === undefined ? [dstDir] : [srcDir, dstDir]));
      return tasks;
    }
    if (from && srcBefore) {
      const left = await quotas.measure(at(srcDir!));
      await quotas.adjust(from, left.bytes - srcBefore.bytes, left.files - srcBefore.files);
    }
    if (to && dstBefore) {
      const after = await quotas.measure(at(dstDir));
      if (!after.complete) this.recountLater(dstDir);
      else await quotas.adjust(to, after.bytes - dstBefore.bytes, after.files - dstBefore.files);
    }
    return tasks;
  }

  /**
   * Folders moved or copied by tasks, archives extracted (folder by folder): their quota owners
   * are counted again shortly and by the background scans, not file by file.
   */
  private recountLater(...dirs: string[]): void {
    for (const d of dirs) {
      const o = this.quotaOwner(d);
      if (o) this.core.quotas.rescanSoon(o);
    }
  }

  /** Moves every file below `srcDir` into `dstDir` (folders are not kept). */
  async recursiveMove(srcDir: string, dstDir: string, policy: ConflictPolicy = 'cancel'): Promise<{ moved: number; tasks: Task[] }> {
    return this.rec.run('move', srcDir, async () => {
      this.requireChange(PERM.MOVE, srcDir, dstDir);
      await this.requireCarryable(srcDir, { name: '', size: 0, isDir: true, modified: new Date(0) });
      this.recountLater(srcDir, dstDir);
      return this.core.writer.recursiveMove(srcDir, dstDir, this.taskCreator, policy);
    }, { dst: dstDir });
  }

  async remove(dir: string, names: string[], opts: { permanent?: boolean } = {}): Promise<void> {
    await this.rec.runEach('remove', names.map((n) => [join(dir, n), undefined]), async () => {
      for (const n of names) checkName(n);
      this.requireChange(PERM.REMOVE, dir, ...names.map((n) => join(dir, n)));
      // Past the trash: an admin's choice only.
      if (opts.permanent && !isAdmin(this.user)) throw new Forbidden('only an admin may delete past the trash');
      await this.requireUnlocked(...names.map((n): [string, boolean] => [join(dir, n), true]));
      if (!this.quotaOwner(dir)) return this.core.writer.remove(dir, names, { permanent: opts.permanent, by: this.deleter });
      for (const n of names) await this.carried(join(dir, n), undefined, false, () => this.core.writer.remove(dir, [n], { permanent: opts.permanent, by: this.deleter }));
    });
  }

  /** Who the trash records as having deleted what this principal deletes. */
  private get deleter(): Deleter {
    return { userId: this.user.id, username: this.user.username, front: this.front };
  }

  // ---- the trash (fs/trash.ts): a user sees, restores and purges what they deleted; an admin everything ----

  /** The trash of the storage holding `p`: its entries this principal may see, newest first. */
  async trashList(p: string, page: number, perPage: number): Promise<{ entries: TrashEntry[]; total: number }> {
    this.requireRead(p);
    await this.core.fs.storages.ready(p);
    const storage = this.core.fs.resolveStorage(p).storage;
    return this.core.trash.list(storage, isAdmin(this.user) ? undefined : this.user.id, page, perPage);
  }

  /** Entries by id that this principal may act on (their own; an admin's any); others answer as missing. */
  private async ownEntries(ids: string[]): Promise<TrashEntry[]> {
    const found = await this.core.trash.entries(ids);
    const mine = found.filter((e) => isAdmin(this.user) || e.userId === this.user.id);
    if (mine.length !== new Set(ids).size) throw new NotFound('trash entry not found');
    return mine;
  }

  /**
   * Puts entries back: into their original folder, or `dstDir`, on their own storage; decided as a
   * create of the name there (bits, rules, locks). A name already there follows `policy`. The
   * number restored.
   */
  async trashRestore(ids: string[], dstDir: string | undefined, policy: RestorePolicy): Promise<number> {
    let restored = 0;
    for (const e of await this.ownEntries(ids)) {
      const dir = dstDir ?? parentOf(e.path);
      // Its old folder may lie outside this principal's tree now (the base path moved).
      if (!this.contains(dir)) throw new Forbidden('the folder it was deleted from is outside your files: give dst_dir');
      const target = join(dir, e.name);
      await this.rec.run('move', target, async () => {
        this.requireCreate(target);
        await this.requireUnlocked([target, true]);
        await this.core.fs.storages.ready(dir);
        const r = this.core.fs.resolveStorage(dir);
        if (r.storage.row.id !== e.storageId) throw new BadRequest('an entry is restored into a folder of its own storage');
        if (await this.core.trash.restore(e, r.actualPath, policy, this.deleter, dir)) restored++;
        this.recountLater(dir);
        this.core.fs.invalidate(dir);
      });
    }
    return restored;
  }

  /** Deletes entries for good. */
  async trashPurge(ids: string[]): Promise<void> {
    for (const e of await this.ownEntries(ids)) await this.core.trash.purge(e);
  }

  /** Deletes an entry by path (WebDAV DELETE, SFTP/FTP remove): `folder` says which kind it must be. */
  async removePath(p: string, kind?: 'file' | 'folder' | 'empty-folder'): Promise<void> {
    await this.rec.run('remove', p, async () => {
      if (this.isTop(p)) throw new Forbidden('the root folder can not be removed');
      this.requireChange(PERM.REMOVE, p);
      const obj = await this.stat(p);
      if (kind !== 'file' && kind !== undefined && !obj.isDir) throw new BadRequest('not a folder');
      if (kind === 'file' && obj.isDir) throw new BadRequest('is a folder');
      if (kind === 'empty-folder' && (await this.core.fs.list(p, { refresh: true })).objs.length > 0) throw new NotEmpty();
      await this.requireUnlocked([p, true]);
      await this.carried(p, undefined, false, () => this.core.writer.remove(parentOf(p), [path.posix.basename(p)], { by: this.deleter }));
    });
  }

  /** Deletes the empty folders below `dir`; hidden and protected ones are left alone (one `remove` event, on `dir`). */
  async removeEmptyDirs(dir: string): Promise<number> {
    return this.rec.run('remove', dir, () => {
      this.requireChange(PERM.REMOVE, dir);
      return this.core.writer.removeEmptyDirs(dir, (p) => !this.mayRead(p));
    });
  }

  /**
   * Moves or renames one object to a full path (WebDAV MOVE, SFTP/FTP rename): the rename bit in
   * the same folder, the move bit across folders; an existing target is replaced only with `overwrite`.
   */
  async moveTo(src: string, dst: string, overwrite: boolean): Promise<void> {
    await this.rec.run(moveOp(src, dst), src, () => this.moveToNow(src, dst, overwrite), { dst });
  }

  private async moveToNow(src: string, dst: string, overwrite: boolean): Promise<void> {
    if (this.isTop(src)) throw new Forbidden('the root folder can not be renamed');
    checkName(path.posix.basename(dst));
    this.requireChange(parentOf(src) === parentOf(dst) ? PERM.RENAME : PERM.MOVE, src, dst);
    const obj = await this.stat(src);
    await this.requireCarryable(src, obj);
    await this.requireUnlocked([src, true], [dst, true]);
    await this.carried(src, dst, false, () => this.core.writer.moveTo(src, dst, overwrite));
  }

  /** Copies one object to a full path (WebDAV COPY; `shallow`: a folder without its contents). */
  async copyTo(src: string, dst: string, overwrite: boolean, shallow = false): Promise<void> {
    await this.rec.run('copy', src, () => this.copyToNow(src, dst, overwrite, shallow), { dst });
  }

  private async copyToNow(src: string, dst: string, overwrite: boolean, shallow: boolean): Promise<void> {
    checkName(path.posix.basename(dst));
    this.requireChange(PERM.COPY, src, dst);
    const obj = await this.stat(src);
    if (!shallow) await this.requireCarryable(src, obj);
    await this.requireUnlocked([dst, true]);
    const across = this.core.fs.resolveStorage(src).storage !== this.core.fs.resolveStorage(parentOf(dst)).storage;
    if (!shallow && obj.isDir && across && path.posix.basename(dst) === obj.name) {
      // A folder across storages is copied by a task, as the original does.
      if (overwrite && (await this.find(dst))) await this.core.writer.remove(parentOf(dst), [obj.name]);
      await this.core.writer.copy(parentOf(src), parentOf(dst), [obj.name], { overwrite: true, creator: this.taskCreator });
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

  /**
   * Starts offline downloads of `urls` into `dir` (`start` hands them to the tool): the target
   * decided as `requireOfflineTarget`, one `offline_download` event per URL (its `dst_path`).
   */
  async offlineDownload<T>(dir: string, urls: string[], start: (creator: TaskCreator) => Promise<T>): Promise<T> {
    return this.rec.runEach('offline_download', urls.map((u) => [dir, u]), async () => {
      this.requireOfflineTarget(dir);
      return start(this.taskCreator);
    });
  }
}

/** A move in one folder is a rename. */
const moveOp = (src: string, dst: string) => (parentOf(src) === parentOf(dst) ? 'rename' : 'move');
const pairsOf = (srcDir: string, dstDir: string, names: string[]): Array<[string, string]> => names.map((n) => [join(srcDir, n), join(dstDir, n)]);

/** May a user use SFTP and FTP: enabled, and holding the FTP/SFTP read bit (1024). */
export const mayConnect = (u: User | undefined): u is User => u !== undefined && !u.disabled && can(u, PERM.FTP_READ);

/** Makes views; the one door from a front to `fs/` for a principal's requests. */
export class Views {
  constructor(private readonly core: ViewDeps) {}

  for(user: User, opts: ViewOptions): View {
    return new View(this.core, user, opts);
  }

  /**
   * A view that follows the account (long-lived fronts: SFTP/FTP sessions, tasks, resumable
   * uploads): see LiveView. `pwdTs` ends it on a password change; `admit` is the front's own test.
   */
  live(user: Pick<User, 'id' | 'pwdTs'>, opts: ViewOptions, live: { pwdTs?: boolean; admit?: (u: User) => string | undefined } = {}): LiveView<View> {
    return new LiveView(this.core.repos.users, (u) => new View(this.core, u, opts), user.id, live.pwdTs ? user.pwdTs : undefined, live.admit);
  }
}
