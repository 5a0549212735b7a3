import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Transform, type TransformCallback } from 'node:stream';

export interface ServedFile {
  /** A path on disk (streamed) or the bytes themselves. */
  file?: string;
  body?: Buffer;
  /** Content-Disposition to send. */
  disposition?: string;
  etag?: string;
}

export interface FileServerOptions {
  /** URL path → file. */
  files?: Record<string, ServedFile>;
  /** URL path → Location (answered with 302). */
  redirects?: Record<string, string>;
  /** Bytes per second per response (0 = as fast as possible). */
  rate?: number;
  host?: string;
}

export interface FileServer {
  base: string;
  port: number;
  /** Range headers of the requests seen, per path ('' for none). */
  ranges: Map<string, string[]>;
  close(): Promise<void>;
}

/** Sends at most `rate` bytes per second. */
class Throttle extends Transform {
  private readonly started = Date.now();
  private sent = 0;

  constructor(private readonly rate: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const piece = chunk.subarray(0, 64 * 1024);
    const rest = chunk.subarray(piece.length);
    this.sent += piece.length;
    const due = this.started + (this.sent / this.rate) * 1000;
    setTimeout(() => {
      this.push(piece);
      if (rest.length > 0) this._transform(rest, _enc, cb);
      else cb();
    }, Math.max(0, due - Date.now()));
  }
}

/** A loopback HTTP server the offline-download tests fetch from: files with Range support, redirects, throttling. */
export async function startFileServer(opts: FileServerOptions): Promise<FileServer> {
  const ranges = new Map<string, string[]>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const seen = ranges.get(url.pathname) ?? [];
    seen.push(req.headers.range ?? '');
    ranges.set(url.pathname, seen);
    const location = opts.redirects?.[url.pathname];
    if (location) {
      res.writeHead(302, { location }).end();
      return;
    }
    const f = opts.files?.[url.pathname];
    if (!f) {
      res.writeHead(404).end('not found');
      return;
    }
    const size = f.body ? f.body.length : statSync(f.file!).size;
    const headers: Record<string, string | number> = { 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (f.disposition) headers['content-disposition'] = f.disposition;
    if (f.etag) headers.etag = f.etag;
    let start = 0;
    let end = size - 1;
    let status = 200;
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (m && (!ifRange || ifRange === f.etag)) {
      start = m[1] ? Number(m[1]) : size - Number(m[2]);
      end = m[1] && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
      if (start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${size}`;
    }
    headers['content-length'] = end - start + 1;
    res.writeHead(status, headers);
    const source = f.body ? Readable.from([f.body.subarray(start, end + 1)]) : createReadStream(f.file!, { start, end });
    const out = opts.rate ? source.pipe(new Throttle(opts.rate)) : source;
    out.pipe(res);
    res.on('close', () => source.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    ranges,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
