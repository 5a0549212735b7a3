import { TimeSlices } from '../util/slices.js';
import type { ArchiveEntry } from './entries.js';

/**
 * Growable storage of many short strings as UTF-8 bytes in one buffer, with their offsets: no
 * JavaScript object per string. Listings of 100 000 entries kept as 100 000 strings and objects
 * survive the young generation and make V8 grow its heap (tens of MB of RSS); kept here they
 * are a few buffers off the heap, and strings are made only when read.
 */
export class ByteStrings {
  private bytes: Buffer;
  private used = 0;
  private starts: Float64Array;
  private n = 0;

  /** Sized for `expected` strings of about 24 bytes (grown by doubling past that). */
  constructor(expected = 1024) {
    this.bytes = Buffer.allocUnsafe(Math.max(4096, expected * 24));
    this.starts = new Float64Array(expected + 1);
  }

  get length(): number {
    return this.n;
  }

  push(s: string): number {
    const need = Buffer.byteLength(s);
    if (this.used + need > this.bytes.length) {
      const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + need));
      this.bytes.copy(next, 0, 0, this.used);
      this.bytes = next;
    }
    if (this.n + 1 >= this.starts.length) {
      const next = new Float64Array(this.starts.length * 2);
      next.set(this.starts);
      this.starts = next;
    }
    this.starts[this.n] = this.used;
    this.used += this.bytes.write(s, this.used);
    this.starts[++this.n] = this.used;
    return this.n - 1;
  }

  get(i: number): string {
    return this.bytes.toString('utf8', this.starts[i], this.starts[i + 1]);
  }

  /** Is string `i` equal to the UTF-8 bytes `b` (no string made). */
  equals(i: number, b: Buffer): boolean {
    const start = this.starts[i]!;
    const end = this.starts[i + 1]!;
    return end - start === b.length && this.bytes.compare(b, 0, b.length, start, end) === 0;
  }
}

/** A growable Float64Array / Int32Array / Uint32Array / Uint8Array column. */
export class Column<T extends Float64Array | Int32Array | Uint32Array | Uint8Array> {
  constructor(
    public data: T,
    private readonly make: (n: number) => T,
  ) {}

  set(i: number, v: number): void {
    if (i >= this.data.length) {
      const next = this.make(Math.max(this.data.length * 2, i + 1));
      next.set(this.data);
      this.data = next;
    }
    this.data[i] = v;
  }
}

export const f64 = (n = 1024) => new Column(new Float64Array(n), (m) => new Float64Array(m));
export const u32 = (n = 1024) => new Column(new Uint32Array(n), (m) => new Uint32Array(m));
const i32 = (n = 1024) => new Column(new Int32Array(n), (m) => new Int32Array(m));
export const u8 = (n = 1024) => new Column(new Uint8Array(n), (m) => new Uint8Array(m));

/** One node of the inner tree as the API shows it, made on demand. */
export interface TreeNode {
  name: string;
  size: number;
  isDir: boolean;
  /** Seconds since 1970. */
  modified: number;
}

const NONE = -1;

/**
 * The inner tree of an archive (what archive/meta answers as `content`, and what archive/list
 * pages through), as columns: names, size, modified time, folder flag, and the tree as first
 * child / next sibling links. About 40 bytes an entry plus its name, off the JavaScript heap.
 * Node 0 is the root folder.
 */
export class ArchiveTree {
  private readonly names: ByteStrings;
  private readonly size: Column<Float64Array>;
  private readonly modified: Column<Float64Array>;
  private readonly dir: Column<Uint8Array>;
  private readonly first: Column<Int32Array>;
  private readonly last: Column<Int32Array>;
  private readonly next: Column<Int32Array>;
  private readonly childCount: Column<Int32Array>;

  /** Columns sized for `expected` nodes (they grow past it). */
  constructor(expected = 1024) {
    const n = Math.max(16, Math.min(expected, 1 << 22));
    this.names = new ByteStrings(n);
    this.size = f64(n);
    this.modified = f64(n);
    this.dir = u8(n);
    this.first = i32(n);
    this.last = i32(n);
    this.next = i32(n);
    this.childCount = i32(n);
    this.addNode(NONE, '', 0, true, 0);
  }

