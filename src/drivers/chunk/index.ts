import { createHash } from 'node:crypto';
import path from 'node:path';
import { PassThrough, pipeline, Readable, Transform } from 'node:stream';
import { isKind, Upstream } from '../../errors.js';
import { cleanPath } from '../../util/paths.js';
import { RemotePathOverlay } from '../overlay.js';
import { isUploadTemp, uploadTempName } from '../peer.js';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type FileHandle,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { PartCutter } from './parts.js';
import { ADDITIONAL, CONFIG } from './info.js';

const THUMB_FOLDER = '.thumbnails';
const HASH_PREFIX = 'hash_';

/** A file stored as parts: the folder holding them and each part's size, in order. */
interface Chunked {
  folder: string;
  obj: Obj;
  parts: number[];
}

/**
 * OpenList's Chunk: files stored as numbered parts of `part_size` bytes under another mounted
 * path (`remote_path`), so a storage with a per-file size limit holds big files. A file `name`
 * is the folder `<chunk_prefix>name` holding `0`, `1`, … (each with `custom_ext`) and, with
 * store_hash, empty markers `hash_<kind>_<value>`. Folders and files not in that layout are shown
 * as they are.
 */
export class ChunkDriver extends RemotePathOverlay implements Driver {
  private readonly partSize: number;
  private readonly prefix: string;
  private readonly ext: string;

  constructor(opts: Record<string, unknown>, ctx: DriverContext) {
    super(opts, ctx, 'chunk');
    this.partSize = Number(opts.part_size);
    this.prefix = String(opts.chunk_prefix);
    this.ext = String(opts.custom_ext ?? '');
  }

  async init(): Promise<void> {
    if (!(this.partSize > 0) || !Number.isInteger(this.partSize)) throw new Error('part size must be positive');
    if (this.prefix === '') throw new Error('chunk folder prefix must not be empty');
    if (this.prefix.includes('/')) throw new Error('chunk_prefix must not hold a /');
    this.checkRemoteRoot();
  }

  private remote(p: string): string {
    const segs = p.split('/').filter((s) => s !== '' && s !== '.');
    if (segs.includes('..') || p.includes('\0')) throw new ObjectNotFound();
    return cleanPath(path.posix.join(this.remoteRoot, ...segs));
  }

  /** A folder's remote path is made as any other's. */
  protected remoteDir(p: string): string {
    return this.remote(p);
  }

  private partName(i: number): string {
    return `${i}${this.ext}`;
  }

  /** The part index of a name in a chunk folder, or -1. */
  private partIndex(name: string): number {
    const base = this.ext && name.endsWith(this.ext) ? name.slice(0, name.length - this.ext.length) : name;
    return /^\d+$/.test(base) ? Number(base) : -1;
  }

  /** A chunk folder's content as the file it stands for. */
  private async readChunked(folder: string, name: string, folderObj: Obj): Promise<Chunked> {
    const parts: number[] = [];
    const hash: Record<string, string> = {};
    let size = 0;
    let modified = folderObj.modified;
    for (const o of await this.vfs.list(folder)) {
      if (o.isDir) continue;
      const bare = this.ext && o.name.endsWith(this.ext) ? o.name.slice(0, o.name.length - this.ext.length) : o.name;
      if (bare.startsWith(HASH_PREFIX)) {
        const rest = bare.slice(HASH_PREFIX.length);
        const cut = rest.indexOf('_');
        if (cut > 0) hash[rest.slice(0, cut)] = rest.slice(cut + 1);
        continue;
      }
      const i = this.partIndex(o.name);
      if (i < 0) continue;
      parts[i] = o.size;
      size += o.size;
      if (i === 0) modified = o.modified;
    }
    const obj: Obj = { name, size, isDir: false, modified };
    if (Object.keys(hash).length > 0) obj.hash = hash;
    return { folder, obj, parts };
  }

