// The `write` area's floor for uploads through Node: a bare node:http server (no framework, no
// database, no authentication) that writes request bodies to files the way Atrium does (batches
// of about 1 MiB, one write in flight). Run as a process of its own:
//   node --import tsx bench/lib/node-floor-server.ts <root> <port>
//   PUT /<name>                        the body becomes <root>/<name> (created new)
//   PUT /<name> + X-Chunk-Index: i     the body goes into <root>/<name> at i × X-Chunk-Size
//                + X-Chunk-Size: n      (created when missing), as Atrium's staging file
// Answers 200 with a small JSON body, 400 when the body is not Content-Length bytes. What it
// costs per request is what any Node server pays; what Atrium adds is measured against it.

import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const BATCH = 1 << 20;
const [root, portText] = process.argv.slice(2);
if (!root || !portText) {
  console.error('usage: node-floor-server.ts <root> <port>');
  process.exit(2);
}

async function writeBody(fh: FileHandle, req: http.IncomingMessage, position: number | null): Promise<number> {
  let batch: Buffer[] = [];
  let batched = 0;
  let total = 0;
  let writing: Promise<unknown> = Promise.resolve();
  for await (const chunk of req as AsyncIterable<Buffer>) {
    batch.push(chunk);
    batched += chunk.length;
    total += chunk.length;
    if (batched >= BATCH) {
      await writing;
      writing = fh.writev(batch, position ?? undefined);
      if (position !== null) position += batched;
      batch = [];
      batched = 0;
    }
  }
  await writing;
  if (batched > 0) await fh.writev(batch, position ?? undefined);
  return total;
}

const answer = (res: http.ServerResponse, status: number, data: unknown) => {
  const body = JSON.stringify({ code: status, message: status === 200 ? 'success' : String(data), data: status === 200 ? data : null });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

const server = http.createServer((req, res) => {
  void (async () => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://floor').pathname).replace(/^\/+/, '');
    const file = path.join(root, name);
    if (req.method !== 'PUT' || !name || !file.startsWith(path.join(root, path.sep))) return answer(res, 400, 'PUT /<name> only');
    const declared = Number(req.headers['content-length']);
    const index = req.headers['x-chunk-index'];
    let fh: FileHandle | undefined;
    try {
      let position: number | null = null;
      if (index === undefined) fh = await open(file, 'wx');
      else {
        position = Number(index) * Number(req.headers['x-chunk-size']);
        if (!Number.isSafeInteger(position) || position < 0) return answer(res, 400, 'bad X-Chunk-Index or X-Chunk-Size');
        fh = await open(file, constants.O_RDWR | constants.O_CREAT, 0o644);
      }
      const got = await writeBody(fh, req, position);
      await fh.close();
      fh = undefined;
      if (got !== declared) return answer(res, 400, `got ${got} of ${declared} bytes`);
      answer(res, 200, { bytes: got, ...(index === undefined ? {} : { index: Number(index) }) });
    } catch (err) {
      await fh?.close().catch(() => undefined);
      req.resume();
      answer(res, 400, (err as Error).message);
    }
  })();
});
server.listen(Number(portText), '127.0.0.1', () => console.log(`listening on ${portText}`));
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => server.close(() => process.exit(0)));
