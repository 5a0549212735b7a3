import { PassThrough, type Readable } from 'node:stream';
import type { Obj } from '../../drivers/types.js';

/** Bytes read ahead from a download stream before it is paused. */
const READ_AHEAD = 1 << 20;
/** Bytes of writes that arrived ahead of a gap an upload may hold before it fails. */
const MAX_REORDER = 64 << 20;

/** Raised for a write at an offset the streaming upload can not take. */
export class UnsupportedWrite extends Error {}

/**
 * An open file being read. SFTP clients read with many requests in flight, in increasing
 * offsets: they are served from one stream of the file; a read elsewhere reopens it there.
 */
export class DownloadHandle {
  private stream?: Readable;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** File offset of the first buffered byte. */
  private pos = -1;
  private ended = false;
  private error?: Error;
  private wake?: () => void;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    readonly obj: Obj,
    readonly size: number,
    private readonly open: (start: number) => Promise<Readable>,
  ) {}

  /** Up to `len` bytes at `offset`; undefined at the end of the file. Calls run one after another. */
  read(offset: number, len: number): Promise<Buffer | undefined> {
    const next = this.queue.then(() => this.readNow(offset, len));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async readNow(offset: number, len: number): Promise<Buffer | undefined> {
    if (offset >= this.size) return undefined;
    if (offset !== this.pos || !this.stream) await this.seek(offset);
    while (this.buffered < len && !this.ended && !this.error) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.stream!.resume();
      });
    }
    if (this.error && this.buffered === 0) throw this.error;
    if (this.buffered === 0) return undefined;
    const out = this.take(Math.min(len, this.buffered));
    this.pos += out.length;
    if (this.buffered < READ_AHEAD && !this.ended) this.stream!.resume();
    return out;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length === n) {
      this.chunks.shift();
      this.buffered -= n;
      return first;
    }
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const part = Math.min(c.length, n - filled);
      c.copy(out, filled, 0, part);
      filled += part;
      if (part === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(part);
    }
    this.buffered -= n;
    return out;
  }

  private async seek(offset: number): Promise<void> {
    this.stream?.destroy();
    this.chunks = [];
    this.buffered = 0;
    this.ended = false;
    this.error = undefined;
    this.pos = offset;
    const stream = await this.open(offset);
    this.stream = stream;
    stream.on('data', (c: Buffer) => {
      if (this.stream !== stream) return;
      this.chunks.push(c);
      this.buffered += c.length;
      if (this.buffered >= READ_AHEAD) stream.pause();
      this.wakeUp();
    });
    stream.on('end', () => {
      if (this.stream !== stream) return;
      this.ended = true;
      this.wakeUp();
    });
    stream.on('error', (err) => {
      if (this.stream !== stream) return;
      this.error = err;
      this.wakeUp();
    });
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  close(): void {
    this.stream?.destroy();
    this.stream = undefined;
    this.chunks = [];
  }
}

/**
 * An open file being written. Writes stream in offset order into one `fs` put (a temporary
 * file renamed into place when the handle is closed); writes arriving ahead of a gap wait in
 * memory (bounded) until it is filled. A handle aborted before close stores nothing.
 */
export class UploadHandle {
  readonly stream = new PassThrough({ highWaterMark: 1 << 20 });
  /** Bytes accepted in order so far. */
  written = 0;
  private ahead = new Map<number, Buffer>();
  private aheadBytes = 0;
  private failure?: Error;
  readonly done: Promise<void>;
  /** A modification time the client set while writing, applied once the file is stored. */
  modified?: Date;

  constructor(
    readonly path: string,
    start: (stream: Readable) => Promise<void>,
  ) {
    this.done = start(this.stream);
    this.done.catch((err: Error) => {
      this.failure ??= err;
      this.stream.resume();
    });
  }

  get size(): number {
    return this.written + this.aheadBytes;
  }

  async write(offset: number, data: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (offset < this.written) throw new UnsupportedWrite('rewriting bytes already written is not supported: files are written from start to end');
    if (offset > this.written) {
      if (this.aheadBytes + data.length > MAX_REORDER) throw new UnsupportedWrite('writes too far ahead of the end of the file: files are written from start to end');
      this.ahead.set(offset, data);
      this.aheadBytes += data.length;
      return;
    }
    await this.push(data);
    for (let next = this.ahead.get(this.written); next; next = this.ahead.get(this.written)) {
      this.ahead.delete(this.written);
      this.aheadBytes -= next.length;
      await this.push(next);
    }
  }

  private async push(data: Buffer): Promise<void> {
    this.written += data.length;
    if (!this.stream.write(data)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('close', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('close', done);
      });
    }
    if (this.failure) throw this.failure;
  }

  /** Ends the file and waits until it is stored under its name. */
  async close(): Promise<void> {
    if (this.ahead.size > 0 && !this.failure) this.abort(new UnsupportedWrite('the file has a gap: some bytes were never written'));
    else this.stream.end();
    await this.done;
  }

  /** Drops the upload: nothing is stored. */
  abort(err = new Error('the upload was not completed')): void {
    this.failure ??= err;
    this.ahead.clear();
    this.stream.destroy(err);
  }
}

/** An open folder: its entries, handed out in pages. */
export class DirHandle {
  private index = 0;

  constructor(
    readonly path: string,
    private readonly entries: Obj[],
  ) {}

  next(page: number): Obj[] {
    const out = this.entries.slice(this.index, this.index + page);
    this.index += out.length;
    return out;
  }
}