  async list(p: string): Promise<Obj[]> {
    const dir = this.remote(p);
    const entries = await this.vfs.list(dir);
    const out: Array<Obj | undefined> = [];
    const jobs: Array<() => Promise<void>> = [];
    let thumbs: Set<string> | undefined;
    for (const o of entries) {
      if (isUploadTemp(o.name)) continue;
      if (o.isDir && o.name.startsWith(this.prefix) && o.name.length > this.prefix.length) {
        const slot = out.length;
        out.push(undefined);
        jobs.push(async () => {
          out[slot] = (await this.readChunked(path.posix.join(dir, o.name), o.name.slice(this.prefix.length), o)).obj;
        });
        continue;
      }
      if (!this.opts.show_hidden && o.name.startsWith('.')) continue;
      if (this.opts.thumbnail && o.isDir && o.name === THUMB_FOLDER) {
        thumbs = new Set((await this.list(path.posix.join(p, THUMB_FOLDER)).catch(() => [])).map((t) => t.name));
        continue;
      }
      out.push({ ...o });
    }
    const workers = Math.max(1, Number(this.opts.num_list_workers) || 1);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(workers, jobs.length) }, async () => {
        while (next < jobs.length) await jobs[next++]!();
      }),
    );
    const objs = out.filter((o): o is Obj => o !== undefined);
    if (thumbs) for (const o of objs) if (!o.isDir && thumbs.has(`${o.name}.webp`)) o.selfThumb = true;
    return objs;
  }

  /** What `p` is on the remote: a plain object, or a chunked file. */
  private async resolve(p: string): Promise<{ plain: string; obj: Obj } | { chunked: Chunked }> {
    const remote = this.remote(p);
    try {
      return { plain: remote, obj: await this.vfs.get(remote) };
    } catch (err) {
      if (!isKind(err, 'NotFound')) throw err;
    }
    const name = path.posix.basename(remote);
    if (cleanPath(p) === '/' || isUploadTemp(name)) throw new ObjectNotFound();
    const folder = path.posix.join(path.posix.dirname(remote), this.prefix + name);
    const folderObj = await this.vfs.get(folder);
    if (!folderObj.isDir) throw new ObjectNotFound();
    return { chunked: await this.readChunked(folder, name, folderObj) };
  }

  protected async remoteOf(p: string): Promise<{ remote: string; chunked: boolean }> {
    const r = await this.resolve(p);
    return 'plain' in r ? { remote: r.plain, chunked: false } : { remote: r.chunked.folder, chunked: true };
  }

  async get(p: string): Promise<Obj> {
    const r = await this.resolve(p);
    if ('plain' in r) return { ...r.obj, name: cleanPath(p) === '/' ? '' : r.obj.name };
    return r.chunked.obj;
  }

  async link(p: string, args: LinkArgs): Promise<Link> {
    if (args.type === 'thumb' && this.opts.thumbnail) {
      return { ...(await this.link(path.posix.join(path.posix.dirname(p), THUMB_FOLDER, `${path.posix.basename(p)}.webp`), {})), contentType: 'image/webp' };
    }
    const r = await this.resolve(p);
    if ('plain' in r) {
      if (r.obj.isDir) throw new ObjectNotFound('not a file');
      return this.vfs.link(r.plain, args);
    }
    return { file: this.handle(r.chunked) };
  }

  /** Reads a range across the parts it spans, one part after the other. */
  private handle(c: Chunked): FileHandle {
    const { parts } = c;
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] === undefined || (parts[i] === 0 && i < parts.length - 1 && i > 0)) throw new Upstream(`chunk part[${i}] are missing`);
    }
    if (parts.length === 0) throw new Upstream('chunk part[0] are missing');
    return {
      size: c.obj.size,
      modified: c.obj.modified,
      open: async (start, end) => {
        const out = new PassThrough();
        const last = Math.min(end, c.obj.size - 1);
        void (async () => {
          let offset = 0;
          for (let i = 0; i < parts.length && offset <= last; i++) {
            const size = parts[i]!;
            const from = Math.max(start, offset);
            const to = Math.min(last, offset + size - 1);
            if (from <= to) {
              const part = await this.vfs.open(path.posix.join(c.folder, this.partName(i)), from - offset, to - offset);
              for await (const b of part) if (!out.write(b)) await new Promise((r) => out.once('drain', r));
            }
            offset += size;
          }
          out.end();
        })().catch((err) => out.destroy(err));
        return out;
      },
    };
  }

  /** Creates a remote folder; one that a concurrent request created meanwhile is fine too. */
  private async ensureDir(remote: string): Promise<void> {
    try {
      await this.vfs.mkdir(remote);
    } catch (err) {
      const now = await this.vfs.get(remote).catch(() => undefined);
      if (!now?.isDir) throw err;
    }
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.ensureDir(path.posix.join(this.remote(parent), name));
  }

  async rename(p: string, newName: string): Promise<void> {
    const { remote, chunked } = await this.remoteOf(p);
    await this.vfs.rename(remote, chunked ? this.prefix + newName : newName);
  }

  /**
   * Writes the parts into a hidden folder next to the target and renames it into place once all
   * are stored, so a failed upload leaves nothing and an old file stays until the new one is whole.
   */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const dir = this.remote(dstDir);
    const plain = (this.opts.chunk_large_file_only && up.size >= 0 && up.size <= this.partSize) || (this.opts.thumbnail && path.posix.basename(dir) === THUMB_FOLDER);
    if (plain) {
      await this.vfs.put(dir, up);
      await this.vfs.remove(path.posix.join(dir, this.prefix + up.name)).catch(() => undefined);
      return;
    }
    const md5 = createHash('md5');
    const checked = new CheckedStream(up);
    const hashing = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        md5.update(chunk);
        cb(null, chunk);
      },
    });
    const source = pipeline(up.stream, checked, hashing, () => {});
    const cutter = new PartCutter(source, this.partSize);
    const temp = path.posix.join(dir, uploadTempName());
    await this.ensureDir(temp);
    try {
      for (let i = 0, stored = 0; ; i++) {
        const size = up.size >= 0 ? Math.min(this.partSize, up.size - stored) : -1;
        await this.vfs.put(temp, { name: this.partName(i), size, stream: cutter.part(), modified: up.modified, signal: up.signal });
        stored += size;
        if (await cutter.done()) break;
      }
      if (this.opts.store_hash) {
        const hashes = { ...up.hashes, md5: md5.digest('hex') };
        for (const [kind, value] of Object.entries(hashes)) {
          if (!value) continue;
          await this.vfs.put(temp, { name: `${HASH_PREFIX}${kind}_${value.toLowerCase()}${this.ext}`, size: 1, stream: Readable.from([Buffer.from([0])]) });
        }
      }
      const target = this.prefix + up.name;
      for (const old of [target, up.name]) await this.vfs.remove(path.posix.join(dir, old)).catch((err) => (isKind(err, 'NotFound') ? undefined : Promise.reject(err)));
      await this.vfs.rename(temp, target);
    } catch (err) {
      await cutter.abort(err as Error);
      source.destroy();
      await this.vfs.remove(temp).catch(() => undefined);
      throw err;
    }
  }
}

export const chunkDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new ChunkDriver(options, ctx));
