import { createReadStream } from 'node:fs';
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { BadRequest, Missing, TooLarge } from '../errors.js';
import { type ArchiveEntry, safeInnerPath } from './entries.js';
import { type OpenedArchive, under, wrongPassword } from './reader.js';
import type { ByteSource } from './source.js';

/**
 * The worker that runs unrar (node-unrar-js: rarlab's unrar compiled to WebAssembly). unrar works
 * synchronously on files, so it runs off the main thread; it lists, or extracts the named
 * entries into a folder, stopping once `maxBytes` were written (bomb limit).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const path = require('node:path');
const { lib, op, file, password, target, wanted, maxBytes } = workerData;
const { ExtractorFile } = require(path.join(path.dirname(lib), 'js', 'ExtractorFile.js'));
const { getUnrar } = require(path.join(path.dirname(lib), 'js', 'unrar.singleton.js'));
let written = 0;
class Bounded extends ExtractorFile {
  write(fd, buf, size) {
    written += size;
    if (maxBytes > 0 && written > maxBytes) { parentPort.postMessage({ type: 'toolarge' }); return false; }
    return super.write(fd, buf, size);
  }
}
(async () => {
  try {
    const unrar = await getUnrar();
    const names = new Map(wanted ? wanted.map((w) => [w[0], w[1]]) : []);
    const ex = new Bounded(unrar, file, target || '', password || '', (n) => names.get(n) || '_');
    unrar.extractor = ex;
    if (op === 'list') {
      const list = ex.getFileList();
      let batch = [];
      for (const h of list.fileHeaders) {
        batch.push([h.name, h.unpSize, h.flags.directory, h.flags.encrypted, h.time]);
        if (batch.length >= 2000) { parentPort.postMessage({ type: 'entries', batch }); batch = []; }
      }
      parentPort.postMessage({ type: 'entries', batch });
      parentPort.postMessage({ type: 'done', comment: list.arcHeader.comment || '' });
    } else {
      const out = ex.extract({ files: (h) => names.has(h.name) && !h.flags.directory });
      for (const f of out.files) parentPort.postMessage({ type: 'file', name: f.fileHeader.name });
      parentPort.postMessage({ type: 'done' });
    }
  } catch (err) {
    parentPort.postMessage({ type: 'error', reason: err && err.reason, message: String(err && err.message) });
  }
})();
`;

const lib = () => createRequire(import.meta.url).resolve('node-unrar-js');

interface RunOptions {
  op: 'list' | 'extract';
  file: string;
  password: string;
  target?: string;
  /** [raw name in the archive, path relative to `target`]. */
  wanted?: Array<[string, string]>;
  maxBytes?: number;
  signal?: AbortSignal;
  onMessage?(m: { type: string; batch?: unknown[][]; name?: string }): void;
}

/** Runs one unrar job in a worker; its password errors answer 202, its other errors 400. */
function runUnrar(o: RunOptions): Promise<{ comment?: string }> {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { lib: lib(), op: o.op, file: o.file, password: o.password, target: o.target, wanted: o.wanted, maxBytes: o.maxBytes ?? 0 },
  });
  let abort = () => {};
  return new Promise<{ comment?: string }>((resolve, reject) => {
    let tooLarge = false;
    abort = () => reject(o.signal!.reason ?? new Error('aborted'));
    o.signal?.addEventListener('abort', abort, { once: true });
    worker.on('message', (m: { type: string; reason?: string; message?: string; comment?: string }) => {
      if (m.type === 'toolarge') tooLarge = true;
      else if (m.type === 'done') resolve({ comment: m.comment });
      else if (m.type === 'error') {
        if (tooLarge) reject(new TooLarge(`the archive expands to more than ${o.maxBytes} bytes (setting archive_max_size)`));
        else if (m.reason === 'ERAR_MISSING_PASSWORD' || m.reason === 'ERAR_BAD_PASSWORD') reject(wrongPassword());
        else reject(new BadRequest(`not a readable rar archive: ${m.message}`));
      } else o.onMessage?.(m);
    });
    worker.on('error', (err) => reject(new BadRequest(`unrar failed: ${err.message}`)));
    worker.on('exit', () => reject(new BadRequest('unrar stopped')));
  }).finally(() => {
    o.signal?.removeEventListener('abort', abort);
    void worker.terminate();
  });
}

