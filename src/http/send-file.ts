// Answers GET/HEAD with a file's bytes, with the HTTP semantics of Go's http.ServeContent
// (which the original server used): validators and preconditions (RFC 9110 §13), byte
// ranges including multipart/byteranges (§14), streamed with back-pressure.

import { randomBytes } from 'node:crypto';
import { close, open as openFile, read } from 'node:fs';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mimeTypes } from '../util/mime.js';

export interface FileSource {
  /** File name, for Content-Disposition and (without contentType) the MIME type by extension. */
  name: string;
  /** Total bytes. */
  size: number;
  /** Modification time, for Last-Modified / If-Modified-Since / If-Unmodified-Since. */
  modified: Date;
  /** Strong ETag including quotes; when absent `"<mtime ms hex>-<size hex>"` is used. */
  etag?: string;
  contentType?: string;
  /**
   * Opens a readable stream of bytes start..end inclusive. It must deliver at least that many
   * bytes: extra bytes are cut off, a stream that ends early aborts the response.
   */
  open(start: number, end: number): Promise<NodeJS.ReadableStream> | NodeJS.ReadableStream;
  /**
   * A local file holding the same bytes: when given, they are read from it straight into
   * buffers reused across responses (see LocalPump) and `open` is not used. Leave it out when
   * the bytes must pass through `open` (a speed limit, a decoder).
   */
  localPath?: string;
}

export interface SendOptions {
  /** Default 'attachment'. */
  disposition?: 'attachment' | 'inline';
  cacheControl?: string;
  /**
   * Called once when a GET's answer has ended (sent, cut by the client, or failed), with the
   * file bytes that went out: the view's "transfer done" (one `download` event). Not called for HEAD.
   */
  onSent?: (bytes: number, err?: unknown) => void;
}

/** Go's limit: a Range header with more parts than this is ignored. */
const MAX_RANGES = 50;

interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/**
 * Sends `src` as the answer to `req`. The reply is always hijacked (the response is written to
 * `reply.raw` directly) except when opening the source fails before anything was written: then
 * the error is thrown with the reply untouched, for the caller's error handler.
 */
export async function sendFile(req: FastifyRequest, reply: FastifyReply, src: FileSource, opts: SendOptions = {}): Promise<FastifyReply> {
  const sent = req.method === 'GET' ? opts.onSent : undefined;
  try {
    return await sendBody(req, reply, src, opts, sent);
  } catch (err) {
    sent?.(0, err);
    throw err;
  }
}

