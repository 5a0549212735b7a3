import path from 'node:path';
import type { ViewDeps } from './deps.js';
import type { Share } from '../db/shares.js';
import type { User } from '../db/users.js';
import type { Link, LinkArgs, Obj } from '../drivers/types.js';
import { can, PERM } from '../auth/permissions.js';
import type { ArchiveMeta, InnerFolder } from '../archive/service.js';
import { AppError, BadRequest, type ErrorKind, Forbidden, isKind, KindError, Missing } from '../errors.js';
import { WrongArchivePassword } from '../archive/reader.js';
import type { Mounted } from '../fs/storages.js';
import { isSubPath } from '../util/paths.js';
import { underRoot, type PathStyle } from './paths.js';
import type { View } from './view.js';
import type { TransferDone } from '../audit/record.js';

/** The front of share visitors; ShareView exposes reads only, so no change is ever asked of the view. */
export const SHARE_FRONT = { changeBit: 0, paths: 'strict' as PathStyle };

const MSG_READ_FAILED = 'failed to read the shared object';

/** A read of a shared object that failed, without its text (which may name paths); OpenList answers it 500 (server/api-codes.ts). */
export class ShareReadFailed extends KindError {
  constructor(kind: ErrorKind) {
    super(kind, MSG_READ_FAILED);
  }
}
export const MSG_NO_ARCHIVE_PREVIEW = 'sharing archives previewing is not allowed';
/** A protected folder inside a share, without its password: the API's own words for a folder password. */
const MSG_FOLDER_PASSWORD = 'password is incorrect or you have no permission';
/** The archive answer for a missing or wrong archive password (code 202): it names no path. */
/** Entries of a listing whose real place is checked at once. */
const CANONICAL_BATCH = 64;

/**
 * The principal of a share link: the creator's view (their base path, hide and password rules
 * as they stand now, no folder password given) narrowed to the shared paths, read-only. Visitor
 * paths are relative to the share: `/` is the one shared folder (or, with several shared
 * objects or one file, a folder holding them by name), `/<name>/…` goes below a shared object.
 * Nothing else can be named, and errors never carry a virtual path of the creator's.
 *
 * The principal is the creator without the two bits that lift path rules (see hidden, access
 * without password): visitors never see what a hide rule covers, and open a protected folder
 * only with its password (`passwords`), whoever created the share.
 */
export class ShareView {
  /** The shared paths still inside the creator's base path, by their names. */
  private readonly roots = new Map<string, string>();
  private wrongCounted = false;

  constructor(
    readonly share: Share,
    readonly creator: User,
    private readonly view: View,
    private readonly core: ViewDeps,
    /** Called when a folder password the visitor gave was refused (the caller counts it as a failed login). */
    private readonly onWrongPassword: () => void | Promise<void> = () => {},
    /** Whether the visitor gave a folder password of their own (not only the share code). */
    private readonly gavePassword = false,
  ) {
    for (const f of share.files) {
      if (view.contains(f)) this.roots.set(path.posix.basename(f) || '/', f);
    }
  }

  get empty(): boolean {
    return this.roots.size === 0;
  }

  /** The creator's view the visitor reads through (read-only: the visitor principal, no folder password unless given). */
  get readerView(): View {
    return this.view;
  }

  /**
   * A shared file for a reader that comes back without the visitor's request (an online office's
   * callbacks): the creator's path of visitor path `rel`, checked as every read is.
   */
  async fileAt(rel: string): Promise<{ target: string; obj: Obj }> {
    const r = await this.locate(this.clean(rel));
    if (r === undefined) throw new BadRequest('the sharing root is not a file');
    const { target } = r;
    const obj = await this.guard(() => this.view.stat(target));
    if (obj.isDir) throw new BadRequest('a folder can not be opened in an online office');
    return { target, obj };
  }

  /** The single shared folder the share's root stands for, if the share is one folder. */
  private async singleFolder(): Promise<string | undefined> {
    if (this.roots.size !== 1) return undefined;
    const only = [...this.roots.values()][0]!;
    const obj = await this.guard(() => this.view.stat(only));
    return obj.isDir ? only : undefined;
  }

  /** A visitor path cleaned (strict: `..` refused; navigate: resolved, never above the share). */
  clean(visitorPath: string, style: PathStyle = 'strict'): string {
    return underRoot('/', visitorPath, style);
  }

