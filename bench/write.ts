// Area `write`: uploads and copies (issue: "Upload of a 1 GiB file via /api/fs/put compared in
// one run with writing the same bytes with `curl -T` to nginx's WebDAV PUT (or `rclone serve
// webdav`), and with a raw `cat > file` on the same disk. Target: at least 70% of raw disk
// throughput; peak RSS under 150 MB. Copy of a folder of 10 000 small files within a local
// storage within 1.5x of `cp -r`.").
//
// Targets checked (issue 25 tightened issue 12's):
//   - upload through PUT /api/fs/put (curl -T): ≥ 0.90× the MB/s of nginx's WebDAV PUT (issue 12:
//     ≥ 0.70× `cat src > dst`, which copies inside the kernel; still shown for reference)
//   - Atrium's peak RSS while it receives the single PUTs < 120 MB (issue 12: < 150 MB)
//   - issue 21: 1 GiB in 16 MiB chunks (OpenList's multipart routes) ≥ 0.80× the single PUT of the
//     same run (pairs of the two back to back, median of the pairs' ratios; chunks sent by curl),
//     Atrium's peak RSS while it receives the chunked uploads < 150 MB; the same chunk files are sent
//     the same way, in pairs with a single PUT, to nginx and to a bare node:http server
//     (lib/node-floor-server.ts) in the same repetitions: references for what the requests cost
//   - POST /api/fs/copy of a folder of 10 000 small files (same Local storage): ≤ 1.5× `cp -r`
//
// Nothing is fsync'ed by default (Atrium does not, nor do nginx, rclone, cat or dd): every
// writer is timed until its data is in the page cache and the file is in place.
// BENCH_WRITE_FSYNC=1 adds a timed `sync <file>` after every write, for all of them.
//
// Two properties of the VM this was written on make naive repetitions unfair (see docs/benchmarks.md):
//   - memory freed by the guest is handed back to the host (free page reporting) and the first
//     touch of such a page is slow, ~1.1 s of kernel time per GiB written. Every timed write is
//     therefore preceded by an untimed `dd` of as many bytes to a scratch file, deleted at once
//     ("prefault"; BENCH_PREFAULT=0 turns it off), so each writer gets the same recycled pages;
//     and the run holds freed memory in the guest for two minutes (lib/page-reporting.ts):
//     without that the host took 40 % of the freed pages back within 0.5 s, and how much of its
//     write landed on them depended on each writer's speed (a slower writer found fewer).
//   - ext4 without a journal skips inodes deleted in the last 60-360 s when it allocates new
//     ones (recently_deleted()), so creating 10 000 files right after deleting 10 000 costs
//     several times more. The copies are therefore never deleted between repetitions (each
//     goes to a new folder); they are removed at the end, Atrium's through /api/fs/remove.
//
// Every Atrium step that fails (endpoint missing, wrong answer, wrong bytes on disk) becomes an
// error row and the other benchmarks go on; the peers fail the same way, independently.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiCall, curlUpload, request } from './lib/http.js';
import { chunkedUpload, curlChunkedUpload, sendChunksWithCurl, splitChunks, type ChunkRequest } from './lib/chunked-upload.js';
import { countEntries, createBigFile, createSmallFiles, headTailDigest, warmPageCache } from './lib/files.js';
import { groupCpuSeconds, makeTempDir, removeTempDir, rssOf, runCommand, sampleRss, sleep, timedBash } from './lib/proc.js';
import { startAtrium, startNginxDav, startNodeFloor, startRcloneWebdav, versionOf, which, type Atrium, type Server } from './lib/servers.js';
import { fmtBytes, fmtNum, GiB, median, MiB, nowMs } from './lib/stats.js';
import { envInt } from './lib/params.js';
import { errorText, machine, shortError } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule, SummaryRow } from './lib/types.js';
import { auditFeature, onOffPairs } from './lib/on-off-pairs.js';

/** See read.ts: the admin password only counts on the first start of a data folder. */
const adminPassword = randomBytes(12).toString('base64url');

interface Params {
  fileSize: number;
  /** Timed repetitions of each writer; the median is reported. */
  uploadReps: number;
  copyFiles: number;
  copyReps: number;
  /** Add a timed `sync <file>` after every write. */
  fsync: boolean;
  /** Untimed write + delete of a scratch file of the same size right before each timed write. */
  prefault: boolean;
  /** The chunked row's client: curl (default) or Node's http client (BENCH_CHUNK_CLIENT=node). */
  chunkClient: 'curl' | 'node';
  /** curl's `--limit-rate` for every upload (BENCH_UPLOAD_RATE, e.g. 400M): a link slower than loopback. */
  uploadRate?: string;
  /** Chunks in flight at a time in the chunked rows (BENCH_CHUNK_INFLIGHT, default 1; the web UIs send 3). */
  chunkInflight: number;
}

function params(quick: boolean): Params {
  const fileMiB = envInt('BENCH_FILE_MIB');
  return {
    fileSize: fileMiB ? fileMiB * MiB : quick ? 64 * MiB : GiB,
    uploadReps: envInt('BENCH_REPS') ?? (quick ? 5 : 3),
    copyFiles: envInt('BENCH_COPY_FILES') ?? (quick ? 1_000 : 10_000),
    copyReps: envInt('BENCH_REPS') ?? 3,
    fsync: process.env.BENCH_WRITE_FSYNC === '1' || process.env.BENCH_WRITE_FSYNC === 'true',
    prefault: process.env.BENCH_PREFAULT !== '0' && process.env.BENCH_PREFAULT !== 'false',
    chunkClient: process.env.BENCH_CHUNK_CLIENT === 'node' ? 'node' : 'curl',
    uploadRate: uploadRate(),
    chunkInflight: chunkInflight(),
  };
}

/**
 * BENCH_CHUNK_INFLIGHT: 1 by default (one chunk after the other, as a tus client sends them; the
 * figures of the earlier rounds), 3 as OpenList's web front end and Atrium's web UI send them;
 * always 1 for Node's chunk client, which sends one at a time.
 */
function chunkInflight(): number {
  const n = envInt('BENCH_CHUNK_INFLIGHT');
  if (n !== undefined && n < 1) throw new Error(`BENCH_CHUNK_INFLIGHT must be at least 1, not ${n}`);
  if (process.env.BENCH_CHUNK_CLIENT === 'node') {
    if (n !== undefined && n > 1) throw new Error("BENCH_CHUNK_CLIENT=node sends one chunk at a time; it does not combine with BENCH_CHUNK_INFLIGHT above 1");
    return 1;
  }
  return n ?? 1;
}

/**
 * curl's `--limit-rate` for each of `inflight` transfers at a time sharing a link of `rate`
 * (curl limits each transfer on its own): the rate divided among them, in bytes per second.
 */
function perTransferRate(rate: string | undefined, inflight: number): string | undefined {
  if (!rate || inflight === 1) return rate;
  return String(Math.max(1, Math.floor(rateBytes(rate) / inflight)));
}

/** BENCH_UPLOAD_RATE as curl's `--limit-rate` takes it (bytes per second, suffix k, M or G). */
function uploadRate(): string | undefined {
  const v = process.env.BENCH_UPLOAD_RATE?.trim();
  if (!v) return undefined;
  if (!/^[1-9]\d*[kKmMgG]?$/.test(v)) throw new Error(`BENCH_UPLOAD_RATE must be a rate as curl's --limit-rate takes it (400M, 50000k), not ${JSON.stringify(v)}`);
  // Node's chunk client has no rate limit: the two rows would not share the link.
  if (process.env.BENCH_CHUNK_CLIENT === 'node') throw new Error('BENCH_UPLOAD_RATE limits curl uploads only; it does not combine with BENCH_CHUNK_CLIENT=node');
  return v;
}

