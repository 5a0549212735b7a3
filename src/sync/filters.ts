import { BadRequest } from '../errors.js';

/**
 * A job's filters, in rclone's terms: include and exclude globs (`*` any run of characters but
 * `/`, `**` any run including `/`, `?` one character but `/`, `[...]` a class, `{a,b}`
 * alternatives; a leading `/` anchors at the job's root, otherwise a pattern matches the end of the
 * path; a trailing `/` means everything below that folder), minimum and maximum size (bytes) and
 * age (seconds). A file is left out when an exclude matches it, or when includes are given and
 * none matches; files left out are neither copied nor deleted.
 */
export interface SyncFilters {
  include: string[];
  exclude: string[];
  min_size: number | null;
  max_size: number | null;
  min_age: number | null;
  max_age: number | null;
}

export const NO_FILTERS: SyncFilters = { include: [], exclude: [], min_size: null, max_size: null, min_age: null, max_age: null };

const MAX_PATTERN = 1024;

/** A glob of rclone's syntax as a regular expression over a relative path starting with `/`. */
export function globToRegExp(glob: string): RegExp {
  if (glob.length === 0 || glob.length > MAX_PATTERN) throw new BadRequest(`a filter pattern is 1 to ${MAX_PATTERN} characters`);
  let g = glob;
  const anchored = g.startsWith('/');
  if (anchored) g = g.slice(1);
  if (g.endsWith('/')) g += '**';
  let re = '';
  let braces = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === '*') {
      if (g[i + 1] === '*') {
        re += '.*';
        i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = g.indexOf(']', i + 2);
      if (end < 0) throw new BadRequest(`filter ${glob}: [ without ]`);
      let cls = g.slice(i + 1, end);
      // A class never matches the separator (as rclone's: `[!a]` is any one character but `a` and `/`).
      if (cls.startsWith('!') || cls.startsWith('^')) cls = `^/${cls.slice(1)}`;
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) re += '|';
    else if (c === '\\' && i + 1 < g.length) re += `\\${g[++i]}`;
    else re += c.replace(/[.+^$()|{}\]\\]/g, '\\$&');
  }
  if (braces !== 0) throw new BadRequest(`filter ${glob}: { without }`);
  return new RegExp(`${anchored ? '^/' : '(?:^|/)'}${re}$`);
}

const SIZE_UNITS: Record<string, number> = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };
const AGE_UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, M: 2_592_000, y: 31_536_000 };

/** A size in bytes from a number or rclone's `10k`, `1.5M`, `2G` (binary units; a bare number is bytes). */
export function parseSize(v: number | string | null | undefined, field: string): number | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) throw new BadRequest(`${field} must be a size of 0 or more bytes`);
    return Math.floor(v);
  }
  const m = /^(\d+(?:\.\d+)?)\s*([bkmgtp]?)(?:i?b)?$/i.exec(v.trim());
  if (!m) throw new BadRequest(`${field}: ${v} is not a size (like 100, 10k, 1.5M, 2G)`);
  return Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] || 'b').toLowerCase()]!);
}

/** An age in seconds from a number or rclone's `90s`, `30m`, `2h`, `7d`, `1w`, `1M`, `1y` (concatenations too: `1h30m`). */
export function parseAge(v: number | string | null | undefined, field: string): number | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) throw new BadRequest(`${field} must be an age of 0 or more seconds`);
    return Math.floor(v);
  }
  const s = v.trim();
  if (/^\d+(?:\.\d+)?$/.test(s)) return Math.floor(Number(s));
  let total = 0;
  let rest = s;
  while (rest.length > 0) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w|M|y)/.exec(rest);
    if (!m) throw new BadRequest(`${field}: ${v} is not an age (like 90s, 30m, 2h, 7d, 1w)`);
    total += Number(m[1]) * AGE_UNITS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return Math.floor(total);
}

/** The filters as a predicate over a file's relative path (`/a/b.txt`), size and modification time. */
export class FilterSet {
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];

  constructor(readonly f: SyncFilters) {
    this.include = f.include.map(globToRegExp);
    this.exclude = f.exclude.map(globToRegExp);
  }

  get empty(): boolean {
    const f = this.f;
    return f.include.length === 0 && f.exclude.length === 0 && f.min_size === null && f.max_size === null && f.min_age === null && f.max_age === null;
  }

  /** True when the file takes part in the run. */
  admits(rel: string, size: number, modified: Date, now = Date.now()): boolean {
    if (this.exclude.some((r) => r.test(rel))) return false;
    if (this.include.length > 0 && !this.include.some((r) => r.test(rel))) return false;
    const f = this.f;
    if (f.min_size !== null && size < f.min_size) return false;
    if (f.max_size !== null && size > f.max_size) return false;
    const age = (now - modified.getTime()) / 1000;
    if (f.min_age !== null && age < f.min_age) return false;
    if (f.max_age !== null && age > f.max_age) return false;
    return true;
  }
}
