// HTTP helpers: a keep-alive JSON client timed to the last byte, readiness polling, and the
// two download clients (curl processes, or Node http.get in this process).

import http from 'node:http';
import { nowMs } from './stats.js';
import { sleep, startProcess, type Proc } from './proc.js';

export const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });

export interface Timed<T> {
  status: number;
  ms: number;
  body: T;
  bytes: number;
}

/** Error of an HTTP step, carrying what the server said. */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: string,
  ) {
    super(message);
  }
}

/**
 * One request; the time is from sending to the last byte of the body (parsing happens after,
 * outside the timed span). `json` parses the body and returns it.
 */
export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number; agent?: http.Agent | false; signal?: AbortSignal } = {},
): Promise<Timed<Buffer>> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const t0 = nowMs();
    const req = http.request(url, { method: opts.method ?? (payload ? 'POST' : 'GET'), headers, agent: opts.agent ?? keepAlive, signal: opts.signal }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        bytes += c.length;
      });
      res.on('end', () => {
        const ms = nowMs() - t0;
        resolve({ status: res.statusCode ?? 0, ms, body: Buffer.concat(chunks), bytes });
      });
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs ?? 60_000, () => req.destroy(new Error(`timeout after ${opts.timeoutMs ?? 60_000} ms: ${url}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** AList-style JSON API call: returns `data` when `code` is 200, throws HttpError otherwise. */
export async function apiCall<T = any>(
  base: string,
  route: string,
  opts: { token?: string; body?: unknown; method?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{ data: T; ms: number; bytes: number }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = opts.token;
  let res: Timed<Buffer>;
  try {
    res = await request(base + route, { method: opts.method, headers, body: opts.body, timeoutMs: opts.timeoutMs, signal: opts.signal });
  } catch (err) {
    throw new HttpError(`${route}: ${(err as Error).message}`);
  }
  const text = res.body.toString('utf8');
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HttpError(`${route}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`, res.status, text);
  }
  if (res.status !== 200 || json?.code !== 200) {
    throw new HttpError(`${route}: HTTP ${res.status}, code ${json?.code}, message ${JSON.stringify(json?.message ?? '')}`, res.status, text.slice(0, 500));
  }
  return { data: json.data as T, ms: res.ms, bytes: res.bytes };
}

/** Polls `url` until it answers (any status, or `expect` in the body); fails early if `proc` exits. */
export async function waitHttp(url: string, opts: { proc?: Proc; timeoutMs?: number; expect?: string; signal?: AbortSignal } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last = '';
  while (Date.now() < deadline) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (opts.proc?.done()) {
      throw new Error(`${opts.proc.name} exited (${await opts.proc.exited}) before answering ${url}:\n${opts.proc.output().slice(-2000)}`);
    }
    try {
      const r = await request(url, { timeoutMs: 2000, agent: false });
      const body = r.body.toString('utf8');
      if (!opts.expect || body.includes(opts.expect)) return;
      last = `HTTP ${r.status}: ${body.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(100, opts.signal);
  }
  throw new Error(`${url} did not answer within ${opts.timeoutMs ?? 30_000} ms (last: ${last})${opts.proc ? `\n${opts.proc.output().slice(-2000)}` : ''}`);
}

// ---------------------------------------------------------------------------------------------
// Downloads

export type ClientKind = 'curl' | 'node';

export interface DownloadResult {
  bytes: number;
  /** Seconds the client itself measured for its transfer. */
  seconds: number;
  status: number;
}

export interface ParallelResult {
  clients: number;
  /** Wall time from starting the first client to the end of the last, seconds. */
  wallS: number;
  totalBytes: number;
  /** totalBytes / wallS in MB/s (10^6 bytes); for one client, over the client's own time. */
  mbps: number;
  perClientMbps: number[];
}

function curlDownload(url: string, timeoutS: number, signal?: AbortSignal): Promise<DownloadResult> {
  const p = startProcess('curl', 'curl', [
    '-sS',
    '-L',
    '--max-redirs',
    '2',
    '-o',
    '/dev/null',
    '--max-time',
    String(timeoutS),
    '-w',
    '%{http_code} %{size_download} %{time_total}\\n',
    url,
  ]);
  const onAbort = () => void p.stop(1000);
  signal?.addEventListener('abort', onAbort, { once: true });
  return p.exited.then(async (code) => {
    signal?.removeEventListener('abort', onAbort);
    const out = p.output().trim();
    await p.stop();
    if (signal?.aborted) throw signal.reason;
    const m = /(\d{3}) (\d+) ([\d.]+)\s*$/.exec(out);
    if (code !== 0 || !m) throw new Error(`curl exited ${code}: ${out.slice(-300)}`);
    return { status: Number(m[1]), bytes: Number(m[2]), seconds: Number(m[3]) };
  });
}

function nodeDownload(url: string, timeoutS: number, signal?: AbortSignal, redirects = 2): Promise<DownloadResult> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const req = http.get(url, { agent: false, signal }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && redirects > 0) {
        res.resume();
        const next = new URL(res.headers.location, url).toString();
        nodeDownload(next, timeoutS, signal, redirects - 1).then(resolve, reject);
        return;
      }
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status, bytes, seconds: (nowMs() - t0) / 1000 }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutS * 1000, () => req.destroy(new Error(`download timed out after ${timeoutS} s`)));
    req.on('error', reject);
  });
}