/** Bytes per second of a `--limit-rate` value (curl counts k, M and G in powers of 1024). */
function rateBytes(rate: string): number {
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[rate.slice(-1).toLowerCase()];
  return unit ? Number(rate.slice(0, -1)) * unit : Number(rate);
}

/** Generous per-run time limit: at least 120 s, or the bytes at 10 MB/s (or at half the upload rate, when slower). */
function timeoutSFor(bytes: number, rate?: string): number {
  const slowest = Math.min(10e6, rate ? rateBytes(rate) / 2 : Infinity);
  return Math.max(120, Math.ceil(bytes / slowest));
}

/** `sync` of the whole system, untimed, between runs: every run starts with no dirty pages. */
async function syncAll(): Promise<void> {
  await runCommand('sync', 'sync', [], { timeoutMs: 300_000 });
}

/**
 * Untimed: writes `bytes` (rounded up to MiB) of `src` to `scratch` and deletes it, so that the
 * next write finds that much just-freed memory that the host still backs (see the header).
 */
async function prefault(src: string, scratch: string, bytes: number): Promise<void> {
  const mib = String(Math.max(1, Math.ceil(bytes / MiB)));
  const r = await runCommand('prefault', 'bash', ['-c', 'dd if="$1" of="$2" bs=1M count="$3" status=none; rc=$?; rm -f -- "$2"; exit $rc', 'prefault', src, scratch, mib], {
    timeoutMs: 600_000,
  });
  if (r.code !== 0) throw new Error(`prefault (dd to ${scratch}): exit ${r.code}: ${r.output.slice(-300)}`);
}

/** `<source> <fstype>` of the filesystem holding `dir`, and whether it has a journal (ext4). */
async function describeFs(dir: string): Promise<string> {
  const r = await runCommand('findmnt', 'findmnt', ['-no', 'SOURCE,FSTYPE,OPTIONS', '-T', dir], { timeoutMs: 5000 }).catch(() => undefined);
  if (r?.code !== 0) return '?';
  const [source = '?', fstype = '?', options = ''] = r.output.trim().split(/\s+/);
  let journal = '';
  if (fstype === 'ext4') {
    const dev = path.basename(source);
    const jbd2 = (() => {
      try {
        return readdirSync('/proc/fs/jbd2');
      } catch {
        return [];
      }
    })();
    journal = jbd2.some((j) => j.startsWith(`${dev}-`)) ? ', with a journal' : ', NO journal (recently deleted inodes are skipped on create)';
  }
  return `${source} ${fstype} (${options.split(',').filter((o) => /^(discard|nodelalloc|sync|data=|commit=)/.test(o)).join(',') || 'default options'}${journal})`;
}

// -----------------------------------------------------------------------------------------------

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const P = params(ctx.quick);
  const { signal } = ctx;
  result.parameters = {
    file_size: fmtBytes(P.fileSize),
    upload_reps: P.uploadReps,
    copy_files: P.copyFiles,
    copy_reps: P.copyReps,
    fsync: P.fsync,
    prefault: P.prefault,
    upload_rate: P.uploadRate
      ? `curl --limit-rate ${P.uploadRate} on every upload (BENCH_UPLOAD_RATE; chunks in flight share it)`
      : 'unlimited (loopback)',
    chunks_in_flight: P.chunkInflight,
  };
  const [nginxPath, rclonePath, curlPath] = await Promise.all([which('nginx'), which('rclone'), which('curl')]);
  if (!curlPath) throw new Error('curl is missing: run bench/setup.sh');
  const tmp = makeTempDir('atrium-bench-write-');
  result.environment = {
    ...machine(),
    temp_folder: `${tmp} on ${await describeFs(tmp)}: every file is written here, same filesystem for all writers`,
    nginx: nginxPath ? await versionOf('nginx', ['-v']) : 'missing (run bench/setup.sh)',
    rclone: rclonePath ? await versionOf('rclone', ['version']) : 'missing (run bench/setup.sh)',
    upload_client: (await versionOf('curl', ['--version'])).split(' ').slice(0, 2).join(' '),
    coreutils: await versionOf('cat', ['--version']),
    durability: P.fsync
      ? 'BENCH_WRITE_FSYNC=1: every write is followed by a timed `sync <file>` (data on disk)'
      : 'no fsync for any writer: timed until the data is in the page cache and the file in place; `sync` (untimed) between runs',
    prefault: P.prefault
      ? 'before each write, an untimed dd of as many bytes to a scratch file, deleted at once (BENCH_PREFAULT=0: off)'
      : 'off (BENCH_PREFAULT=0): results depend on how long the VM was idle before each write',
    units: 'MB = 10^6 bytes; MB/s = file size / seconds of the write',
    loadavg_at_start: loadavg(),
  };

  try {
    const dataDir = path.join(tmp, 'data');
    const filesDir = path.join(dataDir, 'files');
    const srcDir = path.join(tmp, 'src');
    const copyTags = copyRunTags(P);
    const dirs = ['up-atrium', 'up-nginx', 'up-node', 'up-rclone', 'up-raw', 'copy-src', ...copyTags.flatMap((t) => [`copy-dst/${t}`, `copy-cp/${t}`])];
    for (const d of [filesDir, srcDir, ...dirs.map((n) => path.join(filesDir, n))]) mkdirSync(d, { recursive: true });

    // Fixtures: the source file (outside Atrium's root, same filesystem), the folder to copy.
    const srcFile = path.join(srcDir, 'source.bin');
    {
      const t0 = nowMs();
      await createBigFile(srcFile, P.fileSize, signal);
      await syncAll();
      await warmPageCache(srcFile);
      ctx.log(`wrote, synced and read ${fmtBytes(P.fileSize)} source.bin in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    }
    // The chunked row's curl sends each chunk from a file of its own (same bytes, in the page cache).
    const chunkFiles: string[] = [];
    if (P.chunkClient === 'curl') {
      const chunkDir = path.join(srcDir, 'chunks');
      mkdirSync(chunkDir, { recursive: true });
      chunkFiles.push(...(await splitChunks(srcFile, CHUNK, chunkDir)));
      await syncAll();
      for (const f of chunkFiles) await warmPageCache(f);
    }
    const copySrc = path.join(filesDir, 'copy-src', 'tree');
    {
      const t0 = nowMs();
      await createSmallFiles(copySrc, P.copyFiles, signal);
      await syncAll();
      ctx.log(`created ${P.copyFiles} files to copy in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    }

    // One Atrium for both benchmarks (a fresh process: the uploads come first).
    let atrium: Atrium | undefined;
    let atriumError: string | undefined;
    let idleRss: number | undefined;
    if (ctx.atriumBuildError) atriumError = `build: ${ctx.atriumBuildError}`;
    else {
      try {
        atrium = await startAtrium(ctx.repoRoot, dataDir, { signal, password: adminPassword });
        await sleep(1000, signal);
        idleRss = await rssOf(atrium.proc.pid);
      } catch (err) {
        atriumError = `start/login: ${errorText(err)}`;
      }
    }
    try {
      await uploadBenchmarks(ctx, result, P, { atrium, atriumError, idleRss, filesDir, srcFile, chunkFiles, scratch: path.join(tmp, 'prefault.bin'), work: tmp, have: { nginx: Boolean(nginxPath), rclone: Boolean(rclonePath) } });
      signal.throwIfAborted();
      await copyBenchmarks(ctx, result, P, { atrium, atriumError, filesDir, copySrc, srcFile, scratch: path.join(tmp, 'prefault.bin'), tags: copyTags });
      signal.throwIfAborted();
      if (atrium) await auditBenchmarks(ctx, result, P, atrium, srcFile, filesDir);
      signal.throwIfAborted();
      if (atrium) await quotaBenchmarks(ctx, result, P, atrium, srcFile, filesDir);
    } finally {
      await atrium?.stop();
    }
  } finally {
    result.environment.loadavg_at_end = `${loadavg()} (other work on the machine skews the figures)`;
    ctx.log('removing the temp folder');
    removeTempDir(tmp);
  }
}

