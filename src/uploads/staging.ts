import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rm, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { writeBody } from '../drivers/write-file.js';
import { bodyBytesReceived, bodyReceiving } from '../util/young-gc.js';

/** Folder of temp_dir holding one folder per resumable upload (its staging file). */
export const STAGING_FOLDER = 'resumable';
/** The staging file of an upload: every byte at its offset in the final file. */
const DATA_FILE = 'data';
/** Bytes of one read when a range is streamed out. */
const READ_BUFFER = 1 << 20;

const ignore = () => {};

/** An upload id as the service makes them (and so a safe name under the staging folder). */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;

/** Closes a handle from `openAhead` that was not used. */
export function closeAhead(ahead: Promise<FileHandle | undefined> | undefined): void {
  void ahead?.then((fh) => fh?.close()).catch(ignore);
}

/** The body went over what the range may hold. */
export class PartTooLong extends Error {}
/** The body ended before the bytes the range must hold. */
export class PartTooShort extends Error {}

/**
 * Counts what passes, refusing more than `limit` bytes (and, when `exact`, fewer), and hashes it
 * when asked. Every chunk counts toward the early young collections of util/young-gc.ts, as a
 * single PUT's do: without them a 16 MiB chunk left some 30 MB of dead socket reads to a later GC.
 */
export class PartMeter extends Transform {
  bytes = 0;
  readonly hash;
  private readonly exact: boolean;
  private readonly received = bodyReceiving();
  constructor(
    private readonly limit: number,
    opts: { algorithm?: string; exact?: boolean } = {},
  ) {
    // The default buffering (one socket read): larger buffers keep more reads alive across
    // young-generation GCs, which then reach the old generation and cost full collections.
    super();
    this.hash = opts.algorithm ? createHash(opts.algorithm) : undefined;
    this.exact = Boolean(opts.exact);
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return cb(new PartTooLong(`the body is longer than the ${this.limit} bytes expected`));
    this.hash?.update(chunk);
    bodyBytesReceived(chunk.length);
    cb(null, chunk);
  }
  override _flush(cb: TransformCallback): void {
    this.received();
    if (this.exact && this.bytes !== this.limit) return cb(new PartTooShort(`the body ended after ${this.bytes} of the ${this.limit} bytes expected`));
    cb();
  }
  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    this.received();
    cb(err);
  }
}

export interface Written {
  bytes: number;
  /** The digest (base64) when a checksum algorithm was asked for. */
  digest?: string;
  /** The body ended early (client gone); `bytes` were written. */
  interrupted: boolean;
}

/**
 * The staging area of resumable uploads under temp_dir: one file per upload, every received byte
 * written at its own offset (chunk `i` at `i × chunk_size`), so the finished file is the staging
 * file itself and is never copied or put together. Which ranges hold received bytes is recorded in
 * the database, and one request at a time writes a range (claims, see db/uploads.ts), so bytes of
 * two clients never mix.
 */
export class Staging {
  readonly root: string;

  constructor(tempDir: string) {
    this.root = path.join(tempDir, STAGING_FOLDER);
  }

  dir(id: string): string {
    return path.join(this.root, id);
  }

  /** The staging file of an upload. */
  file(id: string): string {
    return path.join(this.dir(id), DATA_FILE);
  }

  /**
   * Streams a body into the staging file at `position`, at most `limit` bytes (exactly `limit` with
   * `exact`). With `partial`, a body cut short reports what was written (tus); otherwise the error
   * is thrown. The bytes go to disk as a single PUT's do (drivers/write-file.ts: 1 MiB positional
   * writes, memory kept flat); nothing is flushed to the disk here, as for any upload. `file` is
   * the staging file already being opened (`open`); it is closed here either way.
   */
  async write(id: string, position: number, body: Readable, limit: number, opts: { partial?: boolean; algorithm?: string; exact?: boolean; file?: Promise<FileHandle> } = {}): Promise<Written> {
    // While the file is opened, a failing body must not raise an unhandled 'error'.
    body.on('error', ignore);
    let fh: FileHandle | undefined;
    const progress = { written: 0 };
    let bytes = 0;
    const hash = opts.algorithm ? createHash(opts.algorithm) : undefined;
    try {
      // Writes land at their own offsets.
      fh = await (opts.file ?? this.open(id));
      await writeBody(fh, body, {
        position,
        size: opts.exact ? limit : undefined,
        progress,
        take: (chunk) => {
          bytes += chunk.length;
          if (bytes > limit) return new PartTooLong(`the body is longer than the ${limit} bytes expected`);
          hash?.update(chunk);
          return undefined;
        },
        end: () => (opts.exact && bytes !== limit ? new PartTooShort(`the body ended after ${bytes} of the ${limit} bytes expected`) : undefined),
      });
      return { bytes, digest: hash?.digest('base64'), interrupted: false };
    } catch (err) {
      if (!body.readableEnded) body.destroy();
      if (opts.partial && !(err instanceof PartTooLong) && !opts.algorithm) return { bytes: progress.written, interrupted: true };
      throw err;
    } finally {
      body.off('error', ignore);
      await fh?.close();
    }
  }

  /**
   * Opens the staging file of the upload named by a request, before the request's checks: only a
   * file that exists (from the upload's first chunk on), never created here, and undefined for a
   * malformed id or any failure. Whoever gets a handle closes it (`closeAhead`). The open is a
   * trip through the thread pool that costs a chunk 0.3–0.9 ms on the 2-core VM when it starts
   * after the checks; begun with them, it is done by the time they are.
   */
  openAhead(id: string | undefined): Promise<FileHandle | undefined> {
    if (!id || !UPLOAD_ID.test(id)) return Promise.resolve(undefined);
    return open(this.file(id), constants.O_RDWR).catch(() => undefined);
  }

  /** Opens the staging file for writing, creating it and its folder on first use (never truncated). */
  async open(id: string): Promise<FileHandle> {
    const file = this.file(id);
    try {
      return await open(file, constants.O_RDWR);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(this.dir(id), { recursive: true });
      return open(file, constants.O_RDWR | constants.O_CREAT, 0o666);
    }
  }

  /** The bytes an unprivileged writer may still put into the staging area's file system. */
  async free(): Promise<number> {
    await mkdir(this.root, { recursive: true });
    const st = await statfs(this.root);
    return st.bavail * st.bsize;
  }

  /** Creates the (empty) staging file if no byte was written yet (a file of 0 bytes). */
  async ensure(id: string): Promise<void> {
    await (await this.open(id)).close();
  }

  /** A range of the staging file (`end` exclusive). */
  read(id: string, start: number, end: number): Readable {
    return createReadStream(this.file(id), { start, end: end - 1, highWaterMark: READ_BUFFER });
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
