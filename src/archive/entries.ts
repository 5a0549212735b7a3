import { Transform, type TransformCallback } from 'node:stream';
import { BadRequest, TooLarge } from '../errors.js';

/** One entry of an archive, by its cleaned inner path (`/a/b.txt`); `modified` in ms since 1970. */
export interface ArchiveEntry {
  path: string;
  size: number;
  isDir: boolean;
  modified: number;
  encrypted: boolean;
}

/** No backslash, NUL, leading slash or drive letter, empty, `.` or `..` segment: already clean. */
const PLAIN_NAME = /^(?![a-zA-Z]:)(?:(?!\.\.?(?:\/|$))[^/\\\0]+\/)*(?!\.\.?\/?$)[^/\\\0]+\/?$/;

/**
 * An entry's name as a safe inner path, or undefined for one that could reach outside the folder
 * it is extracted into (zip-slip): `..` segments, absolute paths, drive letters. Backslashes are
 * separators (archives made on Windows).
 */
export function safeInnerPath(raw: string): string | undefined {
  // The common case, a plain relative name, without splitting it.
  if (PLAIN_NAME.test(raw)) return `/${raw.endsWith('/') ? raw.slice(0, -1) : raw}`;
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name) || name.includes('\0')) return undefined;
  const segs = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.length === 0 || segs.includes('..')) return undefined;
  return `/${segs.join('/')}`;
}

/** The inner path a client names (`inner_path`, `?inner=`), cleaned; `..` is refused. */
export function cleanInner(raw: string | undefined): string {
  if (!raw || raw === '/') return '/';
  const p = safeInnerPath(raw.replace(/^\/+/, ''));
  if (!p) throw new BadRequest(`invalid inner path: ${raw}`);
  return p;
}

/** The bounds of settings archive_max_size / archive_max_ratio / archive_max_entries. */
export interface Limits {
  /** Bytes all entries may expand to, 0 = none. */
  maxBytes: number;
  /** Expanded ÷ archive bytes, checked once past RATIO_FLOOR, 0 = none. */
  maxRatio: number;
  maxEntries: number;
}

/** Below this many expanded bytes the ratio is not checked (a small file of zeros is fine). */
export const RATIO_FLOOR = 64 * 1024 * 1024;

/**
 * Counts expanded bytes over one extraction (one or many entries) and stops it once a bound is
 * passed: bytes counted as they are produced, never trusted from the headers.
 */
export class BombGuard {
  private total = 0;
  constructor(
    private readonly limits: Limits,
    private readonly archiveSize: number,
  ) {}

  get bytes(): number {
    return this.total;
  }

  checkEntries(n: number): void {
    if (this.limits.maxEntries > 0 && n > this.limits.maxEntries) {
      throw new TooLarge(`the archive holds more than ${this.limits.maxEntries} entries (setting archive_max_entries)`);
    }
  }

  /** Refuses at once what the headers already say is too large (the meter still counts real bytes). */
  checkDeclared(bytes: number): void {
    if (this.limits.maxBytes > 0 && bytes > this.limits.maxBytes) {
      throw new TooLarge(`the archive expands to more than ${this.limits.maxBytes} bytes (setting archive_max_size)`);
    }
  }

  add(n: number): void {
    this.total += n;
    const { maxBytes, maxRatio } = this.limits;
    if (maxBytes > 0 && this.total > maxBytes) {
      throw new TooLarge(`the archive expands to more than ${maxBytes} bytes (setting archive_max_size)`);
    }
    if (maxRatio > 0 && this.total > RATIO_FLOOR && this.total > maxRatio * Math.max(1, this.archiveSize)) {
      throw new TooLarge(`the archive expands more than ${maxRatio} times its size (setting archive_max_ratio)`);
    }
  }

  /** A pass-through stream that counts into this guard and fails once a bound is passed. */
  meter(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, cb: TransformCallback) => {
        try {
          this.add(chunk.length);
          cb(null, chunk);
        } catch (err) {
          cb(err as Error);
        }
      },
    });
  }
}