const loadavg = () => os.loadavg().map((v) => v.toFixed(2)).join(' / ');

// -----------------------------------------------------------------------------------------------
// Upload

type WriterName = 'atrium' | 'chunked' | 'nginx' | 'nginx-chunked' | 'node' | 'node-chunked' | 'rclone' | 'cat' | 'dd';

/**
 * The chunked uploads measured in pairs with a single PUT into the same server: Atrium's (the
 * target), and the same chunk files sent the same way to two references, nginx (a C server: what
 * 64 requests on one connection cost on this machine) and a bare Node server (what any Node
 * server pays per request; bench/lib/node-floor-server.ts).
 */
const PAIRS = [
  { chunked: 'chunked', single: 'atrium', server: 'atrium (multipart routes)' },
  { chunked: 'nginx-chunked', single: 'nginx', server: 'nginx' },
  { chunked: 'node-chunked', single: 'node', server: 'bare node:http' },
] as const satisfies ReadonlyArray<{ chunked: WriterName; single: WriterName; server: string }>;
const CHUNKED: ReadonlySet<WriterName> = new Set(PAIRS.map((p) => p.chunked));
/** Writers timed only in pairs, not in the rotation of the peers. */
const PAIRED_ONLY: ReadonlySet<WriterName> = new Set([...CHUNKED, 'node']);

/** The chunk size of the chunked row (OpenList's multipart routes; BENCH_CHUNK_MIB, default 16). */
const CHUNK = (envInt('BENCH_CHUNK_MIB') ?? 16) * MiB;

interface Writer {
  name: WriterName;
  /** How the bytes are written, for the tables. */
  how: string;
  /** Destination folder on disk. */
  dir: string;
  server?: Server;
  error?: string;
  /** Writes the source file to `dir/<file>`; returns the seconds of the write (checks the answer). */
  write?(file: string): Promise<number>;
  /**
   * Where the bytes of `write(file)` are on disk, in order, and the folder holding them (default
   * the one file `dir/<file>`): checked (sizes, first and last MiB) and removed after each write.
   */
  written?(file: string): { files: string[]; folder: string };
}

interface RunFigures {
  seconds: number;
  mbps: number;
  /** CPU seconds of the server's process group during the write (servers only). */
  serverCpuS?: number;
}

