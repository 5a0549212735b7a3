// What drivers talking to a remote peer share: the errors a peer's refusals map to, the
// confinement of paths to the storage root, a connection that comes back after it was lost, and
// the operations of a peer naming objects by path that do not depend on its protocol.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { type Link, type Obj, ObjectNotFound, StorageError } from './types.js';

/** The peer already has an object under that name (kind Exists; the API answers 500 with the text). */
export class ObjectExists extends StorageError {
  constructor(what = 'file exists') {
    super('Exists', what);
  }
}

/** The peer refused the operation: its permissions, a read-only share, a denied key (kind Forbidden, 500 on the API). */
export class PermissionDenied extends StorageError {
  constructor(detail = '') {
    super('Forbidden', detail ? `permission denied by the storage: ${detail}` : 'permission denied by the storage');
  }
}

/**
 * The peer path of `rel` (a path relative to the storage root) below `root`. Any `..` segment or
 * NUL is refused as a missing object: a driver never names anything outside its root.
 */
export function peerPath(root: string, rel: string): string {
  if (rel.includes('\0')) throw new ObjectNotFound();
  const segs = rel.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) throw new ObjectNotFound();
  return path.posix.join(root || '/', ...segs);
}

/** One path segment as a new name: never empty, `.`, `..`, or holding a separator or NUL. */
export function checkSegment(name: string): string {
  if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name)) throw new ObjectNotFound('invalid name');
  return name;
}

/** Cleaned, absolute root folder of an addition's `root_folder_path`. */
export function rootOf(value: unknown): string {
  const p = path.posix.normalize(`/${String(value ?? '/')}`);
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

/** Temporary names of uploads in progress: written next to the target, renamed when complete, never listed. */
export const UPLOAD_TEMP_PREFIX = '.atrium-upload-';
export const uploadTempName = (): string => `${UPLOAD_TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
export const isUploadTemp = (name: string): boolean => name.startsWith(UPLOAD_TEMP_PREFIX);

/**
 * A connection opened on first use and opened again after it was lost: `use` runs an operation on
 * the live connection; when it fails because the connection broke, the connection is dropped and
 * the operation runs once more on a new one.
 */
export class Reconnecting<C> {
  private current?: Promise<C>;

  constructor(
    private readonly open: () => Promise<C>,
    private readonly close: (c: C) => void,
    /** True for errors meaning the connection is gone (not a refusal of the operation). */
    private readonly isConnectionError: (err: unknown) => boolean,
  ) {}

  get(): Promise<C> {
    if (!this.current) {
      const opening = this.open();
      this.current = opening;
      opening.catch(() => {
        if (this.current === opening) this.current = undefined;
      });
    }
    return this.current;
  }

  /** Forgets a connection (after it closed); the next use opens a new one. */
  invalidate(c?: C): void {
    const cur = this.current;
    if (!cur) return;
    this.current = undefined;
    void cur.then((live) => (c === undefined || live === c) && this.close(live), () => undefined);
  }

  async use<T>(op: (c: C) => Promise<T>): Promise<T> {
    const c = await this.get();
    try {
      return await op(c);
    } catch (err) {
      if (!this.isConnectionError(err)) throw err;
      this.invalidate(c);
      return op(await this.get());
    }
  }

  async end(): Promise<void> {
    const cur = this.current;
    this.current = undefined;
    const live = cur ? await cur.catch(() => undefined) : undefined;
    if (live !== undefined) this.close(live);
  }
}

/**
 * A driver over a peer that names objects by their path below a root folder (FTP, SFTP, WebDAV):
 * the root comes from `root_folder_path`, rename and move are one relocation of a path, the root
 * is never removed, and a file's link reads ranges of it by its peer path.
 */
export abstract class RootedPeerDriver {
  protected readonly root: string;

  constructor(protected readonly opts: Record<string, unknown>) {
    this.root = rootOf(opts.root_folder_path);
  }

  abstract get(rel: string): Promise<Obj>;

  /** Bytes start..end (inclusive) of the file at peer path `full`. */
  protected abstract openRange(full: string, start: number, end: number): Promise<Readable>;

  /** Moves the object at peer path `from` to `to`; a taken `to` is refused (the fs layer clears targets first when asked to). */
  protected abstract relocate(from: string, to: string): Promise<void>;

  /** Removes the object at peer path `full` (`rel` below the root), which is not the root. */
  protected abstract removeBelowRoot(full: string, rel: string): Promise<void>;

  addition(): Record<string, unknown> {
    return this.opts;
  }

  protected p(rel: string): string {
    return peerPath(this.root, rel);
  }

  /** The peer paths of `src` and of where a move into `dstDir` puts it (the same name). */
  protected moveTarget(src: string, dstDir: string): [from: string, to: string] {
    const from = this.p(src);
    return [from, path.posix.join(this.p(dstDir), path.posix.basename(from))];
  }

  async link(rel: string): Promise<Link> {
    const full = this.p(rel);
    const obj = await this.get(rel);
    if (obj.isDir) throw new ObjectNotFound('not a file');
    return { file: { size: obj.size, modified: obj.modified, open: (start, end) => this.openRange(full, start, end) } };
  }

  async rename(rel: string, newName: string): Promise<void> {
    const from = this.p(rel);
    await this.relocate(from, path.posix.join(path.posix.dirname(from), checkSegment(newName)));
  }

  async move(src: string, dstDir: string): Promise<void> {
    await this.relocate(...this.moveTarget(src, dstDir));
  }

  async remove(rel: string): Promise<void> {
    const full = this.p(rel);
    if (full === this.root) throw new Error('the root folder can not be removed');
    await this.removeBelowRoot(full, rel);
  }
}