async function sendBody(req: FastifyRequest, reply: FastifyReply, src: FileSource, opts: SendOptions, sent: SendOptions['onSent']): Promise<FastifyReply> {
  const etag = src.etag ? quoteEtag(src.etag) : defaultEtag(src);
  const modified = unixSeconds(src.modified);
  const cacheControl = opts.cacheControl ? { 'cache-control': opts.cacheControl } : {};

  const pre = checkPreconditions(req, etag, modified);
  // Answers without file bytes end the transfer with none.
  if (pre !== undefined && pre !== 'ignore-range') sent?.(0);
  if (pre === 412) return respond(reply, 412, {}, '');
  // RFC 9110 §15.4.5: a 304 carries the validators and caching headers a 200 would.
  if (pre === 304) return respond(reply, 304, { etag, ...cacheControl });

  const size = src.size;
  const type = src.contentType ?? contentTypeOf(src.name);
  const headers: OutgoingHttpHeaders = {
    'accept-ranges': 'bytes',
    'content-type': type,
    'content-disposition': contentDisposition(opts.disposition ?? 'attachment', src.name),
    etag,
    ...(modified !== undefined ? { 'last-modified': new Date(modified * 1000).toUTCString() } : {}),
    ...cacheControl,
  };

  let ranges = pre === 'ignore-range' ? undefined : parseRange(req.headers.range, size);
  if (ranges === 'unsatisfiable' && size === 0) {
    // As Go: clients that put a Range on every request get the empty file, not a 416.
    ranges = undefined;
  } else if (ranges === 'unsatisfiable' || ranges === 'invalid') {
    // Go answers 416 for a malformed Range too (RFC 9110 would also allow ignoring it); we keep
    // Go's answer, and add the Content-Range that §15.5.17 recommends on every 416.
    const message = ranges === 'invalid' ? 'invalid range\n' : 'invalid range: failed to overlap\n';
    sent?.(0);
    return respond(reply, 416, { 'content-range': `bytes */${size}`, 'content-type': 'text/plain; charset=utf-8' }, message);
  }
  if (ranges && !worthServing(ranges, size)) ranges = undefined;

  // The body: the bytes of ranges, with multipart headers (as Buffers) in between.
  let segments: Array<Buffer | ByteRange>;
  let status = 200;
  if (!ranges) {
    segments = size > 0 ? [{ start: 0, end: size - 1 }] : [];
  } else if (ranges.length === 1) {
    const r = ranges[0]!;
    status = 206;
    segments = [r];
    headers['content-range'] = contentRange(r, size);
  } else {
    status = 206;
    const boundary = randomBytes(16).toString('hex');
    segments = multipartSegments(ranges, boundary, type, size);
    headers['content-type'] = `multipart/byteranges; boundary=${boundary}`;
  }
  headers['content-length'] = segments.reduce((n, s) => n + (Buffer.isBuffer(s) ? s.length : rangeLength(s)), 0);

  const firstRange = segments.find((s): s is ByteRange => !Buffer.isBuffer(s));
  if (req.method === 'HEAD' || !firstRange) {
    sent?.(0);
    return respond(reply, status, headers);
  }

  const res = reply.raw;
  if (src.localPath !== undefined) {
    // Opened before anything is written, so that a missing file is an error response.
    const fd = await openFd(src.localPath);
    reply.hijack();
    res.writeHead(status, { ...definedHeaders(reply), ...headers });
    new LocalPump(fd, segments, res, (bytes, err) => {
      if (err) req.log.warn({ err, file: src.name }, 'file transfer failed');
      sent?.(bytes, err);
    }).start();
    return reply;
  }
  const streams = new OpenStreams();
  res.once('close', () => streams.closeAll());
  // Open the first range before writing anything, so that a source that cannot be read
  // (missing file, denied upstream) becomes an error response rather than a cut transfer.
  const first = await openRange(src, firstRange, streams);

  reply.hijack();
  res.writeHead(status, { ...definedHeaders(reply), ...headers });
  const body = Readable.from(bodyChunks(src, segments, first, streams), { objectMode: false });
  let bytes = 0;
  if (sent) body.on('data', (chunk: Buffer) => (bytes += chunk.length));
  // pipeline destroys the socket if the body fails after the headers went out, and destroys
  // the body if the client goes away; OpenStreams then closes the source it was reading.
  pipeline(body, res, (err) => {
    streams.closeAll();
    const cut = err && (err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE';
    if (err && !cut) req.log.warn({ err, file: src.name }, 'file transfer failed');
    sent?.(bytes, cut ? undefined : (err ?? undefined));
  });
  return reply;
}

/** Writes a complete response without a streamed body (a HEAD, an empty file, or a status). */
function respond(reply: FastifyReply, status: number, headers: OutgoingHttpHeaders, body?: string): FastifyReply {
  reply.hijack();
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  reply.raw.writeHead(status, { ...definedHeaders(reply), ...headers });
  reply.raw.end(body);
  return reply;
}

/** Headers already set on the reply (CORS, request id, …), which hijacking would otherwise drop. */
function definedHeaders(reply: FastifyReply): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) out[k] = v;
  return out;
}

// ---- validators and preconditions (RFC 9110 §13.2.2, in Go's order) ----

function checkPreconditions(req: FastifyRequest, etag: string, modified: number | undefined): 304 | 412 | 'ignore-range' | undefined {
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  const getOrHead = req.method === 'GET' || req.method === 'HEAD';

  const ifMatch = header('if-match');
  const ifUnmodifiedSince = header('if-unmodified-since');
  if (ifMatch !== undefined) {
    if (!etagListMatches(ifMatch, (tag) => strongMatch(tag, etag))) return 412;
  } else if (ifUnmodifiedSince !== undefined && modified !== undefined) {
    const t = parseHttpDate(ifUnmodifiedSince);
    if (t !== undefined && modified > t) return 412;
  }

  const ifNoneMatch = header('if-none-match');
  const ifModifiedSince = header('if-modified-since');
  if (ifNoneMatch !== undefined) {
    if (etagListMatches(ifNoneMatch, (tag) => weakMatch(tag, etag))) return getOrHead ? 304 : 412;
  } else if (getOrHead && ifModifiedSince !== undefined && modified !== undefined) {
    const t = parseHttpDate(ifModifiedSince);
    if (t !== undefined && modified <= t) return 304;
  }

  const ifRange = header('if-range');
  if (getOrHead && ifRange !== undefined && header('range') !== undefined) {
    const tag = scanEtag(ifRange.trim());
    const matches = tag ? strongMatch(tag, etag) : modified !== undefined && parseHttpDate(ifRange) === modified;
    if (!matches) return 'ignore-range';
  }
  return undefined;
}

