import http, { type IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { resolveTarget } from './url-guard.js';

const MAX_REDIRECTS = 10;
/** What a reused connection the peer had closed fails with. */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE']);
const HEADERS_TIMEOUT_MS = 30_000;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Request headers not carried to another origin when a redirect leaves the first one. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

export interface GuardedRequestOptions {
  allowPrivate: boolean;
  /** The setting that lifts the rule, named in the refusal (default offline_download_allow_private). */
  setting?: string;
  /** See GuardOptions.blocked. */
  blocked?: (address: string) => boolean;
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Milliseconds the connection may stay silent (default 60 s). */
  idleTimeoutMs?: number;
}

export interface OpenedResponse {
  res: IncomingMessage;
  /** The URL that answered, after redirects. */
  url: URL;
}

/**
 * A request whose connection goes to the address the guard checked, never to a second lookup's
 * answer. Sent on a kept-alive connection that the peer closed meanwhile (its idle timeout, a
 * restart: the request and the peer's close cross), it fails before any answer with a reset;
 * the request (a GET or HEAD, nothing sent but headers) is then made once more, on a connection
 * of its own (`fresh`: not one from the pool, which may hold more closed ones), as browsers do. A
 * failure on a new connection is the peer's answer and is kept.
 */
async function request(url: URL, address: string, family: 4 | 6, opts: GuardedRequestOptions, fresh = false): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_host, options, cb) => {
    if (options.all) (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  // node:https (and TLS) load with the first https URL fetched, not at start (~1 MB of memory).
  const mod = url.protocol === 'https:' ? await import('node:https') : http;
  const idle = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      // With private addresses allowed there is nothing to pin: the system's lookup (and its
      // fallback between IPv6 and IPv4 answers) applies, as for any other request.
      lookup: opts.allowPrivate ? undefined : pinned,
      signal: opts.signal,
      timeout: idle,
      ...(fresh ? { agent: false } : {}),
    });
    const headersTimer = setTimeout(() => req.destroy(new Error(`no answer from ${url.host} within ${HEADERS_TIMEOUT_MS / 1000} s`)), HEADERS_TIMEOUT_MS);
    req.on('timeout', () => req.destroy(new Error(`connection to ${url.host} idle for ${idle / 1000} s`)));
    req.on('response', (res) => {
      clearTimeout(headersTimer);
      resolve(res);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(headersTimer);
      const stale = !fresh && req.reusedSocket && STALE_CODES.has(err.code ?? '') && !opts.signal?.aborted;
      if (stale) resolve(request(url, address, family, opts, true));
      else reject(err);
    });
    req.end();
  });
}

/**
 * Requests a URL, following redirects; the target of every hop is resolved and checked by the
 * SSRF guard (url-guard.ts) and the connection goes to the checked address.
 */
export async function openGuarded(raw: string, opts: GuardedRequestOptions): Promise<OpenedResponse> {
  let current = raw;
  let headers = opts.headers;
  let origin: string | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const target = await resolveTarget(current, { allowPrivate: opts.allowPrivate, blocked: opts.blocked, setting: opts.setting });
    if (origin !== undefined && target.url.origin !== origin && headers) {
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.includes(k.toLowerCase())));
    }
    origin = target.url.origin;
    const res = await request(target.url, target.address!, target.family!, { ...opts, headers });
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304 && location) {
      res.resume();
      current = new URL(location, target.url).toString();
      continue;
    }
    return { res, url: target.url };
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects`);
}