  get count(): number {
    return this.names.length;
  }

  /** Adds a node below `parent` (after its other children); `modified` in seconds. */
  addNode(parent: number, name: string, size: number, isDir: boolean, modified: number): number {
    const id = this.names.push(name);
    this.size.set(id, size);
    this.modified.set(id, modified);
    this.dir.set(id, isDir ? 1 : 0);
    this.first.set(id, NONE);
    this.last.set(id, NONE);
    this.next.set(id, NONE);
    this.childCount.set(id, 0);
    if (parent !== NONE) {
      const tail = this.last.data[parent]!;
      if (tail === NONE) this.first.set(parent, id);
      else this.next.set(tail, id);
      this.last.set(parent, id);
      this.childCount.set(parent, this.childCount.data[parent]! + 1);
    }
    return id;
  }

  /**
   * The tree of a flat entry list: folders implied by deeper names are added. A file stored
   * under a folder's path is left out; a file path stored twice is listed twice (as stored).
   */
  static of(entries: Iterable<ArchiveEntry>, expected?: number): ArchiveTree {
    const { tree, add } = ArchiveTree.builder(expected);
    for (const e of entries) add(e);
    return tree;
  }

  /**
   * The same tree, built in time slices with turns of the event loop between them: a 200 000-entry
   * zip's tree takes a few hundred ms to build, which no other request should wait for.
   */
  static async ofInSlices(entries: Iterable<ArchiveEntry>, expected?: number): Promise<ArchiveTree> {
    const { tree, add } = ArchiveTree.builder(expected);
    const slices = new TimeSlices();
    let n = 0;
    for (const e of entries) {
      add(e);
      if ((++n & 255) === 0) await slices.maybePause();
    }
    return tree;
  }

  private static builder(expected?: number): { tree: ArchiveTree; add: (e: ArchiveEntry) => void } {
    // Room for the entries, the root and some implied folders.
    const tree = new ArchiveTree(expected === undefined ? undefined : Math.ceil(expected * 1.05) + 16);
    // Folders by path (a few among many files).
    const folders = new Map<string, number>([['/', 0]]);
    const folder = (p: string): number => {
      const known = folders.get(p);
      if (known !== undefined) return known;
      const cut = p.lastIndexOf('/');
      const id = tree.addNode(folder(cut === 0 ? '/' : p.slice(0, cut)), p.slice(cut + 1), 0, true, 0);
      folders.set(p, id);
      return id;
    };
    const add = (e: ArchiveEntry) => {
      if (e.isDir) {
        tree.modified.set(folder(e.path), Math.floor(e.modified / 1000));
        return;
      }
      if (folders.has(e.path)) return;
      const cut = e.path.lastIndexOf('/');
      tree.addNode(folder(cut === 0 ? '/' : e.path.slice(0, cut)), e.path.slice(cut + 1), e.size, false, Math.floor(e.modified / 1000));
    };
    return { tree, add };
  }

  isDir(id: number): boolean {
    return this.dir.data[id] === 1;
  }

  node(id: number): TreeNode {
    return { name: this.names.get(id), size: this.size.data[id]!, isDir: this.isDir(id), modified: this.modified.data[id]! };
  }

  childrenCount(id: number): number {
    return this.childCount.data[id]!;
  }

  /** The children of a folder, in archive order. */
  *children(id: number): Generator<number> {
    for (let c = this.first.data[id]!; c !== NONE; c = this.next.data[c]!) yield c;
  }

  /** The node at an inner path (`/` is the root), or undefined. */
  find(inner: string): number | undefined {
    let id = 0;
    if (inner === '/') return id;
    for (const seg of inner.slice(1).split('/')) {
      const b = Buffer.from(seg);
      let found: number | undefined;
      for (const c of this.children(id)) {
        if (this.names.equals(c, b)) {
          found = c;
          break;
        }
      }
      if (found === undefined) return undefined;
      id = found;
    }
    return id;
  }
}
