// What drivers talking to a remote peer share: the errors a peer's refusals map to, the
// confinement of paths to the storage root, and a connection that comes back after it was lost.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { KindError } from '../errors.js';
import { ObjectNotFound } from './types.js';

/** The peer already has an object under that name (kind Exists; the API answers 500 with the text). */
export class ObjectExists extends KindError {
  constructor(what = 'file exists') {
    super('Exists', what, 500);
  }
}

/** The peer refused the operation: its permissions, a read-only share, a denied key (kind Forbidden, 500 on the API). */
export class PermissionDenied extends KindError {
  constructor(detail = '') {
    super('Forbidden', detail ? `permission denied by the storage: ${detail}` : 'permission denied by the storage', 500);
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