  /**
   * The creator's virtual path for a cleaned visitor path and the shared path it lies in, or
   * undefined for the root listing of several shared objects.
   */
  private async resolve(rel: string): Promise<{ target: string; root: string } | undefined> {
    const folder = await this.singleFolder();
    if (folder !== undefined) return { target: rel === '/' ? folder : `${folder === '/' ? '' : folder}${rel}`, root: folder };
    if (rel === '/') {
      if (this.roots.size !== 1) return undefined;
      const only = [...this.roots.values()][0]!;
      return { target: only, root: only };
    }
    const cut = rel.indexOf('/', 1);
    const first = cut === -1 ? rel.slice(1) : rel.slice(1, cut);
    const root = this.roots.get(first);
    if (root === undefined) throw new Missing();
    return { target: cut === -1 ? root : `${root === '/' ? '' : root}${rel.slice(cut)}`, root };
  }

  /** A path inside a shared folder that a symlink takes elsewhere does not exist for visitors. */
  private async requireInside(target: string, root: string): Promise<void> {
    const [real, realRoot] = await Promise.all([this.guard(() => this.view.canonical(target)), this.guard(() => this.view.canonical(root))]);
    if (!isSubPath(realRoot, real)) throw new Missing();
  }

  /** Resolves and checks a visitor path in one go. */
  private async locate(rel: string): Promise<{ target: string; root: string } | undefined> {
    const r = await this.resolve(rel);
    if (r) await this.requireInside(r.target, r.root);
    return r;
  }

