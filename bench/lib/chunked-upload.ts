// OpenList's chunked upload as a client drives it: init, one PUT per chunk, complete. Two clients:
//   - curlChunkedUpload (the `write` area's chunked row): the chunks are sent by one curl process,
//     one `-T` per chunk (`--next`), from files holding the chunks' bytes (splitChunks, untimed),
//     one at a time on one keep-alive connection or several at a time (`--parallel`), as OpenList's
//     web front end and Atrium's web UI send three (web/src/chunked-upload.ts); the same client
//     program, reading files the same way, as the single PUT row's `curl -T`, so the two rows
//     differ only in the protocol.
//   - chunkedUpload (BENCH_CHUNK_CLIENT=node): Node's http client, one chunk at a time; each chunk
//     is read into one buffer and sent whole, as a browser sends a Blob slice, the next read while
//     one is sent. On the 2-core VM its 16 MiB reads and copies compete with the server for the
//     CPU (the same server ran 0.66x the single PUT with it against 0.8x with curl, in one session).

import { open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { runCommand } from './proc.js';

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

/** `multipart/init` of an upload; its answer's data. */
async function initUpload(base: string, token: string, virtualPath: string, size: number, chunkSize: number, signal?: AbortSignal) {
  const headers = { authorization: token, 'file-path': encodeURIComponent(virtualPath), 'x-file-size': String(size), 'x-chunk-size': String(chunkSize) };
  return ok('multipart/init', await call(`${base}/api/fs/multipart/init`, 'POST', headers, undefined, signal));
}

/** `multipart/complete`: an error unless the upload is completed. */
async function completeUpload(base: string, token: string, id: string, signal?: AbortSignal): Promise<void> {
  const done = ok('multipart/complete', await call(`${base}/api/fs/multipart/complete`, 'POST', { authorization: token, 'x-upload-id': id }, undefined, signal));
  if (done.state !== 'completed') throw new Error(`multipart/complete answered state ${done.state}`);
}

/** Uploads `file` (`size` bytes) to `virtualPath` in chunks of `chunkSize`; returns the seconds from init to complete. */
export async function chunkedUpload(base: string, token: string, file: string, size: number, virtualPath: string, chunkSize: number, signal?: AbortSignal): Promise<number> {
  const auth = { authorization: token };
  const t0 = performance.now();
  const init = await initUpload(base, token, virtualPath, size, chunkSize, signal);
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
  await completeUpload(base, token, id, signal);
  return (performance.now() - t0) / 1000;
}

/**
 * Writes the chunks of `file` as files of their own in `dir` (`split -b`), for curl's `-T`;
 * returns their paths in order. Untimed preparation, like the source file itself.
 */
export async function splitChunks(file: string, chunkSize: number, dir: string): Promise<string[]> {
  const r = await runCommand('split', 'split', ['-b', String(chunkSize), '-d', '-a', '5', file, path.join(dir, 'chunk.')], { timeoutMs: 600_000 });
  if (r.code !== 0) throw new Error(`split -b ${chunkSize} ${file}: exit ${r.code}: ${r.output.slice(-300)}`);
  return (await readdir(dir))
    .filter((n) => n.startsWith('chunk.'))
    .sort()
    .map((n) => path.join(dir, n));
}

/** The line curl writes after each chunk's answer (`-w`): the status and the bytes sent. */
const ANSWER_MARK = '@@chunk-answer';
const ANSWER_LINE = new RegExp(`\\n${ANSWER_MARK} (\\d{3}) (\\d+)\\n`, 'g');

/** One chunk's request for sendChunksWithCurl: where it goes and its headers. */
export interface ChunkRequest {
  url: string;
  headers: Record<string, string>;
}

/** What every answer to a chunk must be: one of `statuses`; with `body`, a JSON body it accepts (undefined) or the reason it does not. */
export interface ChunkAnswerCheck {
  statuses: number[];
  body?: (json: unknown) => string | undefined;
}

/**
 * The JSON texts `text` holds one after the other (answers curl wrote back to back, with nothing
 * or white space between them); an error when anything else is there.
 */
export function splitJsonTexts(text: string): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    if (text[i] !== '{' && text[i] !== '[') throw new Error(`not a JSON object or array at ${i}: ${JSON.stringify(text.slice(i, i + 80))}`);
    let depth = 0;
    let inString = false;
    let j = i;
    for (; j < text.length; j++) {
      const c = text[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (--depth === 0) break;
      }
    }
    if (j >= text.length) throw new Error(`a JSON text cut short at ${i}: ${JSON.stringify(text.slice(i, i + 80))}`);
    out.push(JSON.parse(text.slice(i, j + 1)));
    i = j + 1;
  }
  return out;
}