async function uploadBenchmarks(
  ctx: BenchContext,
  result: AreaResult,
  P: Params,
  env: { atrium?: Atrium; atriumError?: string; idleRss?: number; filesDir: string; srcFile: string; chunkFiles: string[]; scratch: string; work: string; have: { nginx: boolean; rclone: boolean } },
): Promise<void> {
  const { signal } = ctx;
  const { atrium, filesDir, srcFile } = env;
  const size = P.fileSize;
  const timeoutS = timeoutSFor(size, P.uploadRate);
  const inflightText = P.chunkInflight === 1 ? 'one at a time on one connection' : `${P.chunkInflight} at a time`;
  // The chunks in flight share the link BENCH_UPLOAD_RATE stands for.
  const chunkRate = perTransferRate(P.uploadRate, P.chunkInflight);
  const expect = await headTailDigest(srcFile);
  const dir = (n: string) => path.join(filesDir, n);

  const ensure2xx = (what: string, r: { status: number; body: string; bytes: number }, ok: number[]) => {
    if (!ok.includes(r.status)) throw new Error(`${what}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
    if (r.bytes !== size) throw new Error(`${what}: curl sent ${r.bytes} bytes, expected ${size}`);
  };

  const writers: Writer[] = [
    {
      name: 'atrium',
      how: 'PUT /api/fs/put (curl -T)',
      dir: dir('up-atrium'),
      error: env.atriumError,
      server: atrium,
      write: atrium
        ? async (file) => {
            const r = await curlUpload(`${atrium.base}/api/fs/put`, srcFile, {
              headers: { Authorization: atrium.token, 'File-Path': encodeURIComponent(`/up-atrium/${file}`) },
              timeoutS,
              signal,
              limitRate: P.uploadRate,
            });
            ensure2xx('/api/fs/put', r, [200]);
            let json: any;
            try {
              json = JSON.parse(r.body);
            } catch {
              throw new Error(`/api/fs/put: HTTP 200, not JSON: ${r.body.slice(0, 200)}`);
            }
            if (json?.code !== 200) throw new Error(`/api/fs/put: code ${json?.code}, message ${JSON.stringify(json?.message)}`);
            return r.seconds;
          }
        : undefined,
    },
    {
      name: 'chunked',
      how: `multipart init + ${CHUNK / MiB} MiB chunks (${P.chunkClient === 'curl' ? `one curl, -T per chunk, ${inflightText}` : "Node's http client, one at a time"}) + complete`,
      dir: dir('up-atrium'),
      error: env.atriumError,
      server: atrium,
      write: atrium
        ? async (file) =>
            P.chunkClient === 'curl'
              ? curlChunkedUpload(atrium.base, atrium.token, env.chunkFiles, size, `/up-atrium/${file}`, CHUNK, { timeoutS, signal, inflight: P.chunkInflight, limitRate: chunkRate })
              : chunkedUpload(atrium.base, atrium.token, srcFile, size, `/up-atrium/${file}`, CHUNK, signal)
        : undefined,
    },
    { name: 'nginx', how: 'WebDAV PUT (curl -T)', dir: dir('up-nginx'), error: env.have.nginx ? undefined : 'nginx is not installed (run bench/setup.sh)' },
    {
      name: 'nginx-chunked',
      how: `the chunked row's ${CHUNK / MiB} MiB chunk files as WebDAV PUTs of their own (one curl, -T per chunk, ${inflightText}), reference`,
      dir: dir('up-nginx'),
      error: !env.have.nginx ? 'nginx is not installed (run bench/setup.sh)' : env.chunkFiles.length ? undefined : 'needs the curl chunk client (BENCH_CHUNK_CLIENT=curl)',
      // nginx stores each chunk as a file of its own, in a folder named after the file.
      written: (file) => {
        const folder = path.join(dir('up-nginx'), `${file}.parts`);
        return { files: env.chunkFiles.map((_, i) => path.join(folder, partName(i))), folder };
      },
    },
    { name: 'node', how: 'bare node:http server, PUT (curl -T), reference', dir: dir('up-node') },
    {
      name: 'node-chunked',
      how: `bare node:http server, the ${CHUNK / MiB} MiB chunk files as PUTs into one file at their offsets (one curl, -T per chunk, ${inflightText}), reference`,
      dir: dir('up-node'),
      error: env.chunkFiles.length ? undefined : 'needs the curl chunk client (BENCH_CHUNK_CLIENT=curl)',
    },
    { name: 'rclone', how: 'rclone serve webdav, PUT (curl -T)', dir: dir('up-rclone'), error: env.have.rclone ? undefined : 'rclone is not installed (run bench/setup.sh)' },
    {
      name: 'cat',
      how: 'cat src > dst (raw)',
      dir: dir('up-raw'),
      write: async (file) => rawWrite('cat', 'cat -- "$1" > "$2"', [srcFile, path.join(dir('up-raw'), file)], timeoutS, signal),
    },
    {
      name: 'dd',
      how: 'dd bs=1M (raw, read/write)',
      dir: dir('up-raw'),
      write: async (file) => rawWrite('dd', 'dd if="$1" of="$2" bs=1M status=none', [srcFile, path.join(dir('up-raw'), file)], timeoutS, signal),
    },
  ];
  const writer = (name: WriterName) => writers.find((w) => w.name === name)!;

  try {
    // Peers' servers.
    const nginx = writer('nginx');
    if (!nginx.error) {
      try {
        const server = await startNginxDav(filesDir, path.join(env.work, 'nginx'), { signal });
        nginx.server = server;
        nginx.write = async (file) => {
          const r = await curlUpload(`${server.base}/up-nginx/${encodeURIComponent(file)}`, srcFile, { timeoutS, signal, limitRate: P.uploadRate });
          ensure2xx('nginx PUT', r, [201, 204]);
          return r.seconds;
        };
      } catch (err) {
        nginx.error = `start: ${errorText(err)}`;
      }
    }
    /** The chunk files as PUTs of their own to a reference server (one curl): the seconds, every byte sent (checked). */
    const sendChunkFiles = async (request: (i: number) => ChunkRequest, okStatus: number[]): Promise<number> => {
      const t0 = nowMs();
      await sendChunksWithCurl(env.chunkFiles, request, { statuses: okStatus }, { bytes: size, timeoutS, signal, inflight: P.chunkInflight, limitRate: chunkRate });
      return (nowMs() - t0) / 1000;
    };
    const nginxChunked = writer('nginx-chunked');
    if (nginx.error) nginxChunked.error ??= `nginx: ${nginx.error}`;
    if (!nginxChunked.error) {
      const base = nginx.server!.base;
      nginxChunked.server = nginx.server;
      nginxChunked.write = (file) => sendChunkFiles((i) => ({ url: `${base}/up-nginx/${encodeURIComponent(`${file}.parts`)}/${partName(i)}`, headers: {} }), [201, 204]);
    }
    const node = writer('node');
    const nodeChunked = writer('node-chunked');
    try {
      const server = await startNodeFloor(ctx.repoRoot, dir('up-node'), { signal });
      node.server = server;
      node.write = async (file) => {
        const r = await curlUpload(`${server.base}/${encodeURIComponent(file)}`, srcFile, { timeoutS, signal, limitRate: P.uploadRate });
        ensure2xx('node PUT', r, [200]);
        return r.seconds;
      };
      if (!nodeChunked.error) {
        nodeChunked.server = server;
        nodeChunked.write = (file) =>
          sendChunkFiles((i) => ({ url: `${server.base}/${encodeURIComponent(file)}`, headers: { 'X-Chunk-Index': String(i), 'X-Chunk-Size': String(CHUNK) } }), [200]);
      }
    } catch (err) {
      node.error = `start: ${errorText(err)}`;
      nodeChunked.error ??= node.error;
    }
    const rclone = writer('rclone');
    if (!rclone.error) {
      try {
        const server = await startRcloneWebdav(filesDir, path.join(env.work, 'rclone'), { signal });
        rclone.server = server;
        rclone.write = async (file) => {
          const r = await curlUpload(`${server.base}/up-rclone/${encodeURIComponent(file)}`, srcFile, { timeoutS, signal, limitRate: P.uploadRate });
          ensure2xx('rclone PUT', r, [200, 201, 204]);
          return r.seconds;
        };
      } catch (err) {
        rclone.error = `start: ${errorText(err)}`;
      }
    }

    // RSS of Atrium over every upload it receives (the untimed first one included), per writer:
    // the single PUT and the chunked upload have targets of their own.
    const rssPeak: Partial<Record<WriterName, number>> = {};
    let rssBefore: number | undefined;
    const rssSamples: Partial<Record<WriterName, number[]>> = {};
    // How much one upload itself adds (its peak over the RSS when it started), worst repetition:
    // the peak above also holds what an earlier upload of another kind left behind.
    const rssGrowth: Partial<Record<WriterName, number>> = {};

    /** One write: timed, CPU of the server, bytes checked on disk, then removed + sync. */
    const once = async (w: Writer, tag: string): Promise<RunFigures> => {
      const file = `${w.name}-${tag}.bin`;
      const dst = path.join(w.dir, file);
      const { files, folder } = w.written?.(file) ?? { files: [dst], folder: undefined };
      const pgid = w.server?.proc.pid;
      if (P.prefault) await prefault(srcFile, env.scratch, size);
      const sampler = w.server === atrium && pgid ? sampleRss(pgid, 100) : undefined;
      if (sampler && rssBefore === undefined) rssBefore = await rssOf(pgid!);
      const cpu0 = pgid ? await groupCpuSeconds(pgid) : undefined;
      let seconds: number;
      try {
        seconds = await w.write!(file);
        if (P.fsync) {
          const s = await timedBash('sync', 'sync -- "$@"', files, { signal });
          if (s.code !== 0) throw new Error(`sync ${files[0]}${files.length > 1 ? ` and ${files.length - 1} more` : ''}: exit ${s.code}: ${s.output.slice(-300)}`);
          seconds += s.seconds;
        }
      } finally {
        if (sampler) {
          const s = await sampler.stop();
          if (s.samples.length) rssGrowth[w.name] = Math.max(rssGrowth[w.name] ?? 0, s.peak - s.samples[0]!);
          if (rssPeak[w.name] === undefined || s.peak > rssPeak[w.name]!) {
            rssPeak[w.name] = s.peak;
            rssSamples[w.name] = s.samples;
          }
        }
      }
      const cpu1 = pgid ? await groupCpuSeconds(pgid) : undefined;
      try {
        await checkWritten(files, size, expect);
      } finally {
        if (folder) await fs.rm(folder, { recursive: true, force: true });
        else for (const f of files) await fs.rm(f, { force: true });
        await syncAll();
      }
      return { seconds, mbps: size / 1e6 / seconds, serverCpuS: cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined };
    };

    // First, untimed: correctness (status, bytes on disk) and warm-up.
    for (const w of writers) {
      signal.throwIfAborted();
      if (w.error || !w.write) {
        w.error ??= 'not started';
        continue;
      }
      try {
        const r = await once(w, 'warmup');
        ctx.log(`${w.name} first write (untimed): ${r.mbps.toFixed(0)} MB/s`);
      } catch (err) {
        signal.throwIfAborted();
        w.error = `first write (untimed check): ${errorText(err)}`;
      }
    }
    // Atrium: the uploaded file is visible through the API with its size.
    if (atrium && !writer('atrium').error) {
      try {
        await writer('atrium').write!('visible.bin');
        const { data } = await apiCall<{ size?: number; is_dir?: boolean }>(atrium.base, '/api/fs/get', { token: atrium.token, body: { path: '/up-atrium/visible.bin', password: '' } });
        if (data?.size !== size) throw new Error(`/api/fs/get /up-atrium/visible.bin after the upload: size ${data?.size}, expected ${size}`);
      } catch (err) {
        signal.throwIfAborted();
        result.errors.push({ benchmark: 'upload (check through /api/fs/get)', subject: 'atrium', message: errorText(err) });
      } finally {
        await fs.rm(path.join(writer('atrium').dir, 'visible.bin'), { force: true });
        await syncAll();
      }
    }
    for (const w of writers) if (w.error) result.errors.push({ benchmark: 'upload', subject: w.name, message: w.error });

    // Timed repetitions, the order of the writers rotated each time. The chunked upload is
    // measured apart, in pairs with a single PUT (below).
    const runs: Record<string, RunFigures[]> = {};
    const failures: Record<string, string> = {};
    const live = writers.filter((w) => !w.error && !PAIRED_ONLY.has(w.name));
    for (let rep = 0; rep < P.uploadReps; rep++) {
      for (let j = 0; j < live.length; j++) {
        signal.throwIfAborted();
        const w = live[(rep + j) % live.length]!;
        if (failures[w.name]) continue;
        try {
          const r = await once(w, `r${rep + 1}`);
          (runs[w.name] ??= []).push(r);
          ctx.log(`${w.name} rep ${rep + 1}: ${r.mbps.toFixed(0)} MB/s (${r.seconds.toFixed(3)} s${r.serverCpuS !== undefined ? `, server CPU ${r.serverCpuS.toFixed(2)} s` : ''})`);
        } catch (err) {
          signal.throwIfAborted();
          failures[w.name] = errorText(err);
          result.errors.push({ benchmark: 'upload', subject: w.name, message: failures[w.name]! });
        }
      }
    }

    // A chunked upload is compared with a single PUT into the same server: each repetition is a
    // pair, the two back to back (which goes first alternates), so both see the same state of the
    // machine; between the peers' writes (rclone's 5 CPU seconds, each write's gigabyte of page
    // cache) the state moved enough to swing one upload's server CPU by 1 s. Atrium's pair is the
    // target; nginx's and the bare Node server's, run in the same repetitions, are references.
    type Pair = { chunked: RunFigures; single: RunFigures };
    const pairs: Partial<Record<WriterName, Pair[]>> = {};
    const pairable = PAIRS.filter((p) => {
      const why = writer(p.chunked).error ?? failures[p.single] ?? (writer(p.single).error && `${p.single}: ${writer(p.single).error}`);
      if (why) failures[p.chunked] ??= why;
      return !why;
    });
    // Both ways are measured warm. Before the pairs Atrium's single PUT has run 2 + BENCH_REPS
    // uploads (its first write, the visibility check, the rotation), the chunked one only its
    // first write: 64 requests, too few for V8 to have compiled the code each request runs (the
    // first pair's chunked upload took 0.73–0.76 server CPU s, the later ones 0.56–0.62). The
    // chunked uploads into a Node server first run as many uploads, untimed (nginx compiles nothing).
    for (const p of pairable) {
      if (p.chunked === 'nginx-chunked') continue;
      try {
        for (let i = 0; i < P.uploadReps + 1; i++) await once(writer(p.chunked), `warmup${i + 2}`);
        ctx.log(`${p.chunked}: ${P.uploadReps + 1} more untimed uploads before the pairs (warm, as the single PUT is)`);
      } catch (err) {
        signal.throwIfAborted();
        failures[p.chunked] = `untimed upload before the pairs: ${errorText(err)}`;
        result.errors.push({ benchmark: 'upload (chunked pairs)', subject: p.chunked, message: failures[p.chunked]! });
      }
    }
    for (let rep = 0; rep < P.uploadReps; rep++) {
      for (const p of pairable) {
        signal.throwIfAborted();
        if (failures[p.chunked]) continue;
        const order = rep % 2 === 0 ? [p.chunked, p.single] : [p.single, p.chunked];
        const got: Partial<Record<WriterName, RunFigures>> = {};
        try {
          for (const name of order) got[name] = await once(writer(name), `pair${rep + 1}`);
        } catch (err) {
          signal.throwIfAborted();
          failures[p.chunked] = errorText(err);
          result.errors.push({ benchmark: 'upload (chunked pairs)', subject: p.chunked, message: failures[p.chunked]! });
          continue;
        }
        const pair = { chunked: got[p.chunked]!, single: got[p.single]! };
        (pairs[p.chunked] ??= []).push(pair);
        (runs[p.chunked] ??= []).push(pair.chunked);
        // A single PUT timed only in pairs has no rotation of its own.
        if (PAIRED_ONLY.has(p.single)) (runs[p.single] ??= []).push(pair.single);
        ctx.log(
          `${p.chunked} pair ${rep + 1}: chunked ${pair.chunked.mbps.toFixed(0)} MB/s (server CPU ${pair.chunked.serverCpuS?.toFixed(2) ?? '?'} s), single PUT ${pair.single.mbps.toFixed(0)} MB/s (${pair.single.serverCpuS?.toFixed(2) ?? '?'} s): ${(pair.chunked.mbps / pair.single.mbps).toFixed(2)}×`,
        );
      }
    }
    result.raw.chunked_pairs = pairs.chunked ?? [];
    result.raw.reference_chunked_pairs = { nginx: pairs['nginx-chunked'] ?? [], node: pairs['node-chunked'] ?? [] };

    // Atrium's temp folder must be empty once every upload has answered.
    let tmpLeft: string | undefined;
    if (atrium) {
      try {
        const left = readdirSync(path.join(filesDir, '.atrium-tmp'));
        if (left.length) tmpLeft = `${left.length} file(s) left in <root>/.atrium-tmp after the uploads: ${left.slice(0, 5).join(', ')}`;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') tmpLeft = `reading <root>/.atrium-tmp: ${errorText(err)}`;
      }
      if (tmpLeft) result.errors.push({ benchmark: 'upload (temp files)', subject: 'atrium', message: tmpLeft });
      if (atrium.proc.done()) result.errors.push({ benchmark: 'upload', subject: 'atrium', message: `the Atrium process exited: ${atrium.proc.output().slice(-500)}` });
    }

    // Tables.
    const label = fmtBytes(size);
    const med: Partial<Record<WriterName, number>> = {};
    for (const w of writers) if (runs[w.name]?.length) med[w.name] = median(runs[w.name]!.map((r) => r.mbps));
    const rows: Array<Array<string | number | null>> = [];
    for (const w of writers) {
      const rs = runs[w.name];
      if (rs?.length) {
        const cpu = rs.map((r) => r.serverCpuS).filter((v): v is number => v !== undefined);
        rows.push([
          w.name,
          w.how,
          rs.length,
          fmtNum(med[w.name], 0),
          rs.map((r) => r.mbps.toFixed(0)).join(', '),
          med.cat ? `${(med[w.name]! / med.cat).toFixed(2)}×` : null,
          fmtNum(median(rs.map((r) => r.seconds)), 3),
          cpu.length ? fmtNum(median(cpu), 2) : null,
        ]);
      } else {
        rows.push([w.name, w.how, 0, 'ERROR', shortError(failures[w.name] ?? w.error ?? 'not run'), null, null, null]);
      }
    }
    result.details.push({
      title: `Upload / write of ${label} (MB/s = bytes / seconds of the write; ${P.fsync ? 'each followed by a timed sync <file>' : 'no fsync'})`,
      columns: ['writer', 'how', 'reps', 'median MB/s', 'each rep MB/s / error', '× cat', 'median s', 'server CPU s (median)'],
      rows,
    });
    result.raw.uploads = runs;
    result.details.push({
      title: `Chunked (${CHUNK / MiB} MiB chunks, one curl, -T per chunk, ${inflightText}) vs one PUT into the same server, in pairs back to back (Atrium's is the target; nginx and a bare Node server are references: what ${Math.ceil(size / CHUNK)} requests cost there)`,
      columns: ['server', 'pairs', 'chunked MB/s (median)', 'single PUT MB/s (median)', "each pair's ratio / error", 'median ratio', 'server CPU s chunked / single (medians)'],
      rows: PAIRS.map((p) => {
        const ps = pairs[p.chunked] ?? [];
        if (!ps.length) return [p.server, 0, 'ERROR', null, shortError(failures[p.chunked] ?? writer(p.chunked).error ?? 'not run'), null, null];
        const cpu = (k: 'chunked' | 'single') => {
          const v = ps.map((q) => q[k].serverCpuS).filter((x): x is number => x !== undefined);
          return v.length ? median(v).toFixed(2) : '?';
        };
        return [
          p.server,
          ps.length,
          fmtNum(median(ps.map((q) => q.chunked.mbps)), 0),
          fmtNum(median(ps.map((q) => q.single.mbps)), 0),
          ps.map((q) => (q.chunked.mbps / q.single.mbps).toFixed(2)).join(', '),
          `${median(ps.map((q) => q.chunked.mbps / q.single.mbps)).toFixed(2)}×`,
          `${cpu('chunked')} / ${cpu('single')}`,
        ];
      }),
    });

    const aErr = failures.atrium ?? writer('atrium').error;
    const a = med.atrium;
    for (const [peerName, peerLabel, target, ok] of [
      // issue 12 asked ≥ 0.70× cat (copy_file_range, no socket): kept as a reference row;
      // issue 25's target is the peer that also receives through a socket.
      ['cat', 'raw cat', '', undefined],
      ['dd', 'raw dd bs=1M', '', undefined],
      ['nginx', 'nginx WebDAV PUT', '≥ 0.90× nginx', (r: number) => r >= 0.9],
      ['rclone', 'rclone webdav PUT', '', undefined],
    ] as const) {
      const b = med[peerName];
      const bErr = failures[peerName] ?? writer(peerName).error;
      const ratio = a !== undefined && b !== undefined ? a / b : null;
      result.summary.push({
        benchmark: `upload ${label} /api/fs/put vs ${peerLabel}${P.fsync ? ' (incl. fsync)' : ''}`,
        atrium: a ?? null,
        peerName: peerLabel,
        peer: b ?? null,
        unit: 'MB/s',
        ratio,
        target,
        met: !ok || ratio === null ? null : ok(ratio),
        error: a === undefined ? `atrium: ${aErr ?? 'not run'}` : b === undefined ? `${peerName}: ${bErr ?? 'not run'}` : undefined,
      });
    }
    // Medians of the pairs; the ratio is the median of the pairs' own ratios.
    const atriumPairs = pairs.chunked ?? [];
    const c = atriumPairs.length ? median(atriumPairs.map((q) => q.chunked.mbps)) : undefined;
    const single = atriumPairs.length ? median(atriumPairs.map((q) => q.single.mbps)) : undefined;
    const cRatio = atriumPairs.length ? median(atriumPairs.map((q) => q.chunked.mbps / q.single.mbps)) : null;
    result.summary.push({
      benchmark: `upload ${label} in ${CHUNK / MiB} MiB chunks (multipart, ${P.chunkInflight} in flight) vs one PUT /api/fs/put, ${atriumPairs.length} pairs back to back (median of the pairs' ratios)${P.uploadRate ? `, both at curl --limit-rate ${P.uploadRate}` : ''}`,
      atrium: c ?? null,
      peerName: 'single PUT',
      peer: single ?? null,
      unit: 'MB/s',
      ratio: cRatio,
      target: '≥ 0.80× single PUT',
      met: cRatio === null ? null : cRatio >= 0.8,
      error: c === undefined ? `chunked: ${failures.chunked ?? writer('chunked').error ?? 'not run'}` : undefined,
    });
    for (const [name, how, limitMb] of [
      ['atrium', 'one PUT /api/fs/put', 120],
      ['chunked', `${CHUNK / MiB} MiB chunks (multipart)`, 150],
    ] as const) {
      const peak = rssPeak[name];
      const rssRow: SummaryRow = {
        benchmark: `atrium peak RSS while receiving ${label} uploads by ${how}`,
        atrium: peak !== undefined ? peak / 1e6 : null,
        unit: 'MB',
        target: `< ${limitMb} MB`,
        met: peak !== undefined && !atrium?.proc.done() ? peak < limitMb * 1e6 : null,
        error: peak === undefined ? `${name}: ${failures[name] ?? writer(name).error ?? 'not run'}` : undefined,
      };
      result.summary.push(rssRow);
      const growth = rssGrowth[name];
      if (growth !== undefined) result.summary.push({ benchmark: `atrium RSS growth during one upload by ${how} (peak − RSS at its start, worst rep)`, atrium: growth / 1e6, unit: 'MB' });
    }
    if (env.idleRss !== undefined) result.summary.push({ benchmark: 'atrium RSS idle (fresh process, logged in)', atrium: env.idleRss / 1e6, unit: 'MB' });
    if (rssBefore !== undefined) result.summary.push({ benchmark: 'atrium RSS before the first upload', atrium: rssBefore / 1e6, unit: 'MB' });
    result.raw.upload_rss_samples_bytes = rssSamples;
  } finally {
    // A server two writers share (nginx, the bare Node) is stopped once.
    await Promise.all([...new Set(writers.map((w) => w.server))].filter((srv) => srv && srv !== atrium).map((srv) => srv!.stop()));
  }
}

