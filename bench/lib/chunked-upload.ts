// OpenList's chunked upload as a client drives it: init, one PUT per chunk (read from the file
// range, streamed), complete. Used by the `write` area's chunked row.

import { createReadStream } from 'node:fs';
import http from 'node:http';

interface Answer {
  status: number;
  json: { code?: number; message?: string; data?: any };
}

function call(url: string, method: string, headers: Record<string, string>, body?: { file: string; start: number; end: number }, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const len = body ? body.end - body.start + 1 : 0;
    const req = http.request(url, { method, headers: { ...headers, 'content-length': String(len) }, signal }, (res) => {
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
    if (body) createReadStream(body.file, { start: body.start, end: body.end, highWaterMark: 1 << 20 }).pipe(req);
    else req.end();
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
  for (let i = 0; i < total; i++) {
    const range = { file, start: i * chunkSize, end: Math.min(size, (i + 1) * chunkSize) - 1 };
    ok(`multipart/chunk ${i}`, await call(`${base}/api/fs/multipart/chunk`, 'PUT', { ...auth, 'x-upload-id': id, 'x-chunk-index': String(i) }, range, signal));
  }
  const done = ok('multipart/complete', await call(`${base}/api/fs/multipart/complete`, 'POST', { ...auth, 'x-upload-id': id }, undefined, signal));
  if (done.state !== 'completed') throw new Error(`multipart/complete answered state ${done.state}`);
  return (performance.now() - t0) / 1000;
}
