import { Readable } from 'node:stream';

/**
 * Cuts one stream into consecutive part streams of `partSize` bytes (the last one shorter), one
 * after the other, with back-pressure: a part pulls from the source only as it is read.
 */
export class PartCutter {
  private readonly source: AsyncIterator<Buffer>;
  private pending?: Buffer;
  private ended = false;

  constructor(
    stream: Readable,
    private readonly partSize: number,
  ) {
    this.source = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async next(): Promise<Buffer | undefined> {
    if (this.pending) {
      const b = this.pending;
      this.pending = undefined;
      return b;
    }
    if (this.ended) return undefined;
    const r = await this.source.next();
    if (r.done) {
      this.ended = true;
      return undefined;
    }
    return r.value;
  }

  /** True when the source has no byte left (waits for the next chunk to know). */
  async done(): Promise<boolean> {
    if (this.pending && this.pending.length > 0) return false;
    const b = await this.next();
    if (b === undefined) return true;
    this.pending = b;
    return b.length === 0 ? this.done() : false;
  }

  /** The next part: at most partSize bytes of the source. */
  part(): Readable {
    const self = this;
    async function* bytes(): AsyncGenerator<Buffer> {
      let left = self.partSize;
      while (left > 0) {
        const b = await self.next();
        if (b === undefined) return;
        if (b.length > left) {
          self.pending = b.subarray(left);
          yield b.subarray(0, left);
          return;
        }
        left -= b.length;
        if (b.length > 0) yield b;
      }
    }
    return Readable.from(bytes(), { objectMode: false });
  }

  /** Stops reading the source (after a failure). */
  async abort(err: Error): Promise<void> {
    await this.source.throw?.(err).catch(() => undefined);
  }
}
