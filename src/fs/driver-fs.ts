import path from 'node:path';
import { Readable } from 'node:stream';
import { openUrlRange } from '../drivers/url-range.js';
import { type Link, type LinkArgs, type Obj, ObjectNotFound, type UploadStream, type VirtualFs } from '../drivers/types.js';
import { isKind } from '../errors.js';
import type { Fs } from './fs.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import type { FsWriter } from './write.js';

/** Missing objects become ObjectNotFound again, so the overlay driver reports them as its own. */
async function found<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (isKind(err, 'NotFound')) throw new ObjectNotFound();
    throw err;
  }
}

/** The virtual tree for overlay drivers, over the same Fs and FsWriter the protocols use. */
export class DriverFs implements VirtualFs {
  constructor(
    private readonly fs: Fs,
    private readonly writer: FsWriter,
    private readonly links: LinkFetcher,
  ) {}

  async list(p: string): Promise<Obj[]> {
    const { objs } = await found(this.fs.list(p));
    return objs;
  }

  async get(p: string): Promise<Obj> {
    return (await found(this.fs.get(p))).obj;
  }

  async link(p: string, args: LinkArgs): Promise<Link> {
    return (await found(this.fs.link(p, args))).link;
  }

  async open(p: string, start: number, end: number): Promise<Readable> {
    if (end < start) return Readable.from([]);
    const link = await this.link(p, {});
    if (link.file) return link.file.open(start, end);
    if (!link.url) throw new Error(`no way to read ${p}`);
    return openUrlRange(this.links, link, start, end);
  }

  mkdir(p: string): Promise<void> {
    return found(this.writer.mkdir(p));
  }

  rename(p: string, newName: string): Promise<void> {
    return found(this.writer.rename(p, newName));
  }

  moveTo(src: string, dst: string): Promise<void> {
    return found(this.writer.moveTo(src, dst, false));
  }

  copyTo(src: string, dst: string): Promise<void> {
    return found(this.writer.copyTo(src, dst, false));
  }

  remove(p: string): Promise<void> {
    return found(this.writer.remove(path.posix.dirname(p), [path.posix.basename(p)]));
  }

  put(dir: string, file: UploadStream): Promise<void> {
    return found(this.writer.put(path.posix.join(dir, file.name), file, { overwrite: true }));
  }

  storageOf(p: string): string {
    return this.fs.resolveStorage(p).storage.actualMount;
  }

  freeSpace(p: string): Promise<number | undefined> {
    return this.writer.freeSpace(p);
  }
}
