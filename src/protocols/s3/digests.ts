import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import type { ObjectDigestsRepo } from '../../db/object-digests.js';
import type { Obj } from '../../drivers/types.js';

/** What an object's answers say beyond the storage's own record: its MD5 and its time as the client gave it. */
export interface Known {
  md5?: string;
  /** `x-amz-meta-mtime` as sent (rclone's nanoseconds), for a storage that keeps milliseconds */
  mtime?: string;
}

/**
 * The largest file whose MD5 a HeadObject or GetObject computes when neither the storage nor S3's
 * record knows it (a file written by another front): read once, then remembered as a write's is.
 * Larger files keep the stamp ETag until they are written through S3.
 */
export const MD5_ON_READ_MAX = 16 * 1024 * 1024;

/** Computes the MD5 of the bytes passing through (a PutObject's body, as it streams into the storage). */
export class Md5Tap extends Transform {
  private readonly hash = createHash('md5');
  private hex: string | undefined;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.hex = this.hash.digest('hex');
    done();
  }

  /** The MD5 in hex once the body has ended, else undefined. */
  get md5(): string | undefined {
    return this.hex;
  }
}

/**
 * The MD5 and the modification time as sent of the objects written through S3, kept in the
 * database by virtual path with the size and time the storage reported after the write: valid
 * while the object still has them (a file written since by another front is another object).
 * So a storage without hashes answers the content's MD5 as the ETag of what S3 wrote, and a
 * storage keeping milliseconds answers rclone's nanosecond `x-amz-meta-mtime` as it was sent.
 */
export class S3Digests {
  constructor(private readonly repo: ObjectDigestsRepo) {}

  /**
   * What is known of the object at `p`; with `read`, a file of at most MD5_ON_READ_MAX bytes
   * whose MD5 nobody knows is read once to learn it.
   */
  async of(p: string, obj: Obj, read?: () => Promise<Readable>): Promise<Known> {
    const row = await this.repo.get(p);
    if (row && row.size === obj.size && row.modified === obj.modified.getTime()) return { md5: row.md5 || undefined, mtime: row.mtime || undefined };
    if (!read || obj.isDir || obj.hash?.md5 || obj.size > MD5_ON_READ_MAX) return {};
    const md5 = await md5Of(await read(), obj.size).catch(() => undefined);
    if (md5 !== undefined) await this.remember(p, obj, { md5 });
    return { md5 };
  }

  /** Remembers what is known of the object now at `p` (nothing known: the row is dropped). */
  async remember(p: string, obj: Obj, known: Known): Promise<void> {
    const mtime = known.mtime !== undefined && sameMillisecond(known.mtime, obj.modified) ? known.mtime : '';
    const md5 = known.md5 ?? '';
    if (md5 === '' && mtime === '') return this.repo.delete(p);
    await this.repo.set({ path: p, size: obj.size, modified: obj.modified.getTime(), md5, mtime });
  }

  async drop(p: string): Promise<void> {
    await this.repo.delete(p);
  }
}

/** The MD5 of a stream that must hold exactly `size` bytes (else undefined: the file changed meanwhile). */
async function md5Of(stream: Readable, size: number): Promise<string | undefined> {
  const hash = createHash('md5');
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += (chunk as Buffer).length;
    if (bytes > size) {
      stream.destroy();
      return undefined;
    }
    hash.update(chunk as Buffer);
  }
  return bytes === size ? hash.digest('hex') : undefined;
}

/** Whether a time in seconds (`1700000000.123456789`) is the stored time, to its millisecond. */
function sameMillisecond(seconds: string, stored: Date): boolean {
  const n = Number(seconds);
  return Number.isFinite(n) && Math.trunc(n * 1000) === stored.getTime();
}
