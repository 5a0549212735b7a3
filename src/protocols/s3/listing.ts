import type { Obj } from '../../drivers/types.js';
import { isKind } from '../../errors.js';
import type { View } from '../../view/view.js';

export interface Entry {
  key: string;
  obj: Obj;
  /** Where the entry is among its folder's sorted rows (a page of one folder is a run of them). */
  from: { rows: SortedRows; index: number; dirKey: string };
}

export interface ListRequest {
  prefix: string;
  delimiter: string;
  /** Keys up to and including this one are skipped (marker, start-after, continuation token). */
  after: string;
  maxKeys: number;
}

export interface ListResult {
  contents: Entry[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or prefix returned, where the next page starts after. */
  last: string;
}

/**
 * S3's key order is the order of the keys' UTF-8 bytes, which is code point order. JavaScript
 * compares UTF-16 code units: the two differ only where a surrogate (a code point above U+FFFF)
 * meets a unit from U+E000 to U+FFFF, so those are mapped into code point order first.
 */
function codePointCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

const HIGH_UNITS = /[\ud800-\uffff]/;

/** Compares two keys in S3's order. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  if (HIGH_UNITS.test(a) || HIGH_UNITS.test(b)) return codePointCompare(a, b);
  return a < b ? -1 : 1;
}

/** A folder entry with its key relative to the folder: the name, and `/` after a folder's. */
export interface Sorted {
  rel: string;
  obj: Obj;
}

/** A folder's entries in key order, the same array for as long as its cached listing holds. */
export type SortedRows = readonly Sorted[];

/**
 * A folder's entries in key order, kept per listing array: a cached listing is the same array
 * on every request until the folder changes (the listing cache replaces arrays, never edits
 * them), so the pages of a big folder sort it once.
 */
const sortedOf = new WeakMap<Obj[], Sorted[]>();

function sortedEntries(objs: Obj[]): Sorted[] {
  const hit = sortedOf.get(objs);
  if (hit && hit.length === objs.length) return hit;
  const rows = objs.map((obj) => ({ rel: obj.isDir ? `${obj.name}/` : obj.name, obj }));
  if (rows.some((r) => HIGH_UNITS.test(r.rel))) rows.sort((a, b) => codePointCompare(a.rel, b.rel));
  else rows.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  sortedOf.set(objs, rows);
  return rows;
}

/**
 * Folder entries of a listing, keyed below the bucket; missing folders list as empty. A folder
 * the walk descends into (no delimiter) that the principal may not open, by a password it lacks
 * or a rule, lists as empty too: its contents are left out, as a listing with a delimiter shows
 * the folder and no more, and the rest of the bucket lists. The folder the prefix names is
 * refused as any read of it is.
 */
async function entriesOf(view: View, dir: string, descended: boolean): Promise<Obj[]> {
  try {
    return (await view.list(view.virtual(dir))).objs;
  } catch (err) {
    if (isKind(err, 'NotFound', 'Hidden', 'BadRequest')) return [];
    if (descended && isKind(err, 'PasswordRequired', 'Forbidden')) return [];
    throw err;
  }
}

/**
 * The first entry that may hold a key after `after`: a key past it, or a folder `after` lies
 * in. Every entry from there on is past `after` (siblings never extend each other's keys).
 */
function firstNeeded(rows: Sorted[], dirKey: string, after: string): number {
  if (after === '' || compareKeys(after, dirKey) < 0) return 0;
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const key = dirKey + rows[mid]!.rel;
    const needed = compareKeys(key, after) > 0 || (rows[mid]!.obj.isDir && after.startsWith(key));
    if (needed) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * ListObjects over the folders of a bucket: objects are files, keyed by their path below the
 * bucket; with delimiter `/` a folder is a common prefix and is not descended into. Only the
 * folder the prefix names is walked, in key order (each folder's entries sorted once per
 * listing), starting where `after` leaves off and stopping one key past the page: a page costs
 * its own keys, not the whole bucket's.
 */
export async function listKeys(view: View, req: ListRequest): Promise<ListResult> {
  const { prefix, delimiter, after, maxKeys } = req;
  const slash = prefix.lastIndexOf('/');
  const baseKey = slash >= 0 ? prefix.slice(0, slash + 1) : '';
  const contents: Entry[] = [];
  const prefixes: string[] = [];
  let last = '';
  let truncated = false;

  /** Adds one row in key order; false once the page is full and a further row exists. */
  const emit = (key: string, from?: Entry['from']): boolean => {
    if (after && compareKeys(key, after) <= 0) return true;
    if (!from && key === last) return true;
    if (contents.length + prefixes.length >= maxKeys) {
      truncated = true;
      return false;
    }
    if (from) contents.push({ key, obj: from.rows[from.index]!.obj, from });
    else prefixes.push(key);
    last = key;
    return true;
  };

  const walk = async (dirKey: string): Promise<boolean> => {
    const rows = sortedEntries(await entriesOf(view, `/${dirKey}`, dirKey !== baseKey));
    for (let i = firstNeeded(rows, dirKey, after); i < rows.length; i++) {
      const { rel, obj } = rows[i]!;
      const key = dirKey + rel;
      if (obj.isDir) {
        if (!key.startsWith(prefix) && !prefix.startsWith(key)) continue;
        if (delimiter === '/' && key.startsWith(prefix)) {
          if (!emit(key)) return false;
        } else if (!(await walk(key))) return false;
        continue;
      }
      if (!key.startsWith(prefix)) continue;
      // Keys sharing a prefix are next to each other in key order: their common prefix is one row.
      const at = delimiter && delimiter !== '/' ? key.indexOf(delimiter, prefix.length) : -1;
      if (!(at >= 0 ? emit(key.slice(0, at + delimiter.length)) : emit(key, { rows, index: i, dirKey }))) return false;
    }
    return true;
  };
  await walk(baseKey);
  return { contents, prefixes, truncated, last };
}