/** Whether `*` or one of the listed entity tags satisfies `match`; a syntax error ends the list. */
function etagListMatches(list: string, match: (tag: string) => boolean): boolean {
  let rest = list;
  for (;;) {
    rest = rest.replace(/^[ \t,]+/, '');
    if (rest === '') return false;
    if (rest.startsWith('*')) return true;
    const tag = scanEtag(rest);
    if (!tag) return false;
    if (match(tag)) return true;
    rest = rest.slice(tag.length);
  }
}

/** The entity tag (`"x"` or `W/"x"`) at the start of `s`. Header values arrive latin1-decoded. */
function scanEtag(s: string): string | undefined {
  return /^(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/.exec(s)?.[0];
}

const strongMatch = (a: string, b: string) => a === b && a.startsWith('"');
const weakMatch = (a: string, b: string) => a.replace(/^W\//, '') === b.replace(/^W\//, '');

function quoteEtag(etag: string): string {
  return scanEtag(etag) === etag ? etag : `"${etag.replace(/"/g, '')}"`;
}

function defaultEtag(src: FileSource): string {
  const ms = src.modified.getTime();
  return `"${(Number.isFinite(ms) ? ms : 0).toString(16)}-${src.size.toString(16)}"`;
}

/** Whole seconds (HTTP dates have no more); undefined for an invalid or epoch-zero time, as Go. */
function unixSeconds(d: Date): number | undefined {
  const ms = d.getTime();
  return Number.isFinite(ms) && ms !== 0 ? Math.floor(ms / 1000) : undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const HTTP_DATES = [
  /^[a-z]{3}, (?<d>\d{2}) (?<mon>[a-z]{3}) (?<y>\d{4}) (?<t>\d{2}:\d{2}:\d{2}) GMT$/i, // IMF-fixdate
  /^[a-z]+, (?<d>\d{2})-(?<mon>[a-z]{3})-(?<y>\d{2}) (?<t>\d{2}:\d{2}:\d{2}) GMT$/i, // RFC 850
  /^[a-z]{3} (?<mon>[a-z]{3}) (?<d>[ \d]\d) (?<t>\d{2}:\d{2}:\d{2}) (?<y>\d{4})$/i, // asctime
];

/** An HTTP date (RFC 9110 §5.6.7, the three formats Go accepts) as Unix seconds. */
function parseHttpDate(value: string): number | undefined {
  const s = value.trim();
  const g = HTTP_DATES.map((re) => re.exec(s)?.groups).find((x) => x !== undefined);
  if (!g) return undefined;
  let year = Number(g.y);
  if (g.y!.length === 2) year += year >= 69 ? 1900 : 2000; // Go's two-digit year pivot
  const month = MONTHS.indexOf(g.mon!.toLowerCase());
  const day = Number(g.d);
  const [h = 0, min = 0, sec = 0] = g.t!.split(':').map(Number);
  if (month < 0 || h > 23 || min > 59 || sec > 59) return undefined;
  const d = new Date(Date.UTC(year, month, day, h, min, sec));
  if (d.getUTCDate() !== day) return undefined; // 31 Feb and the like
  return d.getTime() / 1000;
}

// ---- ranges (RFC 9110 §14) ----

/**
 * The satisfiable ranges of a Range header, in request order; undefined when there is no header
 * or it is to be ignored (a unit other than bytes: RFC 9110 §14.2 says MUST ignore, where Go
 * would answer 416); 'invalid' for bad syntax; 'unsatisfiable' when no range overlaps the file.
 */
function parseRange(header: string | undefined, size: number): ByteRange[] | 'invalid' | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const eq = header.indexOf('=');
  if (eq < 0) return 'invalid';
  if (header.slice(0, eq).trim().toLowerCase() !== 'bytes') return undefined;

  const ranges: ByteRange[] = [];
  let skipped = false;
  for (const part of header.slice(eq + 1).split(',')) {
    const spec = part.trim();
    if (spec === '') continue;
    const m = /^(\d*)[ \t]*-[ \t]*(\d*)$/.exec(spec);
    if (!m || (m[1] === '' && m[2] === '')) return 'invalid';
    if (m[1] === '') {
      const suffix = Math.min(Number(m[2]), size);
      // A zero suffix selects nothing (§14.1.1); Go would answer it with an empty 206.
      if (suffix === 0) skipped = true;
      else ranges.push({ start: size - suffix, end: size - 1 });
      continue;
    }
    const start = Number(m[1]);
    const end = m[2] === '' ? Infinity : Number(m[2]);
    if (end < start) return 'invalid';
    if (start >= size) skipped = true;
    else ranges.push({ start, end: Math.min(end, size - 1) });
  }
  if (ranges.length === 0) return skipped ? 'unsatisfiable' : undefined;
  return ranges;
}

/**
 * Whether to honour a set of ranges. Too many, overlapping, or more bytes in total than the
 * file are ignored (the whole file is sent), as §14.2 allows against abusive requests.
 */
function worthServing(ranges: ByteRange[], size: number): boolean {
  if (ranges.length > MAX_RANGES) return false;
  if (ranges.reduce((n, r) => n + rangeLength(r), 0) > size) return false;
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  return sorted.every((r, i) => i === 0 || r.start > sorted[i - 1]!.end);
}

const rangeLength = (r: ByteRange) => r.end - r.start + 1;
const contentRange = (r: ByteRange, size: number) => `bytes ${r.start}-${r.end}/${size}`;

/** multipart/byteranges laid out as Go's mime/multipart writes it. */
function multipartSegments(ranges: ByteRange[], boundary: string, type: string, size: number): Array<Buffer | ByteRange> {
  const out: Array<Buffer | ByteRange> = [];
  ranges.forEach((r, i) => {
    const head = `${i === 0 ? '' : '\r\n'}--${boundary}\r\nContent-Range: ${contentRange(r, size)}\r\nContent-Type: ${type}\r\n\r\n`;
    out.push(Buffer.from(head), r);
  });
  out.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return out;
}

// ---- streaming ----

interface OpenedRange {
  stream: Readable;
  chunks: AsyncIterator<unknown>;
  first: IteratorResult<unknown>;
}

/**
 * The source streams a response is reading. Closing the response destroys them at once, even
 * when a read is pending (an async generator would only notice at its next yield).
 */
class OpenStreams {
  private readonly open = new Set<Readable>();
  private closed = false;

  add(stream: Readable): void {
    if (this.closed) {
      stream.destroy();
      throw new Error('response closed');
    }
    this.open.add(stream);
  }

  release(stream: Readable): void {
    this.open.delete(stream);
    stream.destroy();
  }

  closeAll(): void {
    this.closed = true;
    for (const s of this.open) s.destroy();
    this.open.clear();
  }
}

/** Opens a range and waits for its first chunk, so that open errors surface here. */
async function openRange(src: FileSource, r: ByteRange, streams: OpenStreams): Promise<OpenedRange> {
  const raw = await src.open(r.start, r.end);
  const stream = raw instanceof Readable ? raw : new Readable().wrap(raw);
  streams.add(stream);
  const chunks = stream[Symbol.asyncIterator]();
  try {
    return { stream, chunks, first: await chunks.next() };
  } catch (err) {
    streams.release(stream);
    throw err;
  }
}

async function* bodyChunks(src: FileSource, segments: Array<Buffer | ByteRange>, first: OpenedRange, streams: OpenStreams): AsyncGenerator<Buffer> {
  let opened: OpenedRange | undefined = first;
  for (const seg of segments) {
    if (Buffer.isBuffer(seg)) {
      yield seg;
      continue;
    }
    yield* exactly(opened ?? (await openRange(src, seg, streams)), rangeLength(seg), streams);
    opened = undefined;
  }
}

/** The first `length` bytes of an opened range; fails if the source has fewer. */
async function* exactly(o: OpenedRange, length: number, streams: OpenStreams): AsyncGenerator<Buffer> {
  let left = length;
  let next = o.first;
  try {
    while (left > 0) {
      if (next.done) throw new Error(`file source ended ${left} bytes early`);
      let chunk = toBuffer(next.value);
      if (chunk.length > left) chunk = chunk.subarray(0, left);
      left -= chunk.length;
      yield chunk;
      if (left > 0) next = await o.chunks.next();
    }
  } finally {
    streams.release(o.stream);
  }
}

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk));
}

