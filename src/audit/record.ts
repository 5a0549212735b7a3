import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { EventOp, EventOrigin, OpEvent, OpEvents } from './events.js';
import { AppError } from '../errors.js';
import { deferred, fileSourceOf, withFileSource } from '../util/file-source.js';

/** The `result` of an operation that threw: its kind, or `Internal` for an untyped error. */
export const resultOf = (err: unknown): OpEvent['result'] => (err instanceof AppError ? err.kind : 'Internal');

/** What an event adds to who, where and what: the target of a move or copy, the bytes moved. */
export interface EventExtra {
  dst?: string;
  bytes?: number;
}

/**
 * Called once by a front when a download it was handed ends: the bytes it actually sent (a cut
 * transfer reports what went out), and the error if the transfer failed. Later calls do nothing.
 */
export type TransferDone = (bytes: number, err?: unknown) => void;

/**
 * The view's half of "every operation is an event": one principal's name and one origin bound
 * to the process's event stream. The view calls it once per operation; fronts never do.
 */
export class Recorder {
  constructor(
    private readonly events: OpEvents,
    private readonly user: string,
    private readonly origin: EventOrigin,
  ) {}

  emit(op: EventOp, path: string, result: OpEvent['result'], extra: EventExtra = {}): void {
    const e: OpEvent = { time: Date.now(), user: this.user, front: this.origin.front, op, path, result };
    if (extra.dst !== undefined) e.dst_path = extra.dst;
    if (extra.bytes) e.bytes = extra.bytes;
    if (this.origin.ip) e.ip = this.origin.ip;
    if (this.origin.requestId) e.request_id = this.origin.requestId;
    this.events.emit(e);
  }

  /** Runs one operation and emits its event: `ok`, or the kind it threw (then rethrows). */
  async run<T>(op: EventOp, path: string, fn: () => Promise<T> | T, extra: EventExtra | ((value: T) => EventExtra) = {}): Promise<T> {
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      this.emit(op, path, resultOf(err), typeof extra === 'function' ? {} : extra);
      throw err;
    }
    this.emit(op, path, 'ok', typeof extra === 'function' ? extra(value) : extra);
    return value;
  }

  /**
   * One operation on several objects (a batch move, copy, remove or extract): one event per
   * `[path, dst]` pair, all `ok`, or all with the kind the operation threw.
   */
  async runEach<T>(op: EventOp, targets: Array<[string, string | undefined]>, fn: () => Promise<T>): Promise<T> {
    const emitAll = (result: OpEvent['result']) => {
      for (const [path, dst] of targets) this.emit(op, path, result, { dst });
    };
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      emitAll(resultOf(err));
      throw err;
    }
    emitAll('ok');
    return value;
  }

  /**
   * A download of `path` handed to a front (`inner`: an archive entry's path, as `dst_path`): its
   * event is emitted when the front reports the end.
   */
  transfer(path: string, inner?: string): TransferDone {
    let done = false;
    return (bytes, err) => {
      if (done) return;
      done = true;
      this.emit('download', path, err === undefined ? 'ok' : resultOf(err), { bytes, dst: inner });
    };
  }

  /** A stream of the bytes of a download that emits its event once, when it ends, errs or is closed. */
  counted(path: string, stream: Readable): Readable {
    return countBytes(stream, this.transfer(path));
  }
}

const ignoreError = () => {};

/**
 * Passes `stream` on unchanged while counting its bytes; calls `done` once when the stream has
 * been read to its end, failed, or was destroyed by its reader (a cut transfer).
 */
export function countBytes(stream: Readable, done: TransferDone): Readable {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  stream.once('error', (err) => {
    done(bytes, err);
    counter.destroy(err);
  });
  // A body that fails before its reader listens (a client gone while the upload's checks run) must
  // not raise an unhandled 'error': the reader still sees it, an errored stream ends its reads with it.
  counter.on('error', ignoreError);
  const closed = () => {
    done(bytes);
    if (!stream.destroyed) stream.destroy();
  };
  counter.once('end', () => done(bytes));
  counter.once('close', closed);
  const source = fileSourceOf(stream);
  if (!source) return stream.pipe(counter);
  // A file that a writer may copy rather than read: piped once read, a copy counted as reported.
  const out = deferred(() => stream.pipe(counter));
  out.once('close', closed);
  return withFileSource(out, { ...source, copied: (n) => {
    bytes = n;
    source.copied(n);
  } });
}
