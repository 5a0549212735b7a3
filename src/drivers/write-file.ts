import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { bodyBytesReceived } from '../util/young-gc.js';
import { UploadIntegrityError, type UploadStream } from './types.js';

const HASHES = ['md5', 'sha1', 'sha256'] as const;

/** Bytes of an upload gathered before they go to disk in one writev (not one write per 64 KiB socket chunk). */
const WRITE_BUFFER = 1 << 20;

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
 * The body's chunks are gathered into writes of about 1 MiB, issued straight on the file handle
 * (no Transform or write stream in between, so nothing per chunk but the checks), and the
 * chunks already written are collected early (util/young-gc.ts): memory stays flat.
 */
export async function writeUploadTo(file: string, up: UploadStream): Promise<number> {
  const check = new UploadCheck(up);
  const stream = up.stream;
  const signal = up.signal;
  const abort = () => stream.destroy(abortError(signal!));
  if (signal?.aborted) throw abortError(signal);
  signal?.addEventListener('abort', abort, { once: true });
  // Until the loop below listens, a failing body must not raise an unhandled 'error' (the loop
  // still sees the error: a destroyed stream ends its iteration with it).
  stream.on('error', ignore);
  let fh: FileHandle | undefined;
  // One write in flight while the next batch is gathered, as a write stream would.
  let writing: Promise<void> | undefined;
  try {
    const out = (fh = await open(file, 'wx'));
    let batch: Buffer[] = [];
    let batched = 0;
    const flush = async () => {
      await writing;
      writing = writeAll(out, batch, batched);
      // Its failure is seen at the next await of `writing`, not as an unhandled rejection meanwhile.
      writing.catch(() => {});
      batch = [];
      batched = 0;
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const err = check.add(chunk);
      if (err) throw err;
      bodyBytesReceived(chunk.length);
      batch.push(chunk);
      batched += chunk.length;
      if (batched >= WRITE_BUFFER) await flush();
    }
    const err = check.finish();
    if (err) throw err;
    if (batched > 0) await flush();
    await writing;
    return check.bytes;
  } catch (err) {
    // A body still arriving is cut; one that ended (shorter than declared, a hash mismatch) is
    // left alone: destroying a request that ended closes its socket, and with it the answer.
    if (!stream.readableEnded) stream.destroy();
    await writing?.catch(() => {});
    throw signal?.aborted ? abortError(signal) : err;
  } finally {
    signal?.removeEventListener('abort', abort);
    stream.off('error', ignore);
    await fh?.close();
  }
}

const ignore = () => {};

/** Writes `buffers` (`total` bytes) at the file position, going on after a short write. */
async function writeAll(fh: FileHandle, buffers: Buffer[], total: number): Promise<void> {
  const { bytesWritten } = await fh.writev(buffers);
  if (bytesWritten === total) return;
  const rest = Buffer.concat(buffers).subarray(bytesWritten);
  for (let done = 0; done < rest.length; done += (await fh.write(rest, done)).bytesWritten);
}

/** The error a `pipeline` with a signal rejects with when aborted. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** Reads a finished file once, checking its size and declared hashes (as a put of it would). */
export async function checkFile(file: string, up: Pick<UploadStream, 'size' | 'hashes' | 'onProgress'>): Promise<void> {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  await pipeline(createReadStream(file, { highWaterMark: WRITE_BUFFER }), new CheckedStream(up), sink);
}
