import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Link } from '../drivers/types.js';
import { TooLarge, Unsupported, Upstream } from '../errors.js';
import type { LinkFetcher } from '../net/link-fetch.js';

/** A file to make a thumbnail of, read through its driver's link by byte ranges (inclusive). */
export interface Source {
  size: number;
  /** The same bytes as a local file (the Local driver): tools read it directly. */
  path?: string;
  open(start: number, end: number, signal?: AbortSignal): Promise<Readable>;
}

/** Counts of what thumbnails read from storages (tests and the benchmark look at them). */
export interface ReadCounter {
  opens: number;
  bytes: number;
}

/** A driver's link as a Source: its local reader, or its URL asked with Range (through the SSRF guard). */
export function sourceOf(link: Link, size: number, links: LinkFetcher, count: ReadCounter): Source {
  const counted = (s: Readable) => {
    count.opens++;
    s.on('data', (b: Buffer) => (count.bytes += b.length));
    return s;
  };
  if (link.file) {
    const file = link.file;
    return { size: file.size, path: file.path, open: async (start, end) => counted(await file.open(start, end)) };
  }
  if (!link.url) throw new Unsupported('the storage gave no way to read the file');
  return {
    size,
    open: async (start, end, signal) => {
      const res = await links.open(link, { headers: { range: `bytes=${start}-${end}` }, signal });
      const status = res.statusCode ?? 502;
      if (status >= 400) {
        res.resume();
        throw new Upstream(`the storage answered ${status}`);
      }
      // A server that ignores Range answers the whole file: keep only the bytes asked for.
      return counted(status === 206 ? res : res.pipe(slice(start, end - start + 1)));
    },
  };
}

/** Passes `length` bytes after skipping `skip`, then ends. */
function slice(skip: number, length: number): Transform {
  let left = skip;
  let keep = length;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let b = chunk;
      if (left > 0) {
        const cut = Math.min(left, b.length);
        left -= cut;
        b = b.subarray(cut);
      }
      if (keep > 0 && b.length > 0) {
        const take = b.subarray(0, keep);
        keep -= take.length;
        this.push(take);
      }
      if (keep === 0) this.push(null);
      done();
    },
  });
}

/** The whole of a source in memory, refused past `max` bytes (images and PDFs are decoded whole). */
export async function readWhole(src: Source, max: number, signal?: AbortSignal): Promise<Buffer> {
  if (src.size > max) throw new TooLarge(`the file is larger than the thumbnail source limit (${max} bytes)`);
  if (src.size === 0) return Buffer.alloc(0);
  const stream = await src.open(0, src.size - 1, signal);
  const parts: Buffer[] = [];
  let total = 0;
  for await (const b of stream as AsyncIterable<Buffer>) {
    total += b.length;
    if (total > max) {
      stream.destroy();
      throw new TooLarge(`the file is larger than the thumbnail source limit (${max} bytes)`);
    }
    parts.push(b);
  }
  return Buffer.concat(parts, total);
}

/**
 * An HTTP server on loopback through which ffmpeg reads sources by ranges: each source gets an
 * unguessable URL for as long as its thumbnail is being made, so a video is read only where
 * ffmpeg seeks (its index and one frame), never whole. Started on first use.
 */
export class RangeServer {
  private server?: Promise<{ server: Server; port: number }>;
  private readonly sources = new Map<string, { src: Source; signal?: AbortSignal }>();

  /** A URL serving `src` until `release` is called. */
  async expose(src: Source, signal?: AbortSignal): Promise<{ url: string; release: () => void }> {
    const { port } = await this.start();
    const token = randomBytes(16).toString('hex');
    this.sources.set(token, { src, signal });
    return { url: `http://127.0.0.1:${port}/${token}`, release: () => this.sources.delete(token) };
  }

  private start(): Promise<{ server: Server; port: number }> {
    this.server ??= new Promise((resolve, reject) => {
      const server = createServer((req, res) => void this.answer(req, res));
      server.keepAliveTimeout = 5_000;
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.unref();
        resolve({ server, port: (server.address() as AddressInfo).port });
      });
    });
    return this.server;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const entry = this.sources.get((req.url ?? '').slice(1));
    if (!entry || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404).end();
      return;
    }
    const { src, signal } = entry;
    const range = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ''));
    let start = 0;
    let end = src.size - 1;
    if (range && (range[1] !== '' || range[2] !== '')) {
      if (range[1] === '') start = Math.max(0, src.size - Number(range[2]));
      else {
        start = Number(range[1]);
        if (range[2] !== '') end = Math.min(end, Number(range[2]));
      }
      if (start >= src.size || start > end) {
        res.writeHead(416, { 'content-range': `bytes */${src.size}` }).end();
        return;
      }
    }
    const headers = { 'accept-ranges': 'bytes', 'content-length': String(end - start + 1), 'content-type': 'application/octet-stream' };
    if (range) res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${src.size}` });
    else res.writeHead(200, headers);
    if (req.method === 'HEAD' || src.size === 0) {
      res.end();
      return;
    }
    try {
      // ffmpeg drops a connection when it seeks elsewhere: the driver's stream is closed with it.
      await pipeline(await src.open(start, end, signal), res);
    } catch {
      res.destroy();
    }
  }

  async close(): Promise<void> {
    if (!this.server) return;
    const { server } = await this.server;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