// ---- local files ----

const openFd = (file: string) =>
  new Promise<number>((resolve, reject) => openFile(file, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));

/**
 * Bytes per read of a local file. Each response has at most PUMP_DEPTH of them in flight (one
 * being read, the others being written to the socket), so 16 downloads hold about 12 MiB.
 */
const PUMP_CHUNK = 256 * 1024;
const PUMP_DEPTH = 3;
/** Free read buffers kept between responses (at most 16 MiB). */
const spareBuffers: Buffer[] = [];
const SPARE_MAX = 64;

/**
 * Sends the segments of a local file: fs.read into a buffer, written to the socket, the buffer
 * reused once the socket is done with it (the write's callback). No stream, promise or new
 * buffer per chunk: a download costs the two copies (file to buffer, buffer to socket) and
 * little else, where a read stream allocated a fresh buffer per chunk and the GC freed it.
 */
class LocalPump {
  private next = 0;
  private position = 0;
  private left = 0;
  private inFlight = 0;
  private reading = false;
  private ended = false;
  private fdClosed = false;
  /** File bytes handed to the socket. */
  private sent = 0;

  constructor(
    private readonly fd: number,
    private readonly segments: Array<Buffer | ByteRange>,
    private readonly res: ServerResponse,
    /** Called once: when the last byte was written, or the transfer ended early (`err` when reading failed). */
    private readonly done: (bytes: number, err?: Error) => void,
  ) {}

