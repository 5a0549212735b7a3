import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Link } from '../drivers/types.js';
import { Unsupported, Upstream } from '../errors.js';
import type { LinkFetcher } from '../net/link-fetch.js';

/**
 * An archive's bytes as ranges, from a driver's link: a file handle read from an offset, or a
 * URL read with Range requests. `bytesRead` counts what came over (the remote-browsing tests and
 * the benchmark check it stays below the archive's size for zip listings).
 */
export class ByteSource {
  bytesRead = 0;
  constructor(
    private readonly link: Link,
    readonly size: number,
    private readonly links: LinkFetcher,
  ) {}

  /** Bytes `start`..`end` inclusive, as a stream. */
  async stream(start: number, end: number): Promise<Readable> {
    let s: Readable;
    if (this.link.file) {
      s = await this.link.file.open(start, end);
    } else if (this.link.url) {
      const whole = start === 0 && end >= this.size - 1;
      const res = await this.links.open(this.link, { headers: whole ? {} : { range: `bytes=${start}-${end}` } });
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300 || (!whole && status !== 206)) {
        res.resume();
        throw new Upstream(status === 200 ? 'the storage can not read byte ranges of the archive' : `reading the archive failed: HTTP ${status}`);
      }
      s = res;
    } else {
      throw new Unsupported('the storage gave no way to read the archive');
    }
    s.on('data', (c: Buffer) => (this.bytesRead += c.length));
    return s;
  }

  /** Bytes `start` .. `start + length - 1` as one buffer (small reads: zip headers). */
  async read(start: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const out = Buffer.allocUnsafe(length);
    let at = 0;
    for await (const chunk of await this.stream(start, start + length - 1)) {
      const c = chunk as Buffer;
      const n = Math.min(c.length, length - at);
      c.copy(out, at, 0, n);
      at += n;
      if (at >= length) break;
    }
    if (at < length) throw new Upstream('the archive ended early');
    return out;
  }

  /** A copy of the archive in a new private folder of `tempDir` (for tools that need a seekable file); the caller removes `dir`. */
  async toTempFile(tempDir: string, ext: string): Promise<{ dir: string; file: string }> {
    const dir = await mkdtemp(path.join(tempDir, 'archive-'));
    const file = path.join(dir, `a${ext}`);
    try {
      await pipeline(await this.all(), createWriteStream(file));
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    return { dir, file };
  }

  /** The whole archive from the start, in one pass (streaming formats). */
  all(): Promise<Readable> {
    return this.stream(0, Math.max(0, this.size - 1));
  }
}
