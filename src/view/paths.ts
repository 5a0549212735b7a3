import { Forbidden, KindError } from '../errors.js';
import { cleanPath } from '../util/paths.js';

export { cleanPath };

/** The one limit on a path for every front, as PATH_MAX would: bytes of the whole path, and segments. */
export const MAX_PATH_BYTES = 4096;
export const MAX_PATH_SEGMENTS = 256;

export const MSG_RELATIVE = 'access using relative path is not allowed';
export const MSG_PATH_TOO_LONG = `path is too long (at most ${MAX_PATH_BYTES} bytes and ${MAX_PATH_SEGMENTS} segments)`;

/** A path over the limits: the API answers 400, WebDAV 414, SFTP and FTP a failure. */
export class PathTooLong extends KindError {
  constructor() {
    super('PathTooLong', MSG_PATH_TOO_LONG);
  }
}

/**
 * How a front's client spells paths:
 * - `strict` (the HTTP API, as the original's JoinBasePath): a `..` segment is refused.
 * - `navigate` (WebDAV URLs, SFTP and FTP, whose clients move around with `..` as a shell
 *   does, and raw links): dot segments are resolved, never above the principal's root.
 * Either way nothing above the root can be named, and the result has no `.`/`..`/empty segment.
 */
export type PathStyle = 'strict' | 'navigate';

/** Refuses a path over the limits before any work is done on it (counted on the raw input). */
export function checkBounds(p: string): void {
  if (p.length > MAX_PATH_BYTES || Buffer.byteLength(p) > MAX_PATH_BYTES) throw new PathTooLong();
  let segments = 0;
  for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) {
    if (++segments > MAX_PATH_SEGMENTS) throw new PathTooLong();
  }
  for (let i = p.indexOf('\\'); i !== -1; i = p.indexOf('\\', i + 1)) {
    if (++segments > MAX_PATH_SEGMENTS) throw new PathTooLong();
  }
}

/** A client path below `root` as a virtual path: bounded, cleaned, and never above `root`. */
export function underRoot(root: string, clientPath: string, style: PathStyle): string {
  checkBounds(clientPath);
  if (clientPath.includes('\0')) throw new Forbidden('path contains a NUL character');
  if (style === 'strict' && clientPath.replace(/\\/g, '/').split('/').includes('..')) throw new Forbidden(MSG_RELATIVE);
  const rel = cleanPath(clientPath);
  const joined = root === '/' ? rel : rel === '/' ? root : `${root}${rel}`;
  if (joined.split('/').length - 1 > MAX_PATH_SEGMENTS || Buffer.byteLength(joined) > MAX_PATH_BYTES) throw new PathTooLong();
  return joined;
}
