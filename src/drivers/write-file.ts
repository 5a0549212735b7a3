import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadIntegrityError, type UploadStream } from './types.js';

const HASHES = ['md5', 'sha1', 'sha256'] as const;

/** Bytes a file write stream buffers while a write is in flight; the buffered socket chunks then go
 * to disk in one writev instead of one write per 64 KiB chunk. */
const WRITE_BUFFER = 1 << 20;

/** Counts bytes, enforces the declared size and computes the declared hashes while passing data on. */
export class CheckedStream extends Transform {
  bytes = 0;
  private readonly hashers: Array<[string, Hash, string]>;

  constructor(private readonly declared: Pick<UploadStream, 'size' | 'hashes' | 'onProgress'>) {
    super();
    this.hashers = HASHES.filter((h) => declared.hashes?.[h]).map((h) => [h, createHash(h), declared.hashes![h]!.toLowerCase()]);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.declared.size >= 0 && this.bytes > this.declared.size) {
      cb(new UploadIntegrityError(`body is longer than the declared size ${this.declared.size}`));
      return;
    }
    for (const [, h] of this.hashers) h.update(chunk);
    this.declared.onProgress?.(this.bytes);
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    if (this.declared.size >= 0 && this.bytes !== this.declared.size) {
      cb(new UploadIntegrityError(`body is shorter than the declared size: got ${this.bytes} of ${this.declared.size} bytes`));
      return;
    }
    for (const [name, h, want] of this.hashers) {
      const got = h.digest('hex');
      if (got !== want) {
        cb(new UploadIntegrityError(`${name} mismatch: declared ${want}, got ${got}`));
        return;
      }
    }
    cb();
  }
}

/** Streams an upload into `file` (created new), checking size and hashes; returns the byte count. */
export async function writeUploadTo(file: string, up: UploadStream): Promise<number> {
  const checked = new CheckedStream(up);
  await pipeline(up.stream, checked, createWriteStream(file, { flags: 'wx', highWaterMark: WRITE_BUFFER }), { signal: up.signal });
  return checked.bytes;
}

/** Reads a finished file once, checking its size and declared hashes (as a put of it would). */
export async function checkFile(file: string, up: Pick<UploadStream, 'size' | 'hashes' | 'onProgress'>): Promise<void> {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  await pipeline(createReadStream(file, { highWaterMark: WRITE_BUFFER }), new CheckedStream(up), sink);
}
