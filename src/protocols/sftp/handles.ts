import { close, read } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Unsupported } from '../../errors.js';
import type { Obj } from '../../drivers/types.js';
import type { Spool } from './spool.js';

/** Bytes read ahead from a download stream before it is paused. */
const READ_AHEAD = 1 << 20;

/** Bytes of a streamed upload kept in memory, so that a rewrite among them can still be served. */
const KEEP_HEAD = 1 << 20;

/**
 * Bytes of a streamed upload taken ahead of the storage before a WRITE waits to be answered and
 * the connection stops reading (readHold): the client's requests in flight are answered as they
 * come instead of one drain at a time. A failure of bytes already answered fails the close, so
 * nothing is stored. Small enough that what is in flight (this, the storage's 1 MiB batch and
 * its write) dies before the young collections of every 4 MiB (util/young-gc.ts) promote it.
 */
const WRITE_AHEAD = 1 << 20;

/** Stops and restarts reading the connection (its socket), counting holds. */
export interface ReadHold {
  hold(): void;
  release(): void;
}

/** Raised for a write at an offset the streaming upload can not take. */
/** A write an upload streamed to its storage can no longer take (kind Unsupported: SFTP's OP_UNSUPPORTED). */
export class UnsupportedWrite extends Unsupported {}

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
    /** The view's transfer-done: called at close with the bytes answered (one `download` event per handle). */
    private readonly done?: (bytes: number) => void,
  ) {}
  private sent = 0;

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
    this.sent += out.length;
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
    this.done?.(this.sent);
  }
}

/**
 * An open local file being read (a Local storage's file): each READ is one positional read of
 * the file opened at OPEN, into the answer's own buffer; reads in flight together may be
 * answered in any order, as SFTP allows. The descriptor is closed once the reads in flight end.
 */
export class FileReadHandle {
  private reading = 0;
  private closing = false;

  constructor(
    readonly path: string,
    readonly obj: Obj,
    private readonly fd: number,
    /** The view's transfer-done: called at close with the bytes answered (one `download` event per handle). */
    private readonly done?: (bytes: number) => void,
  ) {}
  private sent = 0;

  /** Reads up to `len` bytes at file offset `position` into `buf` at `at`; 0 at the end of the file. */
  read(buf: Buffer, at: number, len: number, position: number): Promise<number> {
    if (this.closing) return Promise.reject(new Error('the handle is closed'));
    this.reading++;
    return new Promise<number>((resolve, reject) => {
      read(this.fd, buf, at, len, position, (err, bytes) => {
        if (--this.reading === 0 && this.closing) close(this.fd, () => undefined);
        if (err) reject(err);
        else {
          this.sent += bytes;
          resolve(bytes);
        }
      });
    });
  }

  close(): void {
    if (this.closing) return;
    this.closing = true;
    if (this.reading === 0) close(this.fd, () => undefined);
    this.done?.(this.sent);
  }
}

export interface UploadOptions {
  /** Starts the `fs` put that stores what the stream carries (temporary file renamed into place). */
  start(stream: Readable): Promise<void>;
  /** Makes an empty spool under temp_dir. */
  spool(): Promise<Spool>;
  /** The file's current content, when the upload updates an existing file (open without TRUNC). */
  seed?(): Promise<Readable>;
  /** SSH_FXF_APPEND: every write goes to the end of the file, whatever its offset. */
  append?: boolean;
  /**
   * Held while the storage is behind by more than WRITE_AHEAD: OpenSSH keeps 64 writes of 255
   * KiB in flight whatever the answers, and without it they piled up in memory long enough for
   * V8 to move them to its old generation, collected only by full garbage collections.
   */
  readHold?: ReadHold;
  /**
   * Decides the upload once more when all its bytes are in, before the put is ended (and its
   * storage commits the file): a refusal drops the upload, storing nothing.
   */
  beforeEnd?(): Promise<void>;
}

/**
 * An open file being written, stored by one `fs` put (a temporary file renamed into place when
 * the handle is closed). Writes at the current end stream straight into the put; from the first
 * write anywhere else (or from the open, when an existing file is updated) the rest of the file
 * goes into a random-access spool under temp_dir, streamed into the same put on close. The first
 * `KEEP_HEAD` bytes streamed are also kept in memory: a rewrite among them restarts the put with
 * the whole file spooled; bytes streamed beyond them are final. A handle aborted before close
 * stores nothing and removes its spool.
 */
export class UploadHandle {
  private stream!: PassThrough;
  /** Bytes streamed into the put: the file's first `streamed` bytes. */
  private streamed = 0;
  /** The streamed bytes while they are at most `KEEP_HEAD`. */
  private head: Buffer[] | undefined = [];
  /** Once spooling: the file from offset `streamed` on. */
  private spool?: Promise<Spool>;
  /** Spool work, one step after another (overlapping writes land in request order). */
  private queue: Promise<unknown> = Promise.resolve();
  private failure?: Error;
  private disposing?: Promise<void>;
  private done!: Promise<void>;
  /** A modification time the client set while writing, applied once the file is stored. */
  modified?: Date;
  private drainWait?: { stream: PassThrough; wait: Promise<void> };