  start(): void {
    this.res.once('close', () => this.stop(null));
    this.pump();
  }

  private pump(): void {
    while (!this.ended && !this.reading && this.inFlight < PUMP_DEPTH) {
      while (this.left === 0 && this.next < this.segments.length) {
        const seg = this.segments[this.next++]!;
        if (Buffer.isBuffer(seg)) this.res.write(seg);
        else {
          this.position = seg.start;
          this.left = rangeLength(seg);
        }
      }
      if (this.left === 0) {
        this.ended = true;
        this.closeFd();
        this.res.end();
        this.done(this.sent);
        return;
      }
      this.reading = true;
      const buf = spareBuffers.pop() ?? Buffer.allocUnsafeSlow(PUMP_CHUNK);
      read(this.fd, buf, 0, Math.min(PUMP_CHUNK, this.left), this.position, (err, n) => this.onRead(buf, err, n));
    }
  }

  private onRead(buf: Buffer, err: Error | null, n: number): void {
    this.reading = false;
    if (this.ended) {
      spare(buf);
      this.closeFd();
      return;
    }
    if (err || n === 0) {
      spare(buf);
      this.stop(err ?? new Error(`file source ended ${this.left} bytes early`));
      return;
    }
    this.position += n;
    this.left -= n;
    this.sent += n;
    this.inFlight++;
    this.res.write(n === buf.length ? buf : buf.subarray(0, n), (writeErr) => {
      this.inFlight--;
      // After a failed write the socket may still hold the buffer: leave it to the GC.
      if (!writeErr) spare(buf);
      this.pump();
    });
    this.pump();
  }

  /** Ends the transfer early: `null` when the client went away, an error when reading failed. */
  private stop(err: Error | null | undefined): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.reading) this.closeFd();
    if (err) this.res.destroy(err);
    this.done(this.sent, err ?? undefined);
  }

  private closeFd(): void {
    if (this.fdClosed) return;
    this.fdClosed = true;
    close(this.fd, () => {});
  }
}

function spare(buf: Buffer): void {
  if (spareBuffers.length < SPARE_MAX) spareBuffers.push(buf);
}

// ---- representation headers ----

export function contentTypeOf(name: string): string {
  const type = mimeTypes().lookup(name);
  return (type && mimeTypes().contentType(type)) || 'application/octet-stream';
}

/**
 * `filename` carries an ASCII fallback (non-ASCII, controls, quotes and backslashes become `_`);
 * `filename*` the exact name, percent-encoded as RFC 5987 / 8187.
 */
export function contentDisposition(type: 'attachment' | 'inline', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  const encoded = encodeURIComponent(name.replace(/\p{Cs}/gu, '\ufffd')).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * One archive entry's bytes, streamed as extracted (raw entry links /ad /ap /ae, and /sad):
 * no Range, the entry's size when the archive declares it.
 */
export async function sendArchiveEntry(req: FastifyRequest, reply: FastifyReply, stream: Readable, entry: { size: number; modified: number }, name: string): Promise<void> {
  const type = contentTypeOf(name);
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': type,
    'content-disposition': contentDisposition('attachment', name),
    'referrer-policy': 'no-referrer',
    'cache-control': type.startsWith('image') ? 'max-age=86400' : 'max-age=0, no-cache, no-store, must-revalidate',
    ...(entry.size > 0 ? { 'content-length': String(entry.size) } : {}),
    'last-modified': new Date(entry.modified).toUTCString(),
  });
  if (req.method === 'HEAD') {
    stream.destroy();
    reply.raw.end();
    return;
  }
  await new Promise<void>((resolve) => {
    // The entry's stream is the view's (counted: its `download` event is emitted when it ends or is closed).
    pipeline(stream, reply.raw, (err) => {
      if (err) reply.raw.destroy();
      resolve();
    });
  });
}