/**
 * Sends the chunk files, each as a PUT (`-T`) of its own, from one curl process: with `inflight`
 * 1 (the default) one after the other on one keep-alive connection; with more, that many at a time
 * on as many connections (curl's `--parallel`), started in ascending order, as OpenList's web front
 * end and Atrium's web UI send them (three). Every answer is checked (`check`), and the bytes curl
 * sent in all must be `opts.bytes`. The answers go to curl's output, each followed by a line of
 * its own with its status and the bytes sent (as a browser keeps an answer in memory: no file per
 * chunk on the client's side). With several in flight two answers' bodies may come before their
 * lines, so the bodies are checked as the JSON texts of the whole output, not each by its line.
 */
export async function sendChunksWithCurl(
  chunks: string[],
  request: (i: number) => ChunkRequest,
  check: ChunkAnswerCheck,
  opts: { bytes: number; timeoutS: number; inflight?: number; signal?: AbortSignal; limitRate?: string },
): Promise<void> {
  const inflight = opts.inflight ?? 1;
  if (!Number.isInteger(inflight) || inflight < 1) throw new Error(`chunks in flight must be a whole number from 1, not ${inflight}`);
  const args: string[] = inflight > 1 ? ['--parallel', '--parallel-immediate', '--parallel-max', String(inflight)] : [];
  chunks.forEach((file, i) => {
    const { url, headers } = request(i);
    if (i > 0) args.push('--next');
    args.push('-sS', '--max-time', String(opts.timeoutS), '-T', file, '-w', `\n${ANSWER_MARK} %{http_code} %{size_upload}\n`);
    if (opts.limitRate) args.push('--limit-rate', opts.limitRate);
    for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
    args.push(url);
  });
  // curl's output goes to a file: the process output kept in memory is only its last 16 KiB.
  const report = `${chunks[0]}.report`;
  const r = await runCommand('curl chunks', 'bash', ['-c', 'exec curl "$@" > "$0"', report, ...args], { timeoutMs: opts.timeoutS * 1000, signal: opts.signal });
  const out = await readFile(report, 'utf8').catch(() => '');
  await rm(report, { force: true });
  const marks = [...out.matchAll(ANSWER_LINE)].map((m) => ({ status: Number(m[1]), bytes: Number(m[2]) }));
  if (r.code !== 0 || marks.length !== chunks.length) throw new Error(`curl (${chunks.length} chunks, ${inflight} in flight) exited ${r.code} after ${marks.length} answers: ${r.output.trim().slice(-300)}`);
  const bad = marks.findIndex((m) => !check.statuses.includes(m.status));
  if (bad >= 0) throw new Error(`answer ${bad + 1} of ${marks.length}: HTTP ${marks[bad]!.status}, not ${check.statuses.join(' or ')}`);
  if (check.body) {
    const texts = splitJsonTexts(out.replace(ANSWER_LINE, '\n'));
    if (texts.length !== chunks.length) throw new Error(`${texts.length} JSON answers for ${chunks.length} chunks`);
    texts.forEach((json, k) => {
      const why = check.body!(json);
      if (why) throw new Error(`answer ${k + 1} of ${texts.length}: ${why}: ${JSON.stringify(json).slice(0, 200)}`);
    });
  }
  const sent = marks.reduce((n, m) => n + m.bytes, 0);
  if (sent !== opts.bytes) throw new Error(`curl sent ${sent} bytes, expected ${opts.bytes}`);
}

/**
 * Uploads the chunk files (the chunks of a `size`-byte file, in order) to `virtualPath`: init,
 * every chunk from one curl process (`opts.inflight` at a time, default 1), complete; returns the
 * seconds from init to complete (curl's start-up included). Checks every chunk's answer.
 */
export async function curlChunkedUpload(
  base: string,
  token: string,
  chunks: string[],
  size: number,
  virtualPath: string,
  chunkSize: number,
  opts: { timeoutS: number; inflight?: number; signal?: AbortSignal; limitRate?: string },
): Promise<number> {
  const t0 = performance.now();
  const init = await initUpload(base, token, virtualPath, size, chunkSize, opts.signal);
  const id = init.upload_id as string;
  if (init.total_chunks !== chunks.length) throw new Error(`multipart/init answered ${init.total_chunks} chunks, the client has ${chunks.length}`);
  await sendChunksWithCurl(
    chunks,
    (i) => ({ url: `${base}/api/fs/multipart/chunk`, headers: { Authorization: token, 'X-Upload-Id': id, 'X-Chunk-Index': String(i) } }),
    { statuses: [200], body: (json) => ((json as { code?: unknown }).code === 200 ? undefined : 'envelope code is not 200') },
    { ...opts, bytes: size },
  );
  await completeUpload(base, token, id, opts.signal);
  return (performance.now() - t0) / 1000;
}