/** The name of chunk `i`'s file in nginx's folder of a chunked file. */
const partName = (i: number) => `part.${String(i).padStart(5, '0')}`;

/**
 * Checks that `files`, in order, hold the source's bytes: `size` bytes in all, its first MiB at
 * the start of the first file and its last MiB at the end of the last (when those files are that
 * long: a chunk file shorter than 1 MiB has only its size checked).
 */
async function checkWritten(files: string[], size: number, expect: { head: string; tail: string }): Promise<void> {
  const digests = [];
  for (const f of files) {
    try {
      digests.push(await headTailDigest(f));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`the write answered success but ${f} does not exist`);
      throw err;
    }
  }
  const total = digests.reduce((n, d) => n + d.size, 0);
  const what = files.length === 1 ? files[0] : `${files.length} files from ${files[0]}`;
  if (total !== size) throw new Error(`${what}: ${total} bytes on disk, expected ${size}`);
  const [first, last] = [digests[0]!, digests[digests.length - 1]!];
  // Digests of the first and last min(1 MiB, size) bytes of each file (headTailDigest).
  const whole = Math.min(MiB, size);
  if (first.size >= whole && first.head !== expect.head) throw new Error(`${what}: the first MiB differs from the source`);
  if (last.size >= whole && last.tail !== expect.tail) throw new Error(`${what}: the last MiB differs from the source`);
}

