import { Readable } from 'node:stream';

/**
 * What a stream of one whole file of this machine's disk says of itself, before it is read: a
 * writer to the local disk may copy the file (one copy in the kernel, no reads and writes through
 * the process) instead of reading the stream, and then calls `copied` with the bytes it copied
 * and destroys the stream. A stream made from such a stream (paced, throttled, limited) is a new
 * object and says nothing, so its bytes go through it; a wrapper that only counts passes the
 * source on and counts what `copied` reports (audit/record.ts countBytes).
 */
export interface FileSource {
  path: string;
  size: number;
  copied(bytes: number): void;
}

const SOURCES = new WeakMap<object, FileSource>();

export function fileSourceOf(stream: object): FileSource | undefined {
  return SOURCES.get(stream);
}

export function withFileSource<T extends object>(stream: T, source: FileSource): T {
  SOURCES.set(stream, source);
  return stream;
}

/**
 * A stream of what `open` gives, opened only when it is first read: a writer that copies the
 * file behind it (above) never opens it. Destroying it destroys what was opened.
 */
export function deferred(open: () => Readable | Promise<Readable>): Readable {
  let inner: Readable | undefined;
  let opening = false;
  const out: Readable = new Readable({
    // Room for a whole chunk of a file reader (512 KiB on Local): not paused at every chunk.
    highWaterMark: 1 << 20,
    read() {
      if (inner) {
        inner.resume();
        return;
      }
      if (opening) return;
      opening = true;
      Promise.resolve()
        .then(open)
        .then(
          (r) => {
            if (out.destroyed) {
              r.destroy();
              return;
            }
            inner = r;
            r.on('data', (chunk: Buffer) => {
              if (!out.push(chunk)) r.pause();
            });
            r.once('end', () => out.push(null));
            r.once('error', (err) => out.destroy(err));
          },
          (err: Error) => out.destroy(err),
        );
    },
    destroy(err, cb) {
      inner?.destroy();
      cb(err);
    },
  });
  // Failing before its reader listens must not raise an unhandled 'error' (the reader still sees it).
  out.on('error', () => undefined);
  return out;
}

/** The whole of the file at `path` (`size` bytes), opened by `open` when first read, as a FileSource. */
export function wholeFile(path: string, size: number, open: () => Promise<Readable>): Readable {
  return withFileSource(deferred(open), { path, size, copied: () => undefined });
}
