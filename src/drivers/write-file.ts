import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { type Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { bodiesReceiving, bodyBytesReceived, bodyReceiving } from '../util/young-gc.js';
import { UploadIntegrityError, type UploadStream } from './types.js';

const HASHES = ['md5', 'sha1', 'sha256'] as const;

/** Bytes of an upload gathered before they go to disk in one writev (not one write per 64 KiB socket chunk). */
const WRITE_BUFFER = 1 << 20;
/**
 * The batch within the body's last WRITE_BUFFER bytes, when its size is known: what is still to
 * be written once the last byte arrived (the answer waits for it) is at most this much.
 */
const TAIL_BUFFER = 1 << 18;

/** The least a batch holds however many bodies arrive at once. */
const MIN_BATCH = 128 * 1024;
/**
 * The batch of one of the bodies being received: WRITE_BUFFER shared among them, so that what
 * they hold together stays about the same (util/young-gc.ts, bodiesReceiving).
 */
const sharedBatch = () => Math.max(MIN_BATCH, Math.floor(WRITE_BUFFER / Math.max(1, bodiesReceiving())));

/** Counts bytes, enforces the declared size and computes the declared hashes. */
class UploadCheck {
  bytes = 0;
  private readonly hashers: Array<[string, Hash, string]>;

  constructor(private readonly declared: Pick<UploadStream, 'size' | 'hashes' | 'onProgress'>) {
    this.hashers = HASHES.filter((h) => declared.hashes?.[h]).map((h) => [h, createHash(h), declared.hashes![h]!.toLowerCase()]);
  }

  /** Takes the next chunk; an error when it goes past the declared size. */
  add(chunk: Buffer): UploadIntegrityError | undefined {
    this.bytes += chunk.length;
    if (this.declared.size >= 0 && this.bytes > this.declared.size) return new UploadIntegrityError(`body is longer than the declared size ${this.declared.size}`);
    for (const [, h] of this.hashers) h.update(chunk);
    this.declared.onProgress?.(this.bytes);
    return undefined;
  }

  /** At the end of the body: an error when the size or a hash differs from the declared one. */
  finish(): UploadIntegrityError | undefined {
    if (this.declared.size >= 0 && this.bytes !== this.declared.size) {
      return new UploadIntegrityError(`body is shorter than the declared size: got ${this.bytes} of ${this.declared.size} bytes`);
    }
    for (const [name, h, want] of this.hashers) {
      const got = h.digest('hex');
      if (got !== want) return new UploadIntegrityError(`${name} mismatch: declared ${want}, got ${got}`);
    }
    return undefined;
  }
}

/** Counts bytes, enforces the declared size and computes the declared hashes while passing data on. */
export class CheckedStream extends Transform {
  private readonly check: UploadCheck;

  constructor(declared: Pick<UploadStream, 'size' | 'hashes' | 'onProgress'>) {
    super();
    this.check = new UploadCheck(declared);
  }

  get bytes(): number {
    return this.check.bytes;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const err = this.check.add(chunk);
    if (err) cb(err);
    else cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    cb(this.check.finish());
  }
}

/**
 * Streams an upload into `file` (created new), checking size and hashes; returns the byte count.
 * The body goes to disk through writeBody (writes of about 1 MiB, memory kept flat).
 */
export async function writeUploadTo(file: string, up: UploadStream): Promise<number> {
  const check = new UploadCheck(up);
  // While the file is opened, a failing body must not raise an unhandled 'error'.
  up.stream.on('error', ignore);
  let fh: FileHandle | undefined;
  try {
    if (up.signal?.aborted) throw abortError(up.signal);
    fh = await open(file, 'wx');
    await writeBody(fh, up.stream, { size: up.size >= 0 ? up.size : undefined, take: (chunk) => check.add(chunk), end: () => check.finish(), signal: up.signal });
    return check.bytes;
  } catch (err) {
    // Cut when the file could not be opened, as writeBody cuts it when the write fails.
    if (!up.stream.readableEnded) up.stream.destroy();
    throw err;
  } finally {
    up.stream.off('error', ignore);
    await fh?.close();
  }
}

/** What writeBody does besides writing. */
export interface BodyWrite {
  /** Where the first byte goes (a positional write, the file position untouched); the file position when absent. */
  position?: number;
  /** The bytes the body should hold, when known: its last MiB is written in smaller batches (TAIL_BUFFER). */
  size?: number;
  /** Sees each chunk before it is written; an error stops the write with it. */
  take?(chunk: Buffer): Error | undefined;
  /** At the end of the body, before its last bytes are written: an error stops the write with it. */
  end?(): Error | undefined;
  signal?: AbortSignal;
  /** Kept up to date: the bytes of the body that are on disk (when the write fails too). */
  progress?: { written: number };
}

/**
 * Writes a request body into an open file. The body's chunks are gathered into writes of about
 * 1 MiB (one writev, not one write per 64 KiB socket chunk; that MiB shared among the bodies
 * arriving at once, see sharedBatch; of 256 KiB in the last MiB of a body of known size, so that
 * little is left to write after its last byte), issued straight on the file handle
 * with one in flight while the next batch is gathered (no Transform or write stream in between,
 * so nothing per chunk but `take`), and the chunks already written are collected early
 * (util/young-gc.ts): memory stays flat. On failure (the body cut, `take` or `end` refusing, a
 * write failing), a body still arriving is destroyed; the batch gathered but not yet written is
 * dropped, so `progress.written` counts exactly the bytes on disk.
 */
export async function writeBody(fh: FileHandle, stream: Readable, opts: BodyWrite = {}): Promise<number> {
  const { signal } = opts;
  const progress = opts.progress ?? { written: 0 };
  const abort = () => stream.destroy(abortError(signal!));
  if (signal?.aborted) throw abortError(signal);
  signal?.addEventListener('abort', abort, { once: true });
  // Until the loop below listens, a failing body must not raise an unhandled 'error' (the loop
  // still sees the error: a destroyed stream ends its iteration with it).
  stream.on('error', ignore);
  const received = bodyReceiving();
  let position = opts.position;
  let writing: Promise<void> | undefined;
  let batch: Buffer[] = [];
  let batched = 0;
  let seen = 0;
  // Past this many bytes, batches are TAIL_BUFFER (never, when the size is not known).
  const tailFrom = opts.size === undefined ? Infinity : Math.max(0, opts.size - WRITE_BUFFER);
  /**
   * Writes the batch once the write in flight is done; the `last` one, with positional writes,
   * alongside it (at its own offset). Its bytes count as written once those before them are.
   */
  const flush = async (last = false) => {
    const before = writing;
    if (!last || position === undefined) await before;
    const bytes = batched;
    const write = writeAll(fh, batch, bytes, position);
    writing = Promise.allSettled([before, write]).then(([a, b]) => {
      if (a.status === 'rejected') throw a.reason;
      if (b.status === 'rejected') throw b.reason;
      progress.written += bytes;
    });
    // Its failure is seen at the next await of `writing`, not as an unhandled rejection meanwhile.
    writing.catch(() => {});
    if (position !== undefined) position += bytes;
    batch = [];
    batched = 0;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const err = opts.take?.(chunk);
      if (err) throw err;
      bodyBytesReceived(chunk.length);
      batch.push(chunk);
      batched += chunk.length;
      seen += chunk.length;
      if (batched >= Math.min(seen > tailFrom ? TAIL_BUFFER : WRITE_BUFFER, sharedBatch())) await flush();
    }
    const err = opts.end?.();
    if (err) throw err;
    // The last batch: at its own offset, it need not wait for the write in flight (an answer
    // waits for both).
    if (batched > 0) await flush(true);
    await writing;
    return progress.written;
  } catch (err) {
    // A body still arriving is cut; one that ended (shorter than declared, a hash mismatch) is
    // left alone: destroying a request that ended closes its socket, and with it the answer.
    if (!stream.readableEnded) stream.destroy();
    await writing?.catch(() => {});
    throw signal?.aborted ? abortError(signal) : err;
  } finally {
    received();
    signal?.removeEventListener('abort', abort);
    stream.off('error', ignore);
  }
}

const ignore = () => {};

/**
 * Writes `buffers` (`total` bytes) at `position` (or the file position), going on after a short
 * write.
 */
async function writeAll(fh: FileHandle, buffers: Buffer[], total: number, position?: number): Promise<void> {
  const { bytesWritten } = await fh.writev(buffers, position);
  if (bytesWritten === total) return;
  const rest = Buffer.concat(buffers).subarray(bytesWritten);
  for (let done = 0; done < rest.length; ) {
    done += (await fh.write(rest, done, rest.length - done, position === undefined ? null : position + bytesWritten + done)).bytesWritten;
  }
}

/** The error a `pipeline` with a signal rejects with when aborted. */
export function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** Reads a finished file once, checking its size and declared hashes (as a put of it would). */
export async function checkFile(file: string, up: Pick<UploadStream, 'size' | 'hashes' | 'onProgress'>): Promise<void> {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  await pipeline(createReadStream(file, { highWaterMark: WRITE_BUFFER }), new CheckedStream(up), sink);
}