/** `cat` / `dd` timed inside bash; a non-zero exit is an error. */
async function rawWrite(name: string, script: string, args: string[], timeoutS: number, signal: AbortSignal): Promise<number> {
  const r = await timedBash(name, script, args, { timeoutMs: timeoutS * 1000, signal });
  if (r.code !== 0 || !Number.isFinite(r.seconds)) throw new Error(`${name}: exit ${r.code}: ${r.output.trim().slice(-300)}`);
  return r.seconds;
}

// -----------------------------------------------------------------------------------------------
// Copy

/** One destination folder per copy run: `warmup`, `r1`, `r2`… (made before Atrium starts). */
function copyRunTags(P: Params): string[] {
  return ['warmup', ...Array.from({ length: P.copyReps }, (_, i) => `r${i + 1}`)];
}

async function copyBenchmarks(
  ctx: BenchContext,
  result: AreaResult,
  P: Params,
  env: { atrium?: Atrium; atriumError?: string; filesDir: string; copySrc: string; srcFile: string; scratch: string; tags: string[] },
): Promise<void> {
  const { signal } = ctx;
  const { atrium, filesDir, copySrc } = env;
  const n = P.copyFiles;
  const srcNames = (await fs.readdir(copySrc)).sort();
  if (srcNames.length !== n) throw new Error(`the folder to copy holds ${srcNames.length} files, expected ${n}`);
  const probes = [srcNames[0]!, srcNames[n >> 1]!, srcNames[n - 1]!];
  const probeBytes = await Promise.all(probes.map((f) => fs.readFile(path.join(copySrc, f))));
  // Page cache + inodes of the copy, roughly: what the prefault makes room for.
  const prefaultBytes = Math.max(16 * MiB, n * 8192);

  /** The copy in `dst` is complete and right: N entries, three files with the right bytes. */
  const verify = async (dst: string) => {
    const count = await countEntries(dst);
    if (count !== n) throw new Error(`${dst} holds ${count} entries after the copy, expected ${n}`);
    for (let i = 0; i < probes.length; i++) {
      const got = await fs.readFile(path.join(dst, probes[i]!)).catch(() => undefined);
      if (!got?.equals(probeBytes[i]!)) throw new Error(`${path.join(dst, probes[i]!)} differs from the source`);
    }
  };

  interface Copier {
    name: 'cp' | 'atrium';
    how: string;
    /** Destination folder of the run `tag` on disk (the copy lands in `<dst>/tree`). */
    dst(tag: string): string;
    error?: string;
    /** Copies the tree into the run's folder; returns milliseconds. */
    copy?(tag: string): Promise<number>;
  }
  const copyTimeoutMs = Math.max(600_000, n * 100);
  let taskNote: string | undefined;
  const copiers: Copier[] = [
    {
      name: 'cp',
      how: 'cp -r (GNU coreutils, copy_file_range)',
      dst: (tag) => path.join(filesDir, 'copy-cp', tag, 'tree'),
      copy: async (tag) => {
        const r = await timedBash('cp', 'cp -r -- "$1" "$2"', [copySrc, path.join(filesDir, 'copy-cp', tag, 'tree')], { timeoutMs: copyTimeoutMs, signal });
        if (r.code !== 0) throw new Error(`cp -r: exit ${r.code}: ${r.output.trim().slice(-300)}`);
        return r.seconds * 1000;
      },
    },
    {
      name: 'atrium',
      how: 'POST /api/fs/copy (same Local storage)',
      dst: (tag) => path.join(filesDir, 'copy-dst', tag, 'tree'),
      error: env.atriumError,
      copy: atrium
        ? async (tag) => {
            const r = await atriumCopy(atrium, { src: '/copy-src', dst: `/copy-dst/${tag}`, onDisk: path.join(filesDir, 'copy-dst', tag, 'tree'), n, timeoutMs: copyTimeoutMs, signal });
            taskNote ??= r.note;
            return r.ms;
          }
        : undefined,
    },
  ];

  const runs: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const failures: Record<string, string> = {};
  let rssPeak: number | undefined;
  /** One copy: timed and checked; the copy stays (see the header). */
  const once = async (c: Copier, tag: string): Promise<number> => {
    const pgid = c.name === 'atrium' ? atrium?.proc.pid : undefined;
    await syncAll();
    if (P.prefault) await prefault(env.srcFile, env.scratch, prefaultBytes);
    const sampler = pgid ? sampleRss(pgid, 100) : undefined;
    const cpu0 = pgid ? await groupCpuSeconds(pgid) : undefined;
    let ms: number;
    try {
      ms = await c.copy!(tag);
    } finally {
      if (sampler) {
        const s = await sampler.stop();
        rssPeak = Math.max(rssPeak ?? 0, s.peak);
      }
    }
    if (tag !== 'warmup' && pgid && cpu0 !== undefined) (cpu[c.name] ??= []).push((await groupCpuSeconds(pgid)) - cpu0);
    await verify(c.dst(tag));
    return ms;
  };

  try {
    // Untimed first copy of each: correctness and warm-up.
    for (const c of copiers) {
      signal.throwIfAborted();
      if (c.error || !c.copy) {
        c.error ??= 'not started';
        continue;
      }
      try {
        const ms = await once(c, 'warmup');
        ctx.log(`${c.name} first copy of ${n} files (untimed): ${ms.toFixed(0)} ms`);
      } catch (err) {
        signal.throwIfAborted();
        c.error = `first copy (untimed check): ${errorText(err)}`;
      }
    }
    for (const c of copiers) if (c.error) result.errors.push({ benchmark: 'copy', subject: c.name, message: c.error });

    const live = copiers.filter((c) => !c.error);
    for (let rep = 0; rep < P.copyReps; rep++) {
      for (let j = 0; j < live.length; j++) {
        signal.throwIfAborted();
        const c = live[(rep + j) % live.length]!;
        if (failures[c.name]) continue;
        try {
          const ms = await once(c, `r${rep + 1}`);
          (runs[c.name] ??= []).push(ms);
          ctx.log(`${c.name} copy of ${n} files rep ${rep + 1}: ${ms.toFixed(0)} ms`);
        } catch (err) {
          signal.throwIfAborted();
          failures[c.name] = errorText(err);
          result.errors.push({ benchmark: 'copy', subject: c.name, message: failures[c.name]! });
        }
      }
    }
    if (taskNote) result.errors.push({ benchmark: 'copy', subject: 'atrium', message: taskNote });
  } finally {
    // Atrium's copies go through /api/fs/remove (which must remove them from the disk).
    if (atrium && !atrium.proc.done()) {
      const problems: string[] = [];
      for (const tag of env.tags) {
        const dst = copiers[1]!.dst(tag);
        if ((await countEntries(dst)) === 0) continue;
        try {
          await apiCall(atrium.base, '/api/fs/remove', { token: atrium.token, body: { dir: `/copy-dst/${tag}`, names: ['tree'] }, timeoutMs: copyTimeoutMs });
          const left = await countEntries(dst);
          if (left > 0) problems.push(`/api/fs/remove /copy-dst/${tag}/tree answered 200 but ${left} entries are still on disk`);
        } catch (err) {
          problems.push(`/api/fs/remove /copy-dst/${tag}/tree: ${errorText(err)}`);
        }
      }
      if (problems.length) result.errors.push({ benchmark: 'copy (removing the copies)', subject: 'atrium', message: problems.join('\n') });
    }
  }

  const med: Record<string, number> = {};
  const rows: Array<Array<string | number | null>> = [];
  for (const c of copiers) {
    const rs = runs[c.name];
    if (rs?.length) med[c.name] = median(rs);
  }
  for (const c of copiers) {
    const rs = runs[c.name];
    if (rs?.length) {
      rows.push([c.name, c.how, rs.length, fmtNum(med[c.name], 1), rs.map((v) => v.toFixed(1)).join(', '), med.cp ? `${(med[c.name]! / med.cp).toFixed(2)}×` : null, cpu[c.name]?.length ? fmtNum(median(cpu[c.name]!), 2) : null]);
    } else {
      rows.push([c.name, c.how, 0, 'ERROR', shortError(failures[c.name] ?? c.error ?? 'not run'), null, null]);
    }
  }
  result.details.push({
    title: `Copy of a folder of ${n} small files within one filesystem (ms, no fsync${P.fsync ? ': BENCH_WRITE_FSYNC is for the uploads only' : ''})`,
    columns: ['copier', 'how', 'reps', 'median ms', 'each rep ms / error', '× cp -r', 'server CPU s (median)'],
    rows,
  });
  result.raw.copies_ms = runs;
  result.raw.copy_server_cpu_s = cpu;

  const a = med.atrium;
  const b = med.cp;
  const ratio = a !== undefined && b !== undefined ? a / b : null;
  result.summary.push({
    benchmark: `copy of ${n} small files /api/fs/copy vs cp -r`,
    atrium: a ?? null,
    peerName: 'cp -r',
    peer: b ?? null,
    unit: 'ms',
    ratio,
    target: '≤ 1.50× cp -r',
    met: ratio === null ? null : ratio <= 1.5,
    error: a === undefined ? `atrium: ${failures.atrium ?? copiers[1]!.error ?? 'not run'}` : b === undefined ? `cp: ${failures.cp ?? copiers[0]!.error ?? 'not run'}` : undefined,
  });
  if (rssPeak !== undefined) result.summary.push({ benchmark: `atrium peak RSS during the copies of ${n} files`, atrium: rssPeak / 1e6, unit: 'MB' });
}

