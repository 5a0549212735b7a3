import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openGuarded, type OpenedResponse } from '../net/guarded-http.js';
import { refuseUnsafeName } from '../tasks/creator.js';

export const SIMPLE_HTTP = 'SimpleHttp';
const USER_AGENT = 'Atrium offline download';

export interface FetchOptions {
  allowPrivate: boolean;
  /** See GuardOptions.blocked. */
  blocked?: (address: string) => boolean;
  signal: AbortSignal;
  headers?: Record<string, string>;
}

/** GETs a URL, following redirects; the target of every hop is checked by the SSRF guard. */
export function openUrl(raw: string, opts: FetchOptions): Promise<OpenedResponse> {
  return openGuarded(raw, { ...opts, headers: { 'user-agent': USER_AGENT, ...opts.headers } });
}

/** RFC 6266 / 5987 file name of a Content-Disposition header. */
function dispositionName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[2]!.trim());
    } catch {
      // fall through to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(header);
  if (!plain) return undefined;
  return (plain[1] ?? plain[2] ?? '').replace(/\\(.)/g, '$1').trim();
}

/**
 * A name without control characters and at most 255 bytes. Separators and dot names are kept as
 * sent: such a name is refused by the task (refuseUnsafeName), never cut down to something else.
 */
function safeName(name: string): string {
  const cleaned = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (cleaned === '') return '';
  let out = cleaned;
  while (Buffer.byteLength(out) > 255) out = out.slice(0, -1);
  return out;
}

/** File name of a download: Content-Disposition, else the last segment of the URL path, else the host. */
export function downloadName(res: IncomingMessage, url: URL): string {
  const fromHeader = safeName(dispositionName(res.headers['content-disposition']) ?? '');
  if (fromHeader) return fromHeader;
  let last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    // keep it encoded
  }
  return safeName(last) || safeName(url.hostname) || 'download';
}

export function httpError(res: IncomingMessage, url: URL): Error {
  res.resume();
  return new Error(`download of ${url.toString()} failed: HTTP ${res.statusCode} ${res.statusMessage ?? ''}`.trim());
}

/** Counts bytes and refuses more than `limit` (0 = no limit). */
export class SizeLimit extends Transform {
  bytes = 0;

  constructor(
    private readonly limit: number,
    private readonly onBytes: (bytes: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.limit > 0 && this.bytes > this.limit) {
      cb(new Error(`the download is larger than the limit of ${this.limit} bytes (setting offline_download_max_size)`));
      return;
    }
    this.onBytes(this.bytes);
    cb(null, chunk);
  }
}

/** What a partly done download remembers so that it can continue after a restart. */
export interface PartialDownload {
  name: string;
  etag?: string;
  lastModified?: string;
}

export interface DownloadToDirOptions extends FetchOptions {
  url: string;
  dir: string;
  /** Bytes allowed in all (0 = no limit). */
  maxBytes: number;
  /** Set when an earlier attempt started this download. */
  partial?: PartialDownload;
  /** Called once the file name is known and before any byte is written, to record it. */
  onStart(partial: PartialDownload): Promise<void>;
  onProgress(bytes: number, total: number): void;
}

const fileSize = async (file: string) => {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
};

/**
 * Downloads a URL into `dir`. When an earlier attempt left part of the file, the rest is asked
 * for with a Range request (guarded by If-Range, so a changed file starts over).
 */
export async function downloadToDir(o: DownloadToDirOptions): Promise<string> {
  let offset = o.partial ? await fileSize(path.join(o.dir, o.partial.name)) : 0;
  const headers: Record<string, string> = {};
  if (offset > 0) {
    headers.range = `bytes=${offset}-`;
    const validator = o.partial!.etag ?? o.partial!.lastModified;
    if (validator) headers['if-range'] = validator;
  }
  const { res, url } = await openUrl(o.url, { ...o, headers });
  let partial: PartialDownload;
  let total: number;
  const length = Number(res.headers['content-length'] ?? -1);
  if (offset > 0 && res.statusCode === 206 && contentRangeStart(res) === offset) {
    partial = o.partial!;
    total = length >= 0 ? offset + length : -1;
  } else if (offset > 0 && res.statusCode === 416 && rangeTotal(res) === offset) {
    res.resume();
    return o.partial!.name;
  } else if (res.statusCode === 200) {
    offset = 0;
    partial = {
      name: downloadName(res, url),
      etag: headerText(res.headers.etag),
      lastModified: headerText(res.headers['last-modified']),
    };
    total = length;
    try {
      refuseUnsafeName(partial.name);
    } catch (err) {
      res.resume();
      throw err;
    }
  } else {
    throw httpError(res, url);
  }
  if (o.maxBytes > 0 && total > o.maxBytes) {
    res.resume();
    throw new Error(`the download is ${total} bytes, more than the limit of ${o.maxBytes} bytes (setting offline_download_max_size)`);
  }
  await o.onStart(partial);
  const file = path.join(o.dir, partial.name);
  const limit = new SizeLimit(o.maxBytes > 0 ? o.maxBytes - offset : 0, (b) => o.onProgress(offset + b, total));
  await pipeline(res, limit, createWriteStream(file, { flags: offset > 0 ? 'a' : 'w' }), { signal: o.signal });
  if (length >= 0 && limit.bytes !== length) throw new Error(`the connection closed after ${offset + limit.bytes} of ${total} bytes`);
  return partial.name;
}

const headerText = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) || undefined;

function contentRangeStart(res: IncomingMessage): number {
  const m = /^bytes (\d+)-/.exec(res.headers['content-range'] ?? '');
  return m ? Number(m[1]) : -1;
}

function rangeTotal(res: IncomingMessage): number {
  const m = /\/(\d+)$/.exec(res.headers['content-range'] ?? '');
  return m ? Number(m[1]) : -1;
}
