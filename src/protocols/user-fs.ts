import path from 'node:path';
import { Readable } from 'node:stream';
import { MSG_DENIED } from '../auth/access.js';
import { can, PERM } from '../auth/permissions.js';
import type { Core } from '../core.js';
import type { User } from '../db/users.js';
import type { Obj } from '../drivers/types.js';
import { AppError, BadRequest, Forbidden, NotFound, ServerError } from '../errors.js';
import { cleanPath, joinBasePath } from '../util/paths.js';

/** A user may use SFTP and FTP when enabled and holding the FTP/SFTP read bit (1024). */
export const mayConnect = (u: User | undefined): u is User => u !== undefined && !u.disabled && can(u, PERM.FTP_READ);

/** A path that does not exist or is hidden from the user: the two answer alike. */
export class NoSuchPath extends NotFound {
  constructor() {
    super('no such file or folder');
  }
}

/** Whether an error means "no such file" to a protocol's status codes. */
export const isNotFound = (err: unknown): boolean => err instanceof NoSuchPath || (err instanceof AppError && /not found/i.test(err.message));

/**
 * The filesystem as one SFTP or FTP user sees it: client paths are below the user's base path,
 * reads need the FTP/SFTP read bit (checked at login), changes the FTP/SFTP write bit and the
 * same per-operation bits and path rules (hide, password, write) as the HTTP API, all decided
 * by `auth/access`; the work itself is done by `fs`.
 */
export class UserFs {
  readonly root: string;

  constructor(
    private readonly core: Core,
    readonly user: User,
    /** The path password a guest gave at login (FTP), tried on password rules. */
    private readonly password = '',
  ) {
    this.root = cleanPath(user.basePath);
  }

  /** A client path (absolute from the user's root, or relative to it) as a virtual path. */
  virtual(clientPath: string): string {
    return joinBasePath(this.root, cleanPath(clientPath));
  }

  /** A virtual path as the client sees it. */
  client(virtualPath: string): string {
    if (this.root === '/') return virtualPath;
    return virtualPath.slice(this.root.length) || '/';
  }

  /** The object at a path; hidden paths are not found, password-protected ones forbidden. */
  async stat(p: string): Promise<Obj> {
    if (this.core.access.isHidden(this.user, p)) throw new NoSuchPath();
    this.core.access.check(this.user, p, this.password);
    try {
      return (await this.core.fs.get(p)).obj;
    } catch (err) {
      if (isNotFound(err)) throw new NoSuchPath();
      throw err;
    }
  }

  /** The object at a path, or undefined when there is none (or it is hidden). */
  async find(p: string): Promise<Obj | undefined> {
    try {
      return await this.stat(p);
    } catch (err) {
      if (err instanceof NoSuchPath) return undefined;
      throw err;
    }
  }

  async folder(p: string): Promise<Obj> {
    const obj = await this.stat(p);
    if (!obj.isDir) throw new BadRequest('not a folder');
    return obj;
  }

  /** A folder's entries the user may see. */
  async list(p: string): Promise<Obj[]> {
    await this.folder(p);
    const { objs } = await this.core.fs.list(p);
    return this.core.access.visible(this.user, p, objs);
  }

  /** A file's bytes from `start` to the end. */
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
      throw new ServerError(status < 200 || status >= 300 ? `reading the file failed: HTTP ${status}` : 'the storage can not read from an offset');
    }
    return { stream: res, size: obj.size, obj };
  }

  private requireWriteBit(): void {
    if (!can(this.user, PERM.FTP_WRITE)) throw new Forbidden(MSG_DENIED);
  }

  /** May the user store a file at `p` (write bit or rule, visible target, existing parent folder)? */
  async checkUpload(p: string, overwrite: boolean): Promise<Obj | undefined> {
    this.requireWriteBit();
    const dir = path.posix.dirname(p);
    this.core.access.requireWrite(this.user, dir, p);
    await this.folder(dir);
    const existing = await this.find(p);
    if (existing?.isDir) throw new BadRequest('is a folder');
    if (existing && !overwrite) throw new Forbidden('file exists');
    return existing;
  }

  /** Stores a stream at `p` through `fs` put (temporary file renamed into place when complete). */
  async upload(p: string, stream: Readable, overwrite = true): Promise<void> {
    await this.core.writer.put(p, { name: path.posix.basename(p), size: -1, stream }, { overwrite, creator: this.user });
  }

  async mkdir(p: string): Promise<void> {
    this.requireWriteBit();
    const dir = path.posix.dirname(p);
    this.core.access.requireWrite(this.user, dir, p);
    await this.folder(dir);
    if (await this.find(p)) throw new Forbidden('file exists');
    await this.core.writer.mkdir(p);
  }

  /** Deletes a file (`folder` false) or an empty folder (`folder` true). */
  async remove(p: string, folder: boolean): Promise<void> {
    this.requireWriteBit();
    this.core.access.requireChange(this.user, PERM.REMOVE, p);
    if (p === this.root) throw new Forbidden('the root folder can not be removed');
    const obj = await this.stat(p);
    if (folder && !obj.isDir) throw new BadRequest('not a folder');
    if (!folder && obj.isDir) throw new BadRequest('is a folder');
    if (folder && (await this.core.fs.list(p, { refresh: true })).objs.length > 0) throw new BadRequest('folder is not empty');
    await this.core.writer.remove(path.posix.dirname(p), [path.posix.basename(p)]);
  }

  /** Renames or moves `from` to `to`; an existing file there is replaced only with `overwrite`. */
  async rename(from: string, to: string, overwrite: boolean): Promise<void> {
    this.requireWriteBit();
    if (from === this.root) throw new Forbidden('the root folder can not be renamed');
    const bit = path.posix.dirname(from) === path.posix.dirname(to) ? PERM.RENAME : PERM.MOVE;
    this.core.access.requireChange(this.user, bit, from, to);
    this.core.access.requireWrite(this.user, path.posix.dirname(to), to);
    await this.stat(from);
    await this.folder(path.posix.dirname(to));
    const existing = await this.find(to);
    if (existing && (!overwrite || existing.isDir)) throw new Forbidden('file exists');
    await this.core.writer.moveTo(from, to, overwrite);
  }

  async setModified(p: string, modified: Date): Promise<void> {
    this.requireWriteBit();
    this.core.access.requireWrite(this.user, path.posix.dirname(p), p);
    await this.stat(p);
    await this.core.writer.setModified(p, modified);
  }
}
