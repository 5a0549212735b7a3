import type { Obj } from '../drivers/types.js';

/**
 * Is the destination the same file as the source? The one comparison that sync (src/sync/) and
 * anything else deciding "already there" share. `mtime`: same size and modification times within
 * `toleranceMs` (storages that keep seconds only); `checksum`: same size and one hash both sides
 * carry (md5, sha1, sha256), else size only (as rclone's --checksum where no hash is shared);
 * `size`: the size alone.
 */
export const COMPARE_MODES = ['mtime', 'checksum', 'size'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

/** What a comparison needs of each side (a listing's object, or what a run recorded of it). */
export type Comparable = Pick<Obj, 'size' | 'modified' | 'hash'>;

/** The default tolerance between two modification times: 1 s. */
export const DEFAULT_TOLERANCE_MS = 1000;

/** Hash names in the order they are preferred. */
export const HASH_NAMES = ['md5', 'sha1', 'sha256'] as const;

/** A hash both sides carry, as [name, src value, dst value]; undefined when they share none. */
export function sharedHash(a: Comparable, b: Comparable): [string, string, string] | undefined {
  for (const h of HASH_NAMES) {
    const x = a.hash?.[h];
    const y = b.hash?.[h];
    if (x && y) return [h, x.toLowerCase(), y.toLowerCase()];
  }
  return undefined;
}

/** Why two files differ under `mode`, or undefined when they are the same. */
export function differs(src: Comparable, dst: Comparable, mode: CompareMode, toleranceMs = DEFAULT_TOLERANCE_MS): string | undefined {
  if (src.size !== dst.size) return `size ${src.size} ≠ ${dst.size}`;
  if (mode === 'size') return undefined;
  if (mode === 'checksum') {
    const h = sharedHash(src, dst);
    return h && h[1] !== h[2] ? `${h[0]} differs` : undefined;
  }
  const dt = Math.abs(src.modified.getTime() - dst.modified.getTime());
  return dt > toleranceMs ? `modified ${src.modified.toISOString()} ≠ ${dst.modified.toISOString()}` : undefined;
}

/** `differs` as a yes/no. */
export function sameFile(src: Comparable, dst: Comparable, mode: CompareMode, toleranceMs = DEFAULT_TOLERANCE_MS): boolean {
  return differs(src, dst, mode, toleranceMs) === undefined;
}
