import { createHash } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  defineDriver,
  type Driver,
  type Link,
  type Obj,
  ObjectNotFound,
} from '../types.js';
import { ADDITIONAL, CONFIG } from './info.js';

const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const NAME_LENGTH = 10;
const MAX_ENTRIES = 100_000;
/** File contents repeat a pattern of this many bytes derived from the file's seed. */
const PATTERN = 64 * 1024;
/** Modification times fall in the five years from here. */
const EPOCH = Date.UTC(2020, 0, 1);
const SPAN = 5 * 365 * 24 * 3600 * 1000;

const digest = (...parts: Array<string | number>) => createHash('sha256').update(parts.join('\0')).digest();

interface Entry extends Obj {
  seed: Buffer;
}

/**
 * A synthetic tree for testing clients and the server itself, as the original's Virtual driver:
 * every folder holds num_file files (sizes between min and max) and num_folder folders, without
 * end. Unlike the original's, names, sizes and bytes are derived from the path (and
 * root_folder_path as a seed), so a listing, a lookup and a download agree with each other.
 * It holds nothing: writes are refused.
 */
export class VirtualDriver implements Driver {
  constructor(private readonly opts: Record<string, unknown>) {}

  private get n() {
    return {
      files: Number(this.opts.num_file),
      folders: Number(this.opts.num_folder),
      min: Number(this.opts.min_file_size),
      max: Number(this.opts.max_file_size),
    };
  }

  async init(): Promise<void> {
    const { files, folders, min, max } = this.n;
    for (const [k, v] of [['num_file', files], ['num_folder', folders]] as const) {
      if (!Number.isInteger(v) || v < 0 || v > MAX_ENTRIES) throw new Error(`${k} must be an integer from 0 to ${MAX_ENTRIES}`);
    }
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || max < min) {
      throw new Error('file sizes must be whole numbers with 0 <= min_file_size <= max_file_size');
    }
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** The entries of the folder at `p` (which must exist: checked by the caller). */
  private entries(p: string): Entry[] {
    const { files, folders, min, max } = this.n;
    const out: Entry[] = [];
    const used = new Set<string>();
    for (let i = 0; i < files + folders; i++) {
      const isDir = i >= files;
      const seed = digest(String(this.opts.root_folder_path), p, i);
      let name = '';
      for (let c = 0; c < NAME_LENGTH; c++) name += NAME_CHARS[seed[c]! % NAME_CHARS.length];
      if (used.has(name)) name += `-${i}`;
      used.add(name);
      const size = isDir ? 0 : min + (seed.readUInt32BE(12) * 0x100000 + (seed.readUInt32BE(16) >>> 12)) % (max - min + 1);
      const modified = new Date(EPOCH + (seed.readUInt32BE(20) % (SPAN / 1000)) * 1000);
      out.push({ name, size, isDir, modified, seed });
    }
    return out;
  }

  private lookup(p: string): Entry | undefined {
    let dir = '/';
    let found: Entry | undefined;
    for (const segment of p.split('/').filter(Boolean)) {
      if (found && !found.isDir) return undefined;
      found = this.entries(dir).find((e) => e.name === segment);
      if (!found) return undefined;
      dir = path.posix.join(dir, segment);
    }
    return found;
  }

  private static plain(e: Entry): Obj {
    return { name: e.name, size: e.size, isDir: e.isDir, modified: e.modified };
  }

  async list(p: string): Promise<Obj[]> {
    if (p !== '/') {
      const e = this.lookup(p);
      if (!e?.isDir) throw new ObjectNotFound();
    }
    return this.entries(p).map(VirtualDriver.plain);
  }

  async get(p: string): Promise<Obj> {
    if (p === '/') return { name: '', size: 0, isDir: true, modified: new Date(EPOCH) };
    const e = this.lookup(p);
    if (!e) throw new ObjectNotFound();
    return VirtualDriver.plain(e);
  }

  async link(p: string): Promise<Link> {
    const e = this.lookup(p);
    if (!e || e.isDir) throw new ObjectNotFound();
    return { file: { size: e.size, modified: e.modified, open: async (start, end) => Readable.from(content(e.seed, start, Math.min(end, e.size - 1))) } };
  }
}

/** The bytes start..end of a file: its pattern block, repeated. */
export function* content(seed: Buffer, start: number, end: number): Generator<Buffer> {
  const blocks: Buffer[] = [];
  for (let k = 0; k < PATTERN / 32; k++) blocks.push(createHash('sha256').update(seed).update(String(k)).digest());
  const pattern = Buffer.concat(blocks);
  let pos = start;
  while (pos <= end) {
    const from = pos % PATTERN;
    const to = Math.min(PATTERN, from + (end - pos + 1));
    yield pattern.subarray(from, to);
    pos += to - from;
  }
}

export const virtualDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new VirtualDriver(options));
