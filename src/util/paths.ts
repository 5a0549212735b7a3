import path from 'node:path';
import { Forbidden } from '../errors.js';

/**
 * The original's FixAndCleanPath: backslashes become `/`, a leading `/` is ensured, and
 * `.`/`..`/empty segments are collapsed (`..` above the root stays at `/`).
 */
export function cleanPath(p: string): string {
  let s = p.replace(/\\/g, '/');
  if (!s.startsWith('/')) s = `/${s}`;
  return path.posix.normalize(s).replace(/(.)\/+$/, '$1');
}

/** True when `child` equals `parent` or lies below it (both cleaned). */
export function isSubPath(parent: string, child: string): boolean {
  const p = cleanPath(parent);
  const c = cleanPath(child);
  return p === '/' || c === p || c.startsWith(`${p}/`);
}

export const MSG_RELATIVE = 'access using relative path is not allowed';

/**
 * Joins a request path onto a user's base path. A path whose `..` segments would climb is
 * refused (403), so nothing above a user's base path can be named.
 */
export function joinBasePath(basePath: string, reqPath: string): string {
  const segments = reqPath.replace(/\\/g, '/').split('/');
  if (segments.includes('..')) throw new Forbidden(MSG_RELATIVE);
  if (reqPath.includes('\0')) throw new Forbidden('path contains a NUL character');
  return cleanPath(path.posix.join(cleanPath(basePath), cleanPath(reqPath)));
}
