import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Folder of temp_dir holding one sub-folder of received parts per resumable upload. */
export const STAGING_FOLDER = 'resumable';

/** The body went over what the part may hold. */
export class PartTooLong extends Error {}

/** Counts what passes, refusing more than `limit` bytes, and hashes it when asked. */
class PartMeter extends Transform {
  bytes = 0;
  readonly hash;
  constructor(
    private readonly limit: number,
    algorithm?: string,
  ) {
    super();
    this.hash = algorithm ? createHash(algorithm) : undefined;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return cb(new PartTooLong(`the body is longer than the ${this.limit} bytes expected`));
    this.hash?.update(chunk);
    cb(null, chunk);
  }
}

export interface WrittenPart {
  file: string;
  bytes: number;
  /** The digest (base64) when a checksum algorithm was asked for. */
  digest?: string;
  /** The body ended early (client gone); `bytes` were written. */
  interrupted: boolean;
}

/**
 * The staging area of resumable uploads: every received part is a file of its own, written under
 * a unique name and only then recorded, so two clients sending the same part can never mix their
 * bytes in one file. Parts are read back in order when the upload completes.
 */
export class Staging {
  readonly root: string;

  constructor(tempDir: string) {
    this.root = path.join(tempDir, STAGING_FOLDER);
  }

  dir(id: string): string {
    return path.join(this.root, id);
  }

  /**
   * Streams a body into a new part file. With `partial`, a body cut short keeps what arrived
   * (tus); otherwise the file is removed and the error thrown.
   */
  async write(id: string, start: number, body: Readable, limit: number, opts: { partial?: boolean; algorithm?: string } = {}): Promise<WrittenPart> {
    await mkdir(this.dir(id), { recursive: true });
    const name = `${start}.${randomBytes(6).toString('hex')}`;
    const file = path.join(this.dir(id), name);
    const meter = new PartMeter(limit, opts.algorithm);
    try {
      await pipeline(body, meter, createWriteStream(file, { flags: 'wx', highWaterMark: 1 << 20 }));
      return { file: name, bytes: meter.bytes, digest: meter.hash?.digest('base64'), interrupted: false };
    } catch (err) {
      if (opts.partial && !(err instanceof PartTooLong) && !opts.algorithm) {
        const written = await stat(file).then((s) => s.size, () => 0);
        return { file: name, bytes: written, interrupted: true };
      }
      await rm(file, { force: true });
      throw err;
    }
  }

  async removePart(id: string, file: string): Promise<void> {
    await rm(path.join(this.dir(id), file), { force: true });
  }

  /** The parts one after the other as one stream. */
  read(id: string, files: string[]): Readable {
    const dir = this.dir(id);
    return Readable.from(
      (async function* () {
        for (const f of files) yield* createReadStream(path.join(dir, f), { highWaterMark: 1 << 20 });
      })(),
      { objectMode: false },
    );
  }

  async drop(id: string): Promise<void> {
    await rm(this.dir(id), { recursive: true, force: true });
  }

  /** Staging folders with their last change (for folders no upload row owns any more). */
  async folders(): Promise<Array<{ id: string; mtimeMs: number }>> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const out: Array<{ id: string; mtimeMs: number }> = [];
    for (const n of names) {
      const st = await stat(path.join(this.root, n)).catch(() => undefined);
      if (st) out.push({ id: n, mtimeMs: st.mtimeMs });
    }
    return out;
  }
}
