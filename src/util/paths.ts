import path from 'node:path';

/** `/`, or `/`-led segments none of which is empty, `.` or `..` or holds a backslash: what cleanPath gives back unchanged. */
const CLEAN = /^(?:\/|(?:\/(?!\.\.?(?:\/|$))[^/\\]+)+)$/;

/**
 * The original's FixAndCleanPath: backslashes become `/`, a leading `/` is ensured, and
 * `.`/`..`/empty segments are collapsed (`..` above the root stays at `/`).
 */
export function cleanPath(p: string): string {
  // Most paths are clean already (each request's is cleaned once, then joined with clean names).
  if (CLEAN.test(p)) return p;
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
