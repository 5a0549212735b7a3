// OpenList's chunked upload as a client drives it: init, one PUT per chunk, complete, one chunk
// at a time on one keep-alive connection (as the web UI, web/src/chunked-upload.ts). Each chunk
// is read into one buffer and sent whole, as a browser sends a Blob slice (and so that the Node
// client, unlike curl for the single PUT, does not pipe 1 MiB reads through a stream: under load
// that made the client, not the server, the bottleneck); the next chunk is read while one is sent.
// Used by the `write` area's chunked row.

import { open, type FileHandle } from 'node:fs/promises';
import http from 'node:http';

interface Answer {
  status: number;
  json: { code?: number; message?: string; data?: any };
}

/** Keep-alive, one connection: every chunk on the same socket, as a browser does. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function call(url: string, method: string, headers: Record<string, string>, body?: Buffer, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { ...headers, 'content-length': String(body?.length ?? 0) }, signal }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        } catch {
          reject(new Error(`${method} ${url}: HTTP ${res.statusCode}, not JSON: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ok = (what: string, a: Answer) => {
  if (a.status !== 200 || a.json.code !== 200) throw new Error(`${what}: HTTP ${a.status}, code ${a.json.code}, message ${JSON.stringify(a.json.message)}`);
  return a.json.data;
};

/** Uploads `file` (`size` bytes) to `virtualPath` in chunks of `chunkSize`; returns the seconds from init to complete. */
export async function chunkedUpload(base: string, token: string, file: string, size: number, virtualPath: string, chunkSize: number, signal?: AbortSignal): Promise<number> {
  const auth = { authorization: token };
  const t0 = performance.now();
  const init = ok('multipart/init', await call(`${base}/api/fs/multipart/init`, 'POST', { ...auth, 'file-path': encodeURIComponent(virtualPath), 'x-file-size': String(size), 'x-chunk-size': String(chunkSize) }, undefined, signal));
  const id = init.upload_id as string;
  const total = Math.ceil(size / chunkSize);
  // Two buffers: chunk i + 1 is read while chunk i is sent, as a browser reads a Blob slice
  // from the file while it sends it (no pause between two chunks to read the next one).
  const bufs = [Buffer.allocUnsafe(Math.min(size, chunkSize)), Buffer.allocUnsafe(Math.min(size, chunkSize))];
  let fh: FileHandle | undefined;
  let reading: Promise<Buffer> | undefined;
  try {
    const file_ = (fh = await open(file, 'r'));
    const readChunk = async (i: number): Promise<Buffer> => {
      const start = i * chunkSize;
      const len = Math.min(chunkSize, size - start);
      const buf = bufs[i % 2]!;
      const { bytesRead } = await file_.read(buf, 0, len, start);
      if (bytesRead !== len) throw new Error(`${file}: read ${bytesRead} of ${len} bytes at ${start}`);
      return buf.subarray(0, len);
    };
    const readAhead = (i: number) => {
      const p = readChunk(i);
      // A failed read is seen when its chunk is due (or below), not as an unhandled rejection.
      p.catch(() => undefined);
      return p;
    };
    reading = readAhead(0);
    for (let i = 0; i < total; i++) {
      const body = await reading;
      reading = i + 1 < total ? readAhead(i + 1) : undefined;
      ok(`multipart/chunk ${i}`, await call(`${base}/api/fs/multipart/chunk`, 'PUT', { ...auth, 'x-upload-id': id, 'x-chunk-index': String(i) }, body, signal));
    }
  } finally {
    await reading?.catch(() => undefined);
    await fh?.close();
  }
  const done = ok('multipart/complete', await call(`${base}/api/fs/multipart/complete`, 'POST', { ...auth, 'x-upload-id': id }, undefined, signal));
  if (done.state !== 'completed') throw new Error(`multipart/complete answered state ${done.state}`);
  return (performance.now() - t0) / 1000;
}