  /** Runs a read of the creator's view, answering its failures without their text (which may name paths). */
  private async guard<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof WrongArchivePassword) throw err;
      if (isKind(err, 'PasswordRequired')) {
        // One refused password is one failure, however many reads of the request it stopped.
        if (this.gavePassword && !this.wrongCounted) {
          this.wrongCounted = true;
          await this.onWrongPassword();
        }
        throw new KindError('PasswordRequired', MSG_FOLDER_PASSWORD);
      }
      if (isKind(err, 'NotFound', 'Hidden', 'Forbidden')) throw new Missing();
      if (err instanceof AppError && (err.kind === 'BadRequest' || err.kind === 'PathTooLong' || err.kind === 'TooLarge')) throw err;
      this.core.log.warn({ err, share: this.share.id }, 'reading a shared object failed');
      throw new ShareReadFailed(err instanceof AppError ? err.kind : 'Upstream');
    }
  }

  /** The shared objects themselves, as the share's root lists them. */
  private async rootEntries(): Promise<Obj[]> {
    const out: Obj[] = [];
    for (const [name, p] of this.roots) {
      // A shared folder behind a password is listed (its name is the share's); opening it asks the password.
      const obj = await this.view.find(p).catch((err: unknown) =>
        isKind(err, 'PasswordRequired') && !this.view.rules.isHidden(p) ? this.core.fs.get(p).then((r) => r.obj, () => undefined) : undefined,
      );
      if (obj) out.push({ ...obj, name });
    }
    return out;
  }

  async list(rel: string, refresh = false): Promise<{ objs: Obj[]; storage?: Mounted }> {
    const r = await this.locate(rel);
    if (r === undefined) return { objs: await this.rootEntries() };
    const { target, root } = r;
    const obj = await this.guard(() => this.view.stat(target));
    if (!obj.isDir) return { objs: rel === '/' ? [obj] : [] };
    // A refresh is a change of the cache the creator could make; visitors only read.
    const listed = await this.guard(() => this.view.list(target, { refresh: refresh && this.view.rules.canWrite(target) }));
    // Only a link can lead elsewhere (the folder itself was checked): those are checked one by one.
    const links = listed.objs.filter((o) => o.symlink);
    if (links.length === 0) return { objs: listed.objs, storage: listed.storage };
    const realRoot = await this.guard(() => this.view.canonical(root));
    const outside = new Set<Obj>();
    for (let i = 0; i < links.length; i += CANONICAL_BATCH) {
      const batch = links.slice(i, i + CANONICAL_BATCH);
      const inside = await Promise.all(
        batch.map((o) => this.core.fs.canonical(`${target === '/' ? '' : target}/${o.name}`).then((real) => isSubPath(realRoot, real), () => false)),
      );
      batch.forEach((o, j) => inside[j] || outside.add(o));
    }
    const objs = listed.objs.filter((o) => !outside.has(o));
    return { objs, storage: listed.storage };
  }

  async get(rel: string): Promise<{ obj: Obj; storage?: Mounted }> {
    const r = await this.locate(rel);
    if (r === undefined) {
      return { obj: { name: this.share.id, size: 0, isDir: true, modified: new Date(this.share.createdAt) } };
    }
    const got = await this.guard(() => this.view.get(r.target));
    return rel === '/' ? got : { ...got, obj: { ...got.obj, name: path.posix.basename(rel) } };
  }

  /** A file's link and its storage, for `/sd`; a folder or the share's root is refused. */
  async link(rel: string, args: LinkArgs): Promise<{ link: Link; obj: Obj; storage: Mounted; virtualPath: string }> {
    const r = await this.locate(rel);
    if (r === undefined) throw new BadRequest('cannot get sharing root link');
    const { target } = r;
    const obj = await this.guard(() => this.view.stat(target));
    if (obj.isDir) throw new BadRequest('cannot download a folder');
    const got = await this.guard(() => this.view.link(target, args));
    return { ...got, virtualPath: target };
  }

  /** As `link`, for a transfer (`/sd`): `sent` is the view's transfer-done (one `download` event, front `share`). */
  async download(rel: string, args: LinkArgs): Promise<{ link: Link; obj: Obj; storage: Mounted; virtualPath: string; sent: TransferDone }> {
    const r = await this.locate(rel);
    if (r === undefined) throw new BadRequest('cannot get sharing root link');
    const { target } = r;
    const obj = await this.guard(() => this.view.stat(target));
    if (obj.isDir) throw new BadRequest('cannot download a folder');
    const got = await this.guard(() => this.view.download(target, args));
    return { ...got, virtualPath: target };
  }

  /** Where the entries of the visitor's folder `rel` are in the creator's tree, by name (for the thumbnail service's keys). */
  async placesIn(rel: string): Promise<(name: string) => string | undefined> {
    const r = await this.resolve(rel);
    if (r === undefined) return (name) => this.roots.get(name);
    return (name) => (r.target === '/' ? `/${name}` : `${r.target}/${name}`);
  }

  /**
   * The thumbnail of a shared file (`/sd?type=thumb`): decided by the creator's view like any read
   * (a hidden file, or one in a protected folder without its password, is refused), then made or
   * taken from the cache by the thumbnail service.
   */
  async thumb(rel: string, size?: string): Promise<{ link: Link; obj: Obj; storage: Mounted; virtualPath: string }> {
    const r = await this.locate(rel);
    if (r === undefined) throw new BadRequest('cannot get sharing root link');
    const { target } = r;
    const obj = await this.guard(() => this.view.stat(target));
    if (obj.isDir) throw new BadRequest('cannot download a folder');
    const got = await this.guard(() => this.core.thumbs.get(target, size));
    return { ...got, virtualPath: target };
  }

  // ---- archives (share_archive_preview) ----

  /** An archive file of the share: the setting, the creator's read-archives bit, then the file's own rules. */
  private async archive(rel: string): Promise<string> {
    if (!this.core.settings.getBool('share_archive_preview')) throw new Forbidden(MSG_NO_ARCHIVE_PREVIEW);
    if (!can(this.view.user, PERM.READ_ARCHIVES)) throw new Forbidden('permission denied');
    const r = await this.locate(rel);
    if (r === undefined) throw new BadRequest('cannot read the sharing root as an archive');
    return r.target;
  }

  async archiveMeta(rel: string, opts: { password?: string; refresh?: boolean }): Promise<ArchiveMeta> {
    const target = await this.archive(rel);
    return this.guard(() => this.view.archiveMeta(target, opts));
  }

  async archiveList(rel: string, inner: string, opts: { password?: string; refresh?: boolean }): Promise<InnerFolder> {
    const target = await this.archive(rel);
    return this.guard(() => this.view.archiveList(target, inner, opts));
  }

  /** One entry's bytes (`/sad`). */
  async archiveEntry(rel: string, inner: string, password: string, signal?: AbortSignal) {
    const target = await this.archive(rel);
    return this.guard(() => this.view.archiveEntry(target, inner, password, signal));
  }
}
