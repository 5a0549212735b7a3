import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Upstream } from '../../errors.js';
import { cleanPath } from '../../util/paths.js';
import { readPeerJson } from '../peer-answer.js';
import { ObjectNotFound } from '../types.js';

/** The `{code, message, data}` envelope of every /api answer. */
export interface Envelope<T = unknown> {
  code: number;
  message: string;
  data: T;
}

/** A peer answered with a code other than 200 (its message kept, for the error mapping). */
export class PeerError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'PeerError';
  }
}

const TIMEOUT_MS = 60_000;

/** Mounting waits at most this long for the peer: a storage that cannot reach it fails its mount. */
export const INIT_TIMEOUT_MS = 5_000;

/** A storage path as the peer's path below `root`; `.` and `..` segments name nothing (root confinement). */
export function peerPath(root: string, p: string): string {
  if (p.split('/').some((s) => s === '..' || s === '.')) throw new ObjectNotFound();
  return cleanPath(path.posix.join(root, p));
}

/** The peer's address from the `url` option, without a trailing slash; only http(s) URLs. */
export function peerBase(raw: unknown): string {
  const base = String(raw ?? '').trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`url ${base} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('url must start with http:// or https://');
  return base;
}

/** An object with the envelope's numeric `code` (what every answer of this API is). */
function isEnvelope(v: unknown): v is Envelope {
  return typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'number';
}

/** A JSON call of a server of this API; network failures name the peer, never a stack. */
export async function callJson<T>(base: string, method: 'GET' | 'POST', route: string, token: string, body?: unknown, timeoutMs = TIMEOUT_MS, extraHeaders: Record<string, string> = {}): Promise<Envelope<T>> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (token) headers.authorization = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(`${base}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    const declared = res.headers.get('content-encoding') ? null : res.headers.get('content-length');
    const answer = await readPeerJson(res.body as AsyncIterable<Uint8Array> | null, `${base}${route}`, declared);
    if (!isEnvelope(answer)) throw new Upstream(`${base}${route} answered HTTP ${res.status} without an API envelope`);
    return answer as Envelope<T>;
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw new Error(`failed to reach ${base}: no answer within ${timeoutMs / 1000} s`);
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    if (cause) throw new Error(`failed to reach ${base}: ${cause}`);
    throw err;
  }
}

/** Streams a body to PUT /api/fs/put with its size in Content-Length; resolves with the envelope. */
export function putStream(base: string, headers: Record<string, string>, size: number, body: Readable): Promise<Envelope> {
  const url = new URL(`${base}/api/fs/put`);
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method: 'PUT', headers: { ...headers, 'content-length': String(size), 'content-type': 'application/octet-stream' } }, (res) => {
      readPeerJson(res, `${base}/api/fs/put`, res.headers['content-length']).then((answer) => {
        if (isEnvelope(answer)) resolve(answer);
        else reject(new Upstream(`upload answered HTTP ${res.statusCode} without an API envelope`));
      }, reject);
    });
    req.on('error', (err) => reject(new Error(`upload to ${base} failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`)));
    body.on('error', (err) => {
      req.destroy();
      reject(err);
    });
    body.pipe(req);
  });
}
