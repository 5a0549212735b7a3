import type { SFTPWrapper } from 'ssh2';
import type { Logger } from '../../logger.js';
import { answerBytesSent } from '../../util/young-gc.js';
import { internalsOf, type Internals } from './openssh-ext.js';

/** SSH_FXP_DATA and the bytes before a DATA answer's data: length, type, request id, data length. */
const DATA = 103;
export const DATA_HEADER = 13;

/** Free answer buffers kept per session for the next reads (OpenSSH keeps 64 reads in flight). */
const POOL_BYTES = 8 << 20;

/**
 * Sends DATA answers built in buffers of its own (the file read straight into them after a
 * 13-byte header), and takes those buffers back for the next reads once ssh2 has copied them
 * into SSH packets. ssh2's `sftp.data()` copies the data into a new SFTP packet and that into
 * SSH packets: three buffers of the answer's size for every read, which V8 collects in a full
 * garbage collection every few dozen MiB (a fifth of a download's CPU). Here one is left, the
 * SSH packet ssh2 must make.
 *
 * Flow control is ssh2's (`tryWritePayload` in lib/protocol/SFTP.js): an answer goes out only
 * whole, in chunks of the client's packet size, when nothing of ssh2's waits for window and the
 * window takes all of it; answers that do not fit wait here, in order, until the client opens
 * the window (the window's setter is watched). When the window is open but too small for the
 * next answer, that answer is handed to `sftp.data()`, which sends what fits and keeps the
 * rest, exactly as for any answer: no client waits on a window we leave half used. When ssh2's
 * internals are not as expected (logged once), every answer goes through `sftp.data()`.
 */
export class DataSender {
  private readonly internals?: Internals;
  private readonly queue: Array<{ buf: Buffer; len: number }> = [];
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  private closed = false;
  private scheduled = false;

  constructor(
    private readonly sftp: SFTPWrapper,
    log: Logger,
  ) {
    this.internals = internalsOf(sftp, log);
    if (this.internals) this.watchWindow(this.internals);
  }

  /** A buffer for an answer of up to `dataLen` bytes of data; the data goes at DATA_HEADER. */
  take(dataLen: number): Buffer {
    const size = DATA_HEADER + dataLen;
    const list = this.free.get(size);
    const buf = list?.pop();
    if (buf) {
      this.freeBytes -= size;
      return buf;
    }
    return Buffer.allocUnsafeSlow(size);
  }

  /** Gives back a buffer taken and not sent (a failed read). */
  give(buf: Buffer): void {
    if (this.closed || this.freeBytes + buf.length > POOL_BYTES) return;
    let list = this.free.get(buf.length);
    if (!list) this.free.set(buf.length, (list = []));
    list.push(buf);
    this.freeBytes += buf.length;
  }

  /** Sends `dataLen` bytes at DATA_HEADER of `buf` (a buffer of `take`) as the answer to `reqId`. */
  send(reqId: number, buf: Buffer, dataLen: number): void {
    if (this.closed) return;
    answerBytesSent(dataLen);
    const len = DATA_HEADER + dataLen;
    buf.writeUInt32BE(len - 4, 0);
    buf[4] = DATA;
    buf.writeUInt32BE(reqId, 5);
    buf.writeUInt32BE(dataLen, 9);
    if (!this.internals) {
      this.sftp.data(reqId, buf.subarray(DATA_HEADER, len));
      this.give(buf);
      return;
    }
    this.queue.push({ buf, len });
    if (this.queue.length === 1) this.pump();
  }

  /** Drops what waits and the free buffers (the channel closed). */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.free.clear();
    this.freeBytes = 0;
  }

  private pump(): void {
    const { outgoing: out, _protocol: proto } = this.internals!;
    while (this.queue.length > 0) {
      if (this.closed || out.state !== 'open') {
        this.queue.length = 0;
        return;
      }
      // ssh2 waits for window with answers of its own: they go first.
      if (this.internals!._buffer.length > 0 || out.window === 0) return;
      const { buf, len } = this.queue[0]!;
      this.queue.shift();
      if (len > out.window) {
        // ssh2 sends what the window takes and keeps the rest (its copy: the buffer is free again).
        const reqId = buf.readUInt32BE(5);
        this.sftp.data(reqId, buf.subarray(DATA_HEADER, len));
        this.give(buf);
        continue;
      }
      const packetSize = out.packetSize;
      for (let p = 0; p < len; ) {
        const n = Math.min(len - p, packetSize);
        out.window -= n;
        proto.channelData(out.id, p === 0 && n === len ? buf.subarray(0, len) : buf.subarray(p, p + n));
        p += n;
      }
      this.give(buf);
    }
  }

  /**
   * Answers waiting for window go out when the client opens it: ssh2 adds to `outgoing.window`
   * (then sends what it keeps itself); the pump runs right after, on the next tick.
   */
  private watchWindow(internals: Internals): void {
    const out = internals.outgoing;
    let window = out.window;
    Object.defineProperty(out, 'window', {
      configurable: true,
      enumerable: true,
      get: () => window,
      set: (v: number) => {
        const opened = v > window;
        window = v;
        if (opened && this.queue.length > 0 && !this.scheduled) {
          this.scheduled = true;
          process.nextTick(() => {
            this.scheduled = false;
            this.pump();
          });
        }
      },
    });
  }
}