/**
 * `clients` simultaneous full downloads of `url`; each must answer 200 with exactly
 * `expectBytes` bytes or the whole run fails.
 */
export async function parallelDownload(
  kind: ClientKind,
  url: string,
  clients: number,
  expectBytes: number,
  timeoutS: number,
  signal?: AbortSignal,
): Promise<ParallelResult> {
  const one = kind === 'curl' ? curlDownload : nodeDownload;
  const t0 = nowMs();
  const settled = await Promise.allSettled(Array.from({ length: clients }, () => one(url, timeoutS, signal)));
  const wallS = (nowMs() - t0) / 1000;
  if (signal?.aborted) throw signal.reason;
  const failures = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failures.length) throw new Error(`${failures.length}/${clients} downloads failed: ${(failures[0]!.reason as Error).message}`);
  const results = settled.map((s) => (s as PromiseFulfilledResult<DownloadResult>).value);
  for (const r of results) {
    if (r.status !== 200) throw new Error(`download answered HTTP ${r.status} (${r.bytes} bytes)`);
    if (r.bytes !== expectBytes) throw new Error(`download got ${r.bytes} bytes, expected ${expectBytes}`);
  }
  const totalBytes = results.reduce((a, r) => a + r.bytes, 0);
  // One client: its own transfer time (a curl process takes a few ms to start, which would
  // weigh on a small quick-mode file). Several: bytes over the wall time of the whole batch.
  const seconds = clients === 1 ? results[0]!.seconds : wallS;
  return {
    clients,
    wallS,
    totalBytes,
    mbps: totalBytes / 1e6 / seconds,
    perClientMbps: results.map((r) => r.bytes / 1e6 / r.seconds),
  };
}

/** GET with a Range header; returns status and body (for a correctness check of each server). */
export async function rangeGet(url: string, start: number, end: number): Promise<{ status: number; body: Buffer; location?: string }> {
  let target = url;
  for (let i = 0; i < 3; i++) {
    const res = await new Promise<{ status: number; body: Buffer; location?: string }>((resolve, reject) => {
      const req = http.get(target, { agent: false, headers: { range: `bytes=${start}-${end}` } }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: Buffer.concat(chunks), location: r.headers.location }));
        r.on('error', reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error('range request timed out')));
      req.on('error', reject);
    });
    if (res.status >= 300 && res.status < 400 && res.location) {
      target = new URL(res.location, target).toString();
      continue;
    }
    return res;
  }
  throw new Error('too many redirects');
}

// ---------------------------------------------------------------------------------------------
// Uploads

export interface UploadResult {
  status: number;
  /** Response body (small: JSON of the AList API, or nothing / a short page for WebDAV). */
  body: string;
  /** Bytes curl sent (%{size_upload}). */
  bytes: number;
  /** curl's own %{time_total}: connect, send the body, receive the answer (no process start-up). */
  seconds: number;
}

/**
 * `curl -sS -T <file> [-H …] <url>`: a PUT of the file with Content-Length (curl's default
 * `Expect: 100-continue` included). Rejects when curl fails; the HTTP status is for the caller
 * to check.
 */
export function curlUpload(url: string, file: string, opts: { headers?: Record<string, string>; timeoutS: number; signal?: AbortSignal; limitRate?: string }): Promise<UploadResult> {
  const args = ['-sS', '-T', file, '--max-time', String(opts.timeoutS), '-w', '\\n@@curl %{http_code} %{size_upload} %{time_total}\\n'];
  if (opts.limitRate) args.push('--limit-rate', opts.limitRate);
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const p = startProcess('curl', 'curl', args);
  const onAbort = () => void p.stop(1000);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  return p.exited.then(async (code) => {
    opts.signal?.removeEventListener('abort', onAbort);
    const out = p.output();
    await p.stop();
    if (opts.signal?.aborted) throw opts.signal.reason;
    const m = /@@curl (\d{3}) (\d+) ([\d.]+)\s*$/.exec(out);
    if (code !== 0 || !m) throw new Error(`curl -T exited ${code}: ${out.trim().slice(-300)}`);
    return { status: Number(m[1]), body: out.slice(0, m.index).trim(), bytes: Number(m[2]), seconds: Number(m[3]) };
  });
}