export const writeBench: BenchModule = {
  area: 'write',
  title: 'Writing: uploads and copies',
  budgetMs: (quick) => (quick ? 10 : 30) * 60_000,
  run,
};

/**
 * `POST /api/fs/copy` of `<src>/tree` into `dst`, timed until it is done: the answer, or (when it
 * answers with tasks) until `onDisk` holds `n` entries, polled every 20 ms (`note` says so).
 */
async function atriumCopy(atrium: Atrium, o: { src: string; dst: string; onDisk: string; n: number; timeoutMs: number; signal: AbortSignal }): Promise<{ ms: number; note?: string }> {
  const t0 = nowMs();
  const r = await request(`${atrium.base}/api/fs/copy`, { headers: { authorization: atrium.token }, body: { src_dir: o.src, dst_dir: o.dst, names: ['tree'] }, timeoutMs: o.timeoutMs, signal: o.signal });
  let json: any;
  try {
    json = JSON.parse(r.body.toString('utf8'));
  } catch {
    throw new Error(`/api/fs/copy: HTTP ${r.status}, not JSON: ${r.body.toString('utf8').slice(0, 200)}`);
  }
  if (r.status !== 200 || json?.code !== 200) throw new Error(`/api/fs/copy: HTTP ${r.status}, code ${json?.code}, message ${JSON.stringify(json?.message)}`);
  const tasks = Array.isArray(json.data?.tasks) ? json.data.tasks : [];
  if (tasks.length === 0) return { ms: r.ms };
  while ((await countEntries(o.onDisk)) < o.n) {
    if (nowMs() - t0 > o.timeoutMs) throw new Error(`the copy task did not finish within ${o.timeoutMs / 1000} s`);
    await sleep(20, o.signal);
  }
  return { ms: nowMs() - t0, note: `/api/fs/copy answered with ${tasks.length} task(s) instead of copying synchronously; timed until the destination held ${o.n} files (polled on disk every 20 ms)` };
}

