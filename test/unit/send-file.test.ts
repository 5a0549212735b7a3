import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FileSource, sendFile } from '../../src/http/send-file.js';

const MTIME = new Date('2024-03-05T06:07:08.500Z');
const LAST_MODIFIED = 'Tue, 05 Mar 2024 06:07:08 GMT';
const UTF8_NAME = 'résumé 报告.pdf';
const BIG = 50 * 1024 * 1024;

interface Opened {
  file: string;
  start: number;
  end: number;
  stream: ReturnType<typeof createReadStream>;
  closed: Promise<unknown>;
}

let dir: string;
let app: FastifyInstance;
let base: string;
let data: Buffer;
/** Several read buffers long, so that reused buffers carry different bytes in turn. */
let large: Buffer;
let opened: Opened[] = [];
let stalled: Readable | undefined;

function fileSource(name: string, extra: Partial<FileSource> = {}): FileSource {
  const full = path.join(dir, name);
  const st = statSync(full);
  return {
    name,
    size: st.size,
    modified: st.mtime,
    open(start, end) {
      const stream = createReadStream(full, { start, end });
      opened.push({ file: name, start, end, stream, closed: once(stream, 'close') });
      return stream;
    },
    ...extra,
  };
}

/** A source of `size` bytes whose stream is built by `make` (for failure cases). */
function fakeSource(size: number, make: () => Readable | Promise<Readable>): FileSource {
  return { name: 'fake.bin', size, modified: MTIME, open: make };
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(base + url, { method, headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

const defaultEtag = (name: string) => {
  const st = statSync(path.join(dir, name));
  return `"${st.mtime.getTime().toString(16)}-${st.size.toString(16)}"`;
};

/** The raw bytes of a response on its own connection (Connection: close), split at the head. */
async function rawGet(url: string): Promise<{ head: string; body: Buffer }> {
  const { port } = app.server.address() as AddressInfo;
  const sock = net.connect(port, '127.0.0.1');
  sock.write(`GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  for await (const c of sock) chunks.push(c as Buffer);
  const all = Buffer.concat(chunks);
  const split = all.indexOf('\r\n\r\n');
  return { head: all.subarray(0, split).toString('latin1'), body: all.subarray(split + 4) };
}

/** Resolves to 'closed' when the stream emits 'close', or 'timeout' after 5 s. */
function closedWithin(stream: Readable): Promise<string> {
  const closed = stream.closed ? Promise.resolve() : once(stream, 'close');
  return Promise.race([closed.then(() => 'closed'), new Promise<string>((r) => setTimeout(() => r('timeout'), 5000))]);
}

/** Starts a download, reads at least `bytes`, then drops the connection. */
function abortAfter(url: string, bytes: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = http.get(base + url, { agent: false }, (res) => {
      let n = 0;
      res.on('data', (chunk: Buffer) => {
        n += chunk.length;
        if (n >= bytes && !req.destroyed) {
          req.destroy();
          resolve(n);
        }
      });
      res.on('error', () => {});
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
  });
}

/** Splits a multipart/byteranges body into its parts, checking the framing byte by byte. */
function parseMultipart(body: Buffer, boundary: string): Array<{ headers: Record<string, string>; data: Buffer }> {
  const text = body.toString('latin1');
  expect(text.startsWith(`--${boundary}\r\n`)).toBe(true);
  expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
  const inner = text.slice(`--${boundary}\r\n`.length, -`\r\n--${boundary}--\r\n`.length);
  return inner.split(`\r\n--${boundary}\r\n`).map((part) => {
    const split = part.indexOf('\r\n\r\n');
    const headers = Object.fromEntries(
      part
        .slice(0, split)
        .split('\r\n')
        .map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
    );
    return { headers, data: Buffer.from(part.slice(split + 4), 'latin1') };
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-sendfile-'));
  data = randomBytes(100_000);
  writeFileSync(path.join(dir, 'data.bin'), data);
  writeFileSync(path.join(dir, UTF8_NAME), data.subarray(0, 1000));
  writeFileSync(path.join(dir, 'notes.txt'), 'hello\n');
  writeFileSync(path.join(dir, 'empty.bin'), '');
  large = randomBytes(3 * 1024 * 1024 + 12345);
  writeFileSync(path.join(dir, 'large.bin'), large);
  writeFileSync(path.join(dir, 'big.bin'), '');
  truncateSync(path.join(dir, 'big.bin'), BIG); // sparse
  for (const f of ['data.bin', UTF8_NAME, 'notes.txt', 'empty.bin', 'big.bin', 'large.bin']) utimesSync(path.join(dir, f), MTIME, MTIME);

  app = Fastify();
  app.addHook('onRequest', async (_req, reply) => {
    reply.header('x-preset', 'kept');
  });
  app.get('/file/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    const q = req.query as { inline?: string; cache?: string; type?: string; etag?: string };
    const src = fileSource(name, {
      ...(q.type ? { contentType: q.type } : {}),
      ...(q.etag ? { etag: q.etag } : {}),
    });
    return sendFile(req, reply, src, { disposition: q.inline ? 'inline' : undefined, cacheControl: q.cache });
  });
  // The same files read directly (localPath): `open` must not be used.
  app.get('/local/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    const src = fileSource(name, { localPath: path.join(dir, name) });
    return sendFile(req, reply, { ...src, open: () => Promise.reject(new Error('open used for a local file')) });
  });
  app.get('/local-short/:name', async (req, reply) => {
    // Declares more bytes than the file holds (the file shrank after its stat).
    const { name } = req.params as { name: string };
    const src = fileSource(name, { localPath: path.join(dir, name) });
    return sendFile(req, reply, { ...src, size: src.size + 5000 });
  });
  app.get('/local-missing', (req, reply) =>
    sendFile(req, reply, { ...fakeSource(10, () => Readable.from([])), localPath: path.join(dir, 'does-not-exist') }),
  );
  app.get('/broken/error', (req, reply) => {
    // 100 bytes, then the source fails after the headers went out.
    const src = fakeSource(1000, () => {
      let sent = false;
      return new Readable({
        read() {
          if (!sent) {
            sent = true;
            this.push(Buffer.alloc(100, 1));
          } else setTimeout(() => this.destroy(new Error('disk on fire')), 20);
        },
      });
    });
    return sendFile(req, reply, src);
  });
  app.get('/broken/stall', (req, reply) => {
    // 64 KiB, then nothing ever again: only an explicit destroy can end this source.
    const src = fakeSource(BIG, () => {
      let sent = false;
      stalled = new Readable({
        read() {
          if (!sent) this.push(Buffer.alloc(64 * 1024, 5));
          sent = true;
        },
      });
      return stalled;
    });
    return sendFile(req, reply, src);
  });
  app.get('/broken/short', (req, reply) => sendFile(req, reply, fakeSource(1000, () => Readable.from([Buffer.alloc(10, 2)]))));
  app.get('/broken/long', (req, reply) => sendFile(req, reply, fakeSource(10, () => Readable.from([Buffer.alloc(6, 3), Buffer.alloc(6, 4)]))));
  app.get('/broken/open', (req, reply) => sendFile(req, reply, fakeSource(10, () => Promise.reject(new Error('upstream said no')))));
  app.get('/broken/missing', (req, reply) => {
    const src = fakeSource(10, () => createReadStream(path.join(dir, 'does-not-exist')));
    return sendFile(req, reply, src);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  opened = [];
});

describe('sendFile: whole file', () => {
  it('sends the bytes with the representation headers', async () => {
    const res = await get('/file/data.bin');
    expect(res.status).toBe(200);
    expect(res.body.equals(data)).toBe(true);
    expect(res.headers.get('content-length')).toBe(String(data.length));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('last-modified')).toBe(LAST_MODIFIED);
    expect(res.headers.get('etag')).toBe(defaultEtag('data.bin'));
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="data.bin"; filename*=UTF-8''data.bin`);
    expect(res.headers.get('x-preset')).toBe('kept');
    expect(res.headers.get('cache-control')).toBeNull();
    expect(opened.map((o) => [o.start, o.end])).toEqual([[0, data.length - 1]]);
  });

  it('answers HEAD with the same headers and no body, without opening the file', async () => {
    const full = await get('/file/data.bin');
    opened = [];
    const res = await get('/file/data.bin', {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
    for (const h of ['content-length', 'content-type', 'content-disposition', 'etag', 'last-modified', 'accept-ranges']) {
      expect(res.headers.get(h), h).toBe(full.headers.get(h));
    }
    expect(res.headers.get('content-length')).toBe(String(data.length));
    expect(opened).toEqual([]);
  });

  it('answers a HEAD with a range with the 206 headers, without opening the file', async () => {
    const res = await get('/file/data.bin', { range: 'bytes=10-19' }, 'HEAD');
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 10-19/${data.length}`);
    expect(res.headers.get('content-length')).toBe('10');
    expect(opened).toEqual([]);
  });

  it('names UTF-8 files with an ASCII fallback and RFC 5987 encoding, typed by extension', async () => {
    const res = await get(`/file/${encodeURIComponent(UTF8_NAME)}`);
    expect(res.status).toBe(200);
    expect(res.body.equals(data.subarray(0, 1000))).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ __.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E6%8A%A5%E5%91%8A.pdf`,
    );
  });

  it('serves inline, with a cache policy, a charset for text, and a given type or etag', async () => {
    const res = await get('/file/notes.txt?inline=1&cache=max-age=60');
    expect(res.body.toString()).toBe('hello\n');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="notes.txt"; filename*=UTF-8''notes.txt`);
    expect(res.headers.get('cache-control')).toBe('max-age=60');

    const typed = await get(`/file/notes.txt?type=${encodeURIComponent('text/markdown')}&etag=${encodeURIComponent('"v1"')}`);
    expect(typed.headers.get('content-type')).toBe('text/markdown');
    expect(typed.headers.get('etag')).toBe('"v1"');
  });

  it('sends an empty file, also when a range is asked for', async () => {
    for (const headers of [{}, { range: 'bytes=0-' }, { range: 'bytes=-10' }] as Array<Record<string, string>>) {
      const res = await get('/file/empty.bin', headers);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe('0');
      expect(res.headers.get('content-range')).toBeNull();
      expect(res.body.length).toBe(0);
    }
    expect(opened).toEqual([]);
  });
});

describe('sendFile: ranges', () => {
  it('sends a single range as 206', async () => {
    const res = await get('/file/data.bin', { range: 'bytes=100-199' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 100-199/${data.length}`);
    expect(res.headers.get('content-length')).toBe('100');
    expect(res.body.equals(data.subarray(100, 200))).toBe(true);
    expect(opened.map((o) => [o.start, o.end])).toEqual([[100, 199]]);
  });

  it('sends a suffix range', async () => {
    const res = await get('/file/data.bin', { range: 'bytes=-500' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${data.length - 500}-${data.length - 1}/${data.length}`);
    expect(res.body.equals(data.subarray(data.length - 500))).toBe(true);
  });

  it('sends an open-ended range, and clamps an end past the file', async () => {
    const open = await get('/file/data.bin', { range: 'bytes=99000-' });
    expect(open.status).toBe(206);
    expect(open.headers.get('content-range')).toBe(`bytes 99000-${data.length - 1}/${data.length}`);
    expect(open.body.equals(data.subarray(99000))).toBe(true);

    const clamped = await get('/file/data.bin', { range: 'bytes=99990-2000000' });
    expect(clamped.status).toBe(206);
    expect(clamped.headers.get('content-range')).toBe(`bytes 99990-99999/${data.length}`);
    expect(clamped.body.equals(data.subarray(99990))).toBe(true);
  });

  it('sends several ranges as multipart/byteranges, opening each in turn', async () => {
    const res = await get('/file/data.bin', { range: 'bytes=0-9, 5000-5999,-50' });
    expect(res.status).toBe(206);
    const type = res.headers.get('content-type')!;
    const boundary = /^multipart\/byteranges; boundary=(\S+)$/.exec(type)?.[1];
    expect(boundary).toBeTruthy();
    expect(res.headers.get('content-length')).toBe(String(res.body.length));
    const parts = parseMultipart(res.body, boundary!);
    const want = [
      [0, 9],
      [5000, 5999],
      [data.length - 50, data.length - 1],
    ] as const;
    expect(parts).toHaveLength(3);
    parts.forEach((p, i) => {
      const [s, e] = want[i]!;
      expect(p.headers['content-range']).toBe(`bytes ${s}-${e}/${data.length}`);
      expect(p.headers['content-type']).toBe('application/octet-stream');
      expect(p.data.equals(data.subarray(s, e + 1))).toBe(true);
    });
    expect(opened.map((o) => [o.start, o.end])).toEqual(want.map(([s, e]) => [s, e]));
    await Promise.all(opened.map((o) => o.closed));
  });

  it('gives the multipart Content-Length on HEAD too', async () => {
    const head = await get('/file/data.bin', { range: 'bytes=0-9,20-29' }, 'HEAD');
    const full = await get('/file/data.bin', { range: 'bytes=0-9,20-29' });
    expect(head.status).toBe(206);
    // The boundary is random but of fixed length, so the lengths agree.
    expect(head.headers.get('content-length')).toBe(String(full.body.length));
  });

  it('ignores overlapping, too many, or oversized range sets and sends the whole file', async () => {
    const many = Array.from({ length: 51 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',');
    for (const range of ['bytes=0-99,50-149', `bytes=${many}`, 'bytes=0-,0-']) {
      const res = await get('/file/data.bin', { range });
      expect(res.status, range).toBe(200);
      expect(res.headers.get('content-range')).toBeNull();
      expect(res.body.equals(data)).toBe(true);
    }
    const fifty = Array.from({ length: 50 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',');
    expect((await get('/file/data.bin', { range: `bytes=${fifty}` })).status).toBe(206);
  });

  it('answers 416 with Content-Range for a range past the end', async () => {
    const res = await get('/file/data.bin', { range: `bytes=${data.length}-` });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${data.length}`);
    expect(res.body.toString()).toBe('invalid range: failed to overlap\n');
    expect(opened).toEqual([]);
    expect((await get('/file/data.bin', { range: 'bytes=-0' })).status).toBe(416);
  });

  it('answers 416 for a malformed range, as Go does, and ignores unknown units', async () => {
    for (const range of ['bytes=abc', 'bytes=10-5', 'bytes=-', 'bytes=1-2-3', 'nonsense']) {
      const res = await get('/file/data.bin', { range });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${data.length}`);
    }
    const other = await get('/file/data.bin', { range: 'items=0-1' });
    expect(other.status).toBe(200);
    expect(other.body.equals(data)).toBe(true);
  });

  it('honours If-Range only when it matches', async () => {
    const etag = defaultEtag('data.bin');
    const cases: Array<[string, number]> = [
      ['"stale"', 200],
      [`W/${etag}`, 200], // weak tags never satisfy If-Range
      ['Mon, 04 Mar 2024 06:07:08 GMT', 200],
      ['garbage', 200],
      [etag, 206],
      [LAST_MODIFIED, 206],
    ];
    for (const [ifRange, status] of cases) {
      const res = await get('/file/data.bin', { range: 'bytes=0-9', 'if-range': ifRange });
      expect(res.status, ifRange).toBe(status);
      expect(res.body.length).toBe(status === 200 ? data.length : 10);
    }
  });
});

describe('sendFile: preconditions', () => {
  it('answers 304 to a matching If-None-Match', async () => {
    const etag = defaultEtag('data.bin');
    for (const inm of [etag, `"other", W/${etag}`, '*']) {
      const res = await get('/file/data.bin?cache=no-cache', { 'if-none-match': inm });
      expect(res.status, inm).toBe(304);
      expect(res.body.length).toBe(0);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-type')).toBeNull();
      expect(res.headers.get('content-length')).toBeNull();
    }
    const miss = await get('/file/data.bin', { 'if-none-match': '"other"' });
    expect(miss.status).toBe(200);
    expect(miss.body.equals(data)).toBe(true);
    expect(opened).toHaveLength(1);
  });

  it('answers 304 to If-Modified-Since not older than the mtime, at second precision', async () => {
    expect((await get('/file/data.bin', { 'if-modified-since': LAST_MODIFIED })).status).toBe(304);
    expect((await get('/file/data.bin', { 'if-modified-since': 'Wed, 06 Mar 2024 00:00:00 GMT' })).status).toBe(304);
    expect((await get('/file/data.bin', { 'if-modified-since': 'Tuesday, 05-Mar-24 06:07:08 GMT' })).status).toBe(304);
    expect((await get('/file/data.bin', { 'if-modified-since': 'Tue Mar  5 06:07:08 2024' })).status).toBe(304);
    const older = await get('/file/data.bin', { 'if-modified-since': 'Tue, 05 Mar 2024 06:07:07 GMT' });
    expect(older.status).toBe(200);
    expect(older.body.equals(data)).toBe(true);
    expect((await get('/file/data.bin', { 'if-modified-since': 'not a date' })).status).toBe(200);
    // If-None-Match takes precedence over If-Modified-Since.
    expect((await get('/file/data.bin', { 'if-none-match': '"other"', 'if-modified-since': LAST_MODIFIED })).status).toBe(200);
  });

  it('answers 412 when If-Match or If-Unmodified-Since fails', async () => {
    const etag = defaultEtag('data.bin');
    const failed = await get('/file/data.bin', { 'if-match': '"other"' });
    expect(failed.status).toBe(412);
    expect(failed.body.length).toBe(0);
    expect((await get('/file/data.bin', { 'if-match': `W/${etag}` })).status).toBe(412);
    expect((await get('/file/data.bin', { 'if-unmodified-since': 'Tue, 05 Mar 2024 06:07:07 GMT' })).status).toBe(412);
    expect(opened).toEqual([]);

    expect((await get('/file/data.bin', { 'if-match': `"other", ${etag}` })).status).toBe(200);
    expect((await get('/file/data.bin', { 'if-match': '*' })).status).toBe(200);
    expect((await get('/file/data.bin', { 'if-unmodified-since': LAST_MODIFIED })).status).toBe(200);
  });
});

describe('sendFile: failures and aborts', () => {
  it('closes the source stream when the client aborts a large download', async () => {
    const received = await abortAfter('/file/big.bin', 1024 * 1024);
    expect(received).toBeGreaterThanOrEqual(1024 * 1024);
    expect(opened).toHaveLength(1);
    const src = opened[0]!;
    expect(await closedWithin(src.stream)).toBe('closed');
    expect(src.stream.destroyed).toBe(true);
    // Back-pressure: the server stopped reading well before the end of the file.
    expect(src.stream.bytesRead).toBeLessThan(BIG);
  });

  it('closes a stalled source when the client aborts while a read is pending', async () => {
    stalled = undefined;
    await abortAfter('/broken/stall', 64 * 1024);
    expect(stalled).toBeDefined();
    expect(await closedWithin(stalled!)).toBe('closed');
  });

  it('destroys the connection when the source fails mid-transfer, and keeps serving', async () => {
    const res = await fetch(`${base}/broken/error`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1000');
    await expect(res.arrayBuffer()).rejects.toThrow();

    const short = await fetch(`${base}/broken/short`);
    expect(short.status).toBe(200);
    await expect(short.arrayBuffer()).rejects.toThrow();

    const after = await get('/file/notes.txt');
    expect(after.body.toString()).toBe('hello\n');
  });

  it('puts exactly Content-Length bytes on the wire, cutting a source that delivers more', async () => {
    const long = await rawGet('/broken/long');
    expect(long.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(long.head).toMatch(/\r\ncontent-length: 10\r\n/i);
    expect(long.body.equals(Buffer.concat([Buffer.alloc(6, 3), Buffer.alloc(4, 4)]))).toBe(true);

    const whole = await rawGet('/file/data.bin');
    expect(whole.body.equals(data)).toBe(true);
  });

  it('leaves the reply to the error handler when the source cannot be opened', async () => {
    for (const url of ['/broken/open', '/broken/missing']) {
      const res = await get(url);
      expect(res.status, url).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('content-disposition')).toBeNull();
      expect(res.headers.get('etag')).toBeNull();
      expect(res.headers.get('x-preset')).toBe('kept');
    }
  });
});

/** Open descriptors of this process on `file`. */
function descriptorsOn(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/**
 * Open descriptors of this process on `file` once they are all closed or 5 s passed: the server
 * closes a file through the thread pool, after the client has already seen the end of the body.
 */
async function descriptorsLeftOn(file: string): Promise<number> {
  const deadline = Date.now() + 5000;
  while (descriptorsOn(file) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return descriptorsOn(file);
}

describe('sendFile: local files read directly (localPath)', () => {
  it('sends whole files, HEAD and an empty file with the same answers as the stream path', async () => {
    for (const name of ['data.bin', 'large.bin', 'empty.bin']) {
      const [direct, streamed] = await Promise.all([get(`/local/${name}`), get(`/file/${name}`)]);
      expect(direct.status, name).toBe(200);
      expect(direct.body.equals(streamed.body), name).toBe(true);
      for (const h of ['content-length', 'content-type', 'etag', 'last-modified', 'accept-ranges', 'content-disposition']) {
        expect(direct.headers.get(h), `${name} ${h}`).toBe(streamed.headers.get(h));
      }
    }
    expect((await get('/local/large.bin')).body.equals(large)).toBe(true);
    const head = await get('/local/large.bin', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(large.length));
    expect(head.body.length).toBe(0);
  });

  it('sends single, suffix and multipart ranges, and answers preconditions', async () => {
    const one = await get('/local/large.bin', { range: 'bytes=1000000-2500000' });
    expect(one.status).toBe(206);
    expect(one.headers.get('content-range')).toBe(`bytes 1000000-2500000/${large.length}`);
    expect(one.body.equals(large.subarray(1000000, 2500001))).toBe(true);

    const suffix = await get('/local/large.bin', { range: 'bytes=-70000' });
    expect(suffix.body.equals(large.subarray(large.length - 70000))).toBe(true);

    const multi = await get('/local/large.bin', { range: 'bytes=0-9,300000-1400000,-5' });
    expect(multi.status).toBe(206);
    const boundary = /boundary=(\w+)/.exec(multi.headers.get('content-type')!)![1]!;
    const parts = parseMultipart(multi.body, boundary);
    expect(parts.map((p) => p.headers['content-range'])).toEqual([
      `bytes 0-9/${large.length}`,
      `bytes 300000-1400000/${large.length}`,
      `bytes ${large.length - 5}-${large.length - 1}/${large.length}`,
    ]);
    expect(parts[0]!.data.equals(large.subarray(0, 10))).toBe(true);
    expect(parts[1]!.data.equals(large.subarray(300000, 1400001))).toBe(true);
    expect(parts[2]!.data.equals(large.subarray(large.length - 5))).toBe(true);
    expect(Number(multi.headers.get('content-length'))).toBe(multi.body.length);

    const etag = (await get('/local/data.bin', {}, 'HEAD')).headers.get('etag')!;
    expect((await get('/local/data.bin', { 'if-none-match': etag })).status).toBe(304);
    expect((await get('/local/data.bin', { 'if-match': '"other"' })).status).toBe(412);
  });

  it('serves many downloads at once from the shared buffers, each with its own bytes', async () => {
    const ranges = Array.from({ length: 12 }, (_, i) => [i * 200_000, i * 200_000 + 1_500_000] as const);
    const answers = await Promise.all([
      ...ranges.map(([a, b]) => get('/local/large.bin', { range: `bytes=${a}-${b}` })),
      get('/local/large.bin'),
      get('/local/data.bin'),
    ]);
    ranges.forEach(([a, b], i) => expect(answers[i]!.body.equals(large.subarray(a, b + 1)), `range ${i}`).toBe(true));
    expect(answers[12]!.body.equals(large)).toBe(true);
    expect(answers[13]!.body.equals(data)).toBe(true);
  });

  it('closes the file when the client aborts, having read only what it sent', async () => {
    const big = path.join(dir, 'big.bin');
    const received = await abortAfter('/local/big.bin', 1024 * 1024);
    expect(received).toBeGreaterThanOrEqual(1024 * 1024);
    expect(await descriptorsLeftOn(big)).toBe(0);
  });

  it('cuts the connection when the file is shorter than declared, and keeps serving', async () => {
    const res = await fetch(`${base}/local-short/data.bin`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(data.length + 5000));
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(await descriptorsLeftOn(path.join(dir, 'data.bin'))).toBe(0);
    expect((await get('/local/notes.txt')).body.toString()).toBe('hello\n');
  });

  it('leaves the reply to the error handler when the file cannot be opened', async () => {
    const res = await get('/local-missing');
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('etag')).toBeNull();
  });
});
