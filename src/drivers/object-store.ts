// What drivers over an object store (S3, Azure Blob) share: objects are keys below the root's
// prefix, a folder is the keys sharing its prefix (an empty one kept by a placeholder object), and
// there is no rename: a move copies a file or every key of a folder server-side, then deletes the
// sources. Each store brings its own calls for one key (head, copy), a listing and a batch delete.

import path from 'node:path';
import { checkSegment, peerPath, rootOf } from './peer.js';
import { type Obj, ObjectNotFound } from './types.js';

/** Server-side copies of a folder's keys running at the same time. */
const COPIES_IN_FLIGHT = 8;

export abstract class ObjectStoreDriver {
  /** Key prefix of the root ("" or "a/b/"). */
  protected readonly prefix: string;

  constructor(protected readonly opts: Record<string, unknown>) {
    const root = rootOf(opts.root_folder_path);
    this.prefix = root === '/' ? '' : `${root.slice(1)}/`;
  }

  abstract makeDir(parent: string, name: string): Promise<void>;

  /** Size and time of the object under `key`; undefined when there is none. */
  protected abstract head(key: string): Promise<{ size: number; modified: Date } | undefined>;

  /** Whether any key starts with `prefix`. */
  protected abstract anyKeyUnder(prefix: string): Promise<boolean>;

  /** Every key starting with `prefix` (placeholders included). */
  protected abstract keysUnder(prefix: string): Promise<string[]>;

  /** Server-side copy of one object. */
  protected abstract copyKey(from: string, to: string): Promise<void>;

  protected abstract deleteKeys(keys: string[]): Promise<void>;

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** The object key of a path (no leading slash; the root is the prefix itself). */
  protected key(rel: string): string {
    return `${this.prefix}${peerPath('/', rel).slice(1)}`;
  }

  /** The key prefix of a folder's children. */
  protected dirPrefix(rel: string): string {
    const k = this.key(rel);
    return k === '' || k.endsWith('/') ? k : `${k}/`;
  }

  private async isDir(rel: string): Promise<boolean> {
    const prefix = this.dirPrefix(rel);
    return prefix === this.prefix || this.anyKeyUnder(prefix);
  }

  async get(rel: string): Promise<Obj> {
    const name = path.posix.basename(peerPath('/', rel));
    if (name !== '') {
      const h = await this.head(this.key(rel));
      if (h) return { name, size: h.size, isDir: false, modified: h.modified };
    }
    if (await this.isDir(rel)) return { name, size: 0, isDir: true, modified: new Date(0) };
    throw new ObjectNotFound();
  }

  /** Server-side copy of a file or folder tree to a new path; answers the keys copied. */
  private async copyPath(src: string, dst: string): Promise<string[]> {
    const obj = await this.get(src);
    if (!obj.isDir) {
      await this.copyKey(this.key(src), this.key(dst));
      return [this.key(src)];
    }
    const from = this.dirPrefix(src);
    const to = this.dirPrefix(dst);
    const keys = await this.keysUnder(from);
    for (let i = 0; i < keys.length; i += COPIES_IN_FLIGHT) {
      await Promise.all(keys.slice(i, i + COPIES_IN_FLIGHT).map((k) => this.copyKey(k, to + k.slice(from.length))));
    }
    if (keys.length === 0) await this.makeDir(path.posix.dirname(dst), path.posix.basename(dst));
    return keys;
  }

  async copy(src: string, dstDir: string): Promise<void> {
    await this.copyPath(src, path.posix.join(peerPath('/', dstDir), path.posix.basename(peerPath('/', src))));
  }

  /** No rename on an object store: copy, then delete the source (a folder key by key). */
  private async relocate(src: string, dst: string): Promise<void> {
    await this.deleteKeys(await this.copyPath(src, dst));
  }

  async rename(rel: string, newName: string): Promise<void> {
    const p = peerPath('/', rel);
    await this.relocate(p, path.posix.join(path.posix.dirname(p), checkSegment(newName)));
  }

  async move(src: string, dstDir: string): Promise<void> {
    const p = peerPath('/', src);
    await this.relocate(p, path.posix.join(peerPath('/', dstDir), path.posix.basename(p)));
  }

  async remove(rel: string): Promise<void> {
    if (this.dirPrefix(rel) === this.prefix) throw new Error('the root folder can not be removed');
    const obj = await this.get(rel);
    await this.deleteKeys(obj.isDir ? await this.keysUnder(this.dirPrefix(rel)) : [this.key(rel)]);
  }
}