// -----------------------------------------------------------------------------------------------
// A quota on the writer vs none (issue 41): the big upload's throughput and the copy of the small
// files' folder, with the admin's own quota (far above what the run writes) set or 0.

async function quotaBenchmarks(ctx: BenchContext, result: AreaResult, P: Params, atrium: Atrium, srcFile: string, filesDir: string): Promise<void> {
  const { signal } = ctx;
  const pairs = envInt('BENCH_QUOTA_PAIRS') ?? (ctx.quick ? 3 : 5);
  const me = (await apiCall<{ id: number; username: string }>(atrium.base, '/api/me', { token: atrium.token, method: 'GET' })).data;
  const quota = (on: boolean) => ({ id: me.id, username: me.username, quota_bytes: on ? 1e15 : 0, quota_files: on ? 1e12 : 0 });
  let round = 0;
  const copyTimeoutMs = Math.max(600_000, P.copyFiles * 100);
  try {
    await onOffPairs(ctx, result, {
      name: 'quota',
      leaveOn: false,
      set: async (on) => {
        await apiCall(atrium.base, '/api/admin/user/update', { token: atrium.token, body: quota(on) });
      },
    }, [
      {
        name: `upload ${fmtBytes(P.fileSize)} /api/fs/put`,
        unit: 'MB/s',
        better: 'higher',
        target: 0.97,
        run: async () => {
          const r = await curlUpload(`${atrium.base}/api/fs/put`, srcFile, { headers: { Authorization: atrium.token, 'File-Path': encodeURIComponent('/quota-bench/big.bin') }, timeoutS: timeoutSFor(P.fileSize), signal });
          if (r.status !== 200 || !r.body.startsWith('{"code":200')) throw new Error(`/api/fs/put: HTTP ${r.status}: ${r.body.slice(0, 200)}`);
          return P.fileSize / r.seconds / 1e6;
        },
      },
      {
        name: `copy of ${P.copyFiles} small files /api/fs/copy`,
        unit: 'ms',
        better: 'lower',
        target: 0.9,
        run: async () => {
          const tag = `q${++round}`;
          const onDisk = path.join(filesDir, 'quota-bench', tag, 'tree');
          await fs.mkdir(path.dirname(onDisk), { recursive: true });
          await syncAll();
          const { ms } = await atriumCopy(atrium, { src: '/copy-src', dst: `/quota-bench/${tag}`, onDisk, n: P.copyFiles, timeoutMs: copyTimeoutMs, signal });
          const copied = await countEntries(onDisk);
          if (copied < P.copyFiles) throw new Error(`the copy holds ${copied} of ${P.copyFiles} entries`);
          // Removed untimed through the server (its usage follows), before the next half.
          await apiCall(atrium.base, '/api/fs/remove', { token: atrium.token, body: { dir: `/quota-bench/${tag}`, names: ['tree'] }, timeoutMs: copyTimeoutMs });
          return ms;
        },
      },
    ], pairs);
  } catch (err) {
    signal.throwIfAborted();
    result.errors.push({ benchmark: 'quota on vs off', subject: 'atrium', message: errorText(err) });
  } finally {
    await fs.rm(path.join(filesDir, 'quota-bench'), { recursive: true, force: true });
  }
}

// -----------------------------------------------------------------------------------------------
// The audit log on vs off (issue 37): the big upload's throughput, and small uploads per second
// (one event each: where a per-operation cost would show first)

async function auditBenchmarks(ctx: BenchContext, result: AreaResult, P: Params, atrium: Atrium, srcFile: string, filesDir: string): Promise<void> {
  const { signal } = ctx;
  const pairs = envInt('BENCH_AUDIT_PAIRS') ?? (ctx.quick ? 3 : 5);
  const small = envInt('BENCH_AUDIT_SMALL') ?? 200;
  // `request` sends its body as JSON: a 1 KiB JSON string is the file's content.
  const put = async (name: string, body: string) => {
    const r = await request(`${atrium.base}/api/fs/put`, { method: 'PUT', headers: { authorization: atrium.token, 'file-path': encodeURIComponent(`/audit-bench/${name}`) }, body, timeoutMs: 60_000, signal });
    if (r.status !== 200 || !r.body.toString('utf8').startsWith('{"code":200')) throw new Error(`/api/fs/put: HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 200)}`);
  };
  let round = 0;
  try {
    await onOffPairs(ctx, result, auditFeature(atrium), [
      {
        name: `upload ${fmtBytes(P.fileSize)} /api/fs/put`,
        unit: 'MB/s',
        better: 'higher',
        target: 0.95,
        run: async () => {
          const r = await curlUpload(`${atrium.base}/api/fs/put`, srcFile, { headers: { Authorization: atrium.token, 'File-Path': encodeURIComponent('/audit-bench/big.bin') }, timeoutS: timeoutSFor(P.fileSize), signal });
          if (r.status !== 200 || !r.body.startsWith('{"code":200')) throw new Error(`/api/fs/put: HTTP ${r.status}: ${r.body.slice(0, 200)}`);
          return P.fileSize / r.seconds / 1e6;
        },
      },
      {
        name: `${small} small uploads (1 KiB, one at a time)`,
        unit: 'ops/s',
        better: 'higher',
        target: 0.95,
        run: async () => {
          const body = 'x'.repeat(1022);
          const t0 = nowMs();
          round++;
          for (let i = 0; i < small; i++) await put(`s-${round}-${i}.bin`, body);
          return small / ((nowMs() - t0) / 1000);
        },
      },
    ], pairs);
  } catch (err) {
    signal.throwIfAborted();
    result.errors.push({ benchmark: 'audit log on vs off', subject: 'atrium', message: errorText(err) });
  } finally {
    await fs.rm(path.join(filesDir, 'audit-bench'), { recursive: true, force: true });
  }
}
