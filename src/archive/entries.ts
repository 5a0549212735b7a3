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

/**
 * A folder or file of the inner tree (what archive/meta answers as `content`), kept small: the
 * cache holds one per entry of every cached archive (about 100 bytes each).
 */
export interface TreeNode {
  /** A string of its own, not a slice of the entry's path (which would keep the path alive). */
  name: string;
  size: number;
  isDir: boolean;
  /** Seconds since 1970 (a small integer, not a boxed double). */
  modified: number;
  /** null for files. */
  children: TreeNode[] | null;
}

/** A copy of a name that does not hold on to the string it was cut from (V8 slices strings of 13+ characters). */
const own = (s: string) => (s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8'));
const seconds = (ms: number) => Math.floor(ms / 1000);

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

/** The inner tree of a flat entry list: folders implied by deeper names are added. */
export function buildTree(entries: Iterable<ArchiveEntry>): TreeNode {
  const root: TreeNode = { name: '', size: 0, isDir: true, modified: 0, children: [] };
  const byPath = new Map<string, TreeNode>([['/', root]]);
  const folder = (p: string): TreeNode => {
    let node = byPath.get(p);
    if (node) return node;
    const cut = p.lastIndexOf('/');
    const parent = folder(cut === 0 ? '/' : p.slice(0, cut));
    node = { name: own(p.slice(cut + 1)), size: 0, isDir: true, modified: 0, children: [] };
    parent.children!.push(node);
    byPath.set(p, node);
    return node;
  };
  for (const e of entries) {
    if (e.isDir) {
      folder(e.path).modified = seconds(e.modified);
      continue;
    }
    if (byPath.has(e.path)) continue;
    const cut = e.path.lastIndexOf('/');
    const node: TreeNode = { name: own(e.path.slice(cut + 1)), size: e.size, isDir: false, modified: seconds(e.modified), children: null };
    folder(cut === 0 ? '/' : e.path.slice(0, cut)).children!.push(node);
    byPath.set(e.path, node);
  }
  return root;
}

export function findNode(root: TreeNode, inner: string): TreeNode | undefined {
  if (inner === '/') return root;
  let node: TreeNode | undefined = root;
  for (const seg of inner.slice(1).split('/')) {
    node = node?.children?.find((c) => c.name === seg);
    if (!node) return undefined;
  }
  return node;
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