  constructor(
    readonly path: string,
    private readonly opts: UploadOptions,
  ) {
    this.startPut();
    if (opts.seed) this.startSpool(opts.seed);
  }

  private startPut(): void {
    const stream = new PassThrough({ highWaterMark: 1 << 20 });
    // A put dropped before its driver reads the stream must not leave the error unheard.
    stream.on('error', () => undefined);
    const done = this.opts.start(stream);
    done.catch((err: Error) => {
      if (this.stream !== stream) return;
      this.failure ??= err;
      stream.resume();
    });
    this.stream = stream;
    this.done = done;
  }

  /**
   * Spools the rest of the file. While the streamed bytes are still kept in memory, their put is
   * dropped and the whole file is spooled (so any byte can still be rewritten).
   */
  private switchToSpool(): void {
    if (this.spool) return;
    if (this.streamed === 0 || !this.head) {
      this.startSpool();
      return;
    }
    const head = Buffer.concat(this.head);
    const old = this.stream;
    this.startPut();
    old.destroy(new Error('restarted as a spooled upload'));
    this.streamed = 0;
    this.head = undefined;
    this.startSpool();
    void this.serial((sp) => sp.write(0, head)).catch(() => undefined);
  }

  /** The file's size so far (after the writes received before this call). */
  async size(): Promise<number> {
    if (!this.spool) return this.streamed;
    return this.serial(async (sp) => this.streamed + sp.size);
  }

  async write(offset: number, data: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.spool && (offset === this.streamed || this.opts.append)) return this.push(data);
    this.switchToSpool();
    if (offset < this.streamed && !this.opts.append) throw new UnsupportedWrite(`rewriting the first ${this.streamed} bytes, already streamed to the storage, is not supported`);
    await this.serial((sp) => sp.write(this.opts.append ? sp.size : offset - this.streamed, data));
  }

  /** SETSTAT of the size: cuts or extends the part of the file not yet streamed. */
  async truncate(size: number): Promise<void> {
    if (size === (await this.size())) return;
    this.switchToSpool();
    if (size < this.streamed) throw new UnsupportedWrite(`cutting the first ${this.streamed} bytes, already streamed to the storage, is not supported`);
    await this.serial((sp) => sp.truncate(size - this.streamed));
  }

  private startSpool(seed?: () => Promise<Readable>): void {
    if (this.spool) return;
    this.spool = this.opts.spool().then(async (sp) => {
      try {
        if (this.failure) throw this.failure;
        if (seed) await sp.seed(await seed());
        return sp;
      } catch (err) {
        await sp.dispose();
        throw err;
      }
    });
    this.spool.catch((err: Error) => this.abort(err));
  }

  private serial<T>(work: (sp: Spool) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      if (this.failure) throw this.failure;
      return work(await this.spool!);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async push(data: Buffer): Promise<void> {
    this.streamed += data.length;
    if (this.head && this.streamed <= KEEP_HEAD) this.head.push(data);
    else this.head = undefined;
    const stream = this.stream;
    stream.write(data);
    if (stream.writableLength > WRITE_AHEAD) await this.drained(stream);
    if (this.failure) throw this.failure;
  }

  /** One wait for the stream's drain (or end) shared by every write held back meanwhile. */
  private drained(stream: PassThrough): Promise<void> {
    if (this.drainWait?.stream !== stream) {
      const hold = this.opts.readHold;
      hold?.hold();
      const wait = new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('close', done);
          if (this.drainWait?.stream === stream) this.drainWait = undefined;
          hold?.release();
          resolve();
        };
        stream.on('drain', done);
        stream.on('close', done);
      });
      this.drainWait = { stream, wait };
    }
    return this.drainWait.wait;
  }

  /** Ends the file and waits until it is stored under its name. */
  async close(): Promise<void> {
    try {
      if (this.spool) await this.serial((sp) => pipeline(sp.read(), this.stream, { end: false }));
      await this.opts.beforeEnd?.();
      this.stream.end();
    } catch (err) {
      this.abort(err as Error);
    }
    try {
      await this.done;
    } catch (err) {
      throw this.failure ?? err;
    } finally {
      await this.dispose();
    }
  }

  /** Drops the upload: nothing is stored, the spool is removed. */
  abort(err = new Error('the upload was not completed')): void {
    this.failure ??= err;
    this.stream.destroy(err);
    void this.dispose();
  }

  /** Removes the spool once the work on it has stopped. */
  private dispose(): Promise<void> {
    const spool = this.spool;
    if (!spool) return Promise.resolve();
    this.disposing ??= this.queue
      .then(() => spool)
      .then((sp) => sp.dispose())
      .catch(() => undefined);
    return this.disposing;
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
