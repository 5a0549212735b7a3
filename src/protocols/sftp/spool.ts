import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Folder of temp_dir holding the spools of SFTP uploads written out of order. */
export const SPOOL_FOLDER = 'sftp-spool';

/**
 * A random-access temporary file holding part of an upload (from some file offset on): writes
 * land at any position, holes read as zeros, and the whole is read back as one stream when the
 * file is closed. Lives under temp_dir; `dispose` removes it.
 */
export class Spool {
  /** Bytes from the spool's start to the furthest byte written. */
  size = 0;

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
  ) {}

  static async create(tempDir: string): Promise<Spool> {
    const dir = path.join(tempDir, SPOOL_FOLDER);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, randomUUID());
    return new Spool(file, await open(file, 'wx+', 0o600));
  }

  /** Copies a stream to the start of the spool (the current content of a file being updated). */
  async seed(stream: Readable): Promise<void> {
    const out = createWriteStream(this.file, { flags: 'r+', start: 0 });
    await pipeline(stream, out);
    this.size = Math.max(this.size, out.bytesWritten);
  }

  async write(position: number, data: Buffer): Promise<void> {
    let done = 0;
    while (done < data.length) done += (await this.fh.write(data, done, data.length - done, position + done)).bytesWritten;
    this.size = Math.max(this.size, position + data.length);
  }

  async truncate(size: number): Promise<void> {
    await this.fh.truncate(size);
    this.size = size;
  }

  /** The spool's bytes, start to end. */
  read(): Readable {
    if (this.size === 0) return Readable.from([]);
    return createReadStream(this.file, { start: 0, end: this.size - 1 });
  }

  /** Closes and deletes the file. */
  async dispose(): Promise<void> {
    await this.fh.close().catch(() => undefined);
    await rm(this.file, { force: true });
  }
}