/**
 * rar (RAR 4 and RAR 5, encrypted files and encrypted headers) through node-unrar-js. unrar reads
 * a seekable file, so the archive is first copied into a private folder under temp_dir (removed on
 * close); entries are extracted there by the worker and streamed from it.
 */
export async function openRar(source: ByteSource, tempDir: string, password: string, maxBytes: number): Promise<OpenedArchive> {
  const { dir, file } = await source.toTempFile(tempDir, '.rar');
  try {
    const entries: ArchiveEntry[] = [];
    const refused: string[] = [];
    const rawName = new Map<string, string>();
    const { comment } = await runUnrar({
      op: 'list',
      file,
      password,
      onMessage: (m) => {
        for (const [name, size, isDir, encrypted, time] of (m.batch ?? []) as Array<[string, number, boolean, boolean, string]>) {
          const p = safeInnerPath(name);
          if (!p) {
            refused.push(name);
            continue;
          }
          const modified = new Date(time).getTime();
          entries.push({ path: p, size, isDir, modified: Number.isNaN(modified) ? 0 : modified, encrypted });
          rawName.set(p, name);
        }
      },
    });
    let jobs = 0;
    /** Extracts the entries into a fresh folder of `dir`; `each` gets each file as it is written. */
    const extractTo = async (wanted: ArchiveEntry[], pass: string, each: (e: ArchiveEntry, file: string) => Promise<void>, signal?: AbortSignal) => {
      if (wanted.some((e) => e.encrypted) && !pass) throw wrongPassword();
      const out = path.join(dir, `x${jobs++}`);
      const byRaw = new Map(wanted.map((e) => [rawName.get(e.path)!, e]));
      const done: Array<Promise<void>> = [];
      try {
        await runUnrar({
          op: 'extract',
          file,
          password: pass,
          target: out,
          wanted: wanted.map((e, i) => [rawName.get(e.path)!, String(i)]),
          maxBytes,
          signal,
          onMessage: (m) => {
            const e = m.name === undefined ? undefined : byRaw.get(m.name);
            if (e) done.push(each(e, path.join(out, String(wanted.indexOf(e)))));
          },
        });
        await Promise.all(done);
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    };
    return {
      comment: comment ?? '',
      encrypted: entries.some((e) => e.encrypted),
      entries,
      count: entries.length,
      refused,
      async open(inner, pass, signal) {
        const e = entries.find((x) => x.path === inner && !x.isDir);
        if (!e) throw new Missing(`${inner} is not a file in the archive`);
        // Extracted into a folder of its own that lives as long as the stream.
        const own = await mkdtemp(path.join(dir, 'one-'));
        let body: Readable | undefined;
        try {
          await extractTo([e], pass, (_e, f) => rename(f, path.join(own, 'entry')).catch(() => undefined), signal);
          if (!(await stat(path.join(own, 'entry')).then((st) => st.isFile(), () => false))) throw new Missing(`${inner} is not a file unrar can write`);
          body = createReadStream(path.join(own, 'entry'));
        } finally {
          if (!body) await rm(own, { recursive: true, force: true });
        }
        body.on('close', () => void rm(own, { recursive: true, force: true }));
        return body;
      },
      async extract(prefix, pass, each, signal) {
        const wanted = entries.filter((e) => !e.isDir && under(prefix, e.path));
        // One worker run for all of them; each file is handed on in archive order once written.
        let chain = Promise.resolve();
        // An entry unrar wrote no file for (a link: only regular files are written here) is skipped.
        const handOn = (e: ArchiveEntry, f: string) => stat(f).then((st) => (st.isFile() ? each(e, createReadStream(f)) : undefined), () => undefined);
        await extractTo(wanted, pass, (e, f) => (chain = chain.then(() => handOn(e, f))), signal);
        await chain;
      },
      close: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
