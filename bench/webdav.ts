// Area `webdav` (issue: "PROPFIND depth 1 on a folder of 10 000 files and PUT/GET of a 1 GiB file,
// in one run against `rclone serve webdav` on the same folder. Target: faster than rclone on both;
// server RSS flat during the 1 GiB PUT.").
//
// One temp folder: `data/` is Atrium's data folder and `data/files/` its `/` (the default Local
// storage, listings cached 30 min, as a fresh install has it); `rclone serve webdav` serves the
// same `data/files/` (its own directory cache, 5 min by default). Both are measured in one run,
// the order of the servers alternating between repetitions.
//
//   - PROPFIND `Depth: 1` (no body = allprop, what Windows and Kodi send) of `list-10000/`, timed
//     from request to the last byte on a keep-alive agent; one untimed warm-up each; every answer
//     must be 207 with 10 001 responses. p50 reported; target Atrium < rclone.
//   - PUT of the file with `curl -T` (Content-Length, 100-continue), then GET of what was stored
//     with curl into /dev/null; MB/s over curl's own time, median of the repetitions; every PUT is
//     checked on disk (size, first and last MiB). Targets: Atrium > rclone on both.
//   - Atrium's RSS sampled every 100 ms during its PUTs: peak, and growth over the RSS just before.
//     Target "flat": growth < 64 MB whatever the file size.
//   - CPU seconds each server spent per PUT and per GET (its process group, from /proc): on a busy
//     machine the MB/s follow the scheduler (a multi-threaded server gets more slices), the CPU
//     cost per transfer much less so.

import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { curlUpload, parallelDownload, request } from './lib/http.js';
import { createBigFile, createSmallFiles, headTailDigest, warmPageCache } from './lib/files.js';
import { groupCpuSeconds, makeTempDir, removeTempDir, rssOf, sampleRss } from './lib/proc.js';
import { startAtrium, startRcloneWebdav, versionOf, which, type Server } from './lib/servers.js';
import { fmtBytes, fmtNum, GiB, median, MiB, percentile } from './lib/stats.js';
import { errorText, shortError } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule, SummaryRow } from './lib/types.js';

const adminPassword = randomBytes(12).toString('base64url');
const LIST_FILES = 10_000;
/** RSS growth during a PUT that still counts as flat. */
const FLAT_RSS_BYTES = 64 * 1e6;

interface Target {
  name: 'atrium' | 'rclone';
  /** URL of the folder holding `list-10000/` and `put/`. */
  root: string;
  headers: Record<string, string>;
  server: Server;
}

function params(quick: boolean) {
  const fileMiB = Number(process.env.BENCH_FILE_MIB ?? 0);
  return {
    fileSize: fileMiB > 0 ? fileMiB * MiB : quick ? 64 * MiB : GiB,
    listRuns: Number(process.env.BENCH_LIST_RUNS ?? 0) || (quick ? 10 : 20),
    reps: Number(process.env.BENCH_REPS ?? 0) || (quick ? 2 : 3),
  };
}

const errMsg = (err: unknown) => errorText(err, 4);
const responses = (xml: string) => (xml.match(/<(?:[A-Za-z]+:)?response[\s>]/g) ?? []).length;

async function propfind(t: Target, signal: AbortSignal): Promise<number> {
  const r = await request(`${t.root}/list-10000/`, { method: 'PROPFIND', headers: { ...t.headers, Depth: '1' }, timeoutMs: 120_000, signal });
  if (r.status !== 207) throw new Error(`${t.name} PROPFIND: HTTP ${r.status}: ${r.body.toString().slice(0, 200)}`);
  const n = responses(r.body.toString());
  if (n !== LIST_FILES + 1) throw new Error(`${t.name} PROPFIND: ${n} responses, expected ${LIST_FILES + 1}`);
  return r.ms;
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const P = params(ctx.quick);
  const { signal } = ctx;
  result.parameters = { list_files: LIST_FILES, list_runs: P.listRuns, file_size: fmtBytes(P.fileSize), reps: P.reps };
  if (!(await which('rclone'))) throw new Error('rclone is missing: run bench/setup.sh');
  if (ctx.atriumBuildError) throw new Error(`Atrium build failed: ${ctx.atriumBuildError}`);
  const tmp = makeTempDir('atrium-bench-webdav-');
  result.environment = {
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
    rclone: await versionOf('rclone', ['version']),
    client: 'PROPFIND: Node http (keep-alive); PUT/GET: curl',
    loadavg_at_start: loadavg(),
    units: 'MB = 10^6 bytes',
  };
  const servers: Server[] = [];
  try {
    const filesDir = path.join(tmp, 'data', 'files');
    mkdirSync(path.join(filesDir, 'put'), { recursive: true });
    await createSmallFiles(path.join(filesDir, 'list-10000'), LIST_FILES, signal);
    const srcFile = path.join(tmp, 'source.bin');
    await createBigFile(srcFile, P.fileSize, signal);
    await warmPageCache(srcFile);
    const expect = await headTailDigest(srcFile);
    ctx.log(`fixtures ready: ${LIST_FILES} files, ${fmtBytes(P.fileSize)} source`);

    const atrium = await startAtrium(ctx.repoRoot, path.join(tmp, 'data'), { password: adminPassword, signal });
    servers.push(atrium);
    const rclone = await startRcloneWebdav(filesDir, path.join(tmp, 'rclone'), { signal });
    servers.push(rclone);
    const auth = `Basic ${Buffer.from(`admin:${adminPassword}`).toString('base64')}`;
    const targets: Target[] = [
      { name: 'atrium', root: `${atrium.base}/dav`, headers: { Authorization: auth }, server: atrium },
      { name: 'rclone', root: rclone.base, headers: {}, server: rclone },
    ];
    const inOrder = (i: number) => (i % 2 === 0 ? targets : [...targets].reverse());

    // PROPFIND
    const listMs: Record<string, number[]> = { atrium: [], rclone: [] };
    for (const t of targets) await propfind(t, signal);
    for (let i = 0; i < P.listRuns; i++) for (const t of inOrder(i)) listMs[t.name]!.push(await propfind(t, signal));
    ctx.log(`PROPFIND p50 atrium ${fmtNum(median(listMs.atrium!))} ms, rclone ${fmtNum(median(listMs.rclone!))} ms`);

    // PUT and GET
    const putMbps: Record<string, number[]> = { atrium: [], rclone: [] };
    const putCpu: Record<string, number[]> = { atrium: [], rclone: [] };
    const getCpu: Record<string, number[]> = { atrium: [], rclone: [] };
    const cpuOf = (t: Target) => groupCpuSeconds(t.server.proc.pid);
    const getMbps: Record<string, number[]> = { atrium: [], rclone: [] };
    const rss = { peak: 0, growth: 0, before: [] as number[] };
    const timeoutS = Math.max(120, Math.ceil(P.fileSize / 10e6));
    for (let i = 0; i < P.reps; i++) {
      for (const t of inOrder(i)) {
        const name = `${t.name}-${i}.bin`;
        const before = t.name === 'atrium' ? ((await rssOf(atrium.proc.pid)) ?? 0) : 0;
        const sampler = t.name === 'atrium' ? sampleRss(atrium.proc.pid, 100) : undefined;
        const putCpu0 = await cpuOf(t);
        const up = await curlUpload(`${t.root}/put/${name}`, srcFile, { headers: t.headers, timeoutS, signal }).finally(async () => {
          const s = await sampler?.stop();
          if (s) {
            rss.before.push(before);
            rss.peak = Math.max(rss.peak, s.peak);
            rss.growth = Math.max(rss.growth, s.peak - before);
          }
        });
        if (![200, 201, 204].includes(up.status) || up.bytes !== P.fileSize) throw new Error(`${t.name} PUT: HTTP ${up.status}, ${up.bytes} bytes sent: ${up.body.slice(0, 200)}`);
        const stored = path.join(filesDir, 'put', name);
        const got = await headTailDigest(stored);
        if (statSync(stored).size !== P.fileSize || got.head !== expect.head || got.tail !== expect.tail) throw new Error(`${t.name} PUT stored different bytes`);
        putMbps[t.name]!.push(P.fileSize / 1e6 / up.seconds);
        putCpu[t.name]!.push((await cpuOf(t)) - putCpu0);
        const url = `${t.root}/put/${name}`;
        const download = t.name === 'atrium' ? url.replace('://', `://admin:${encodeURIComponent(adminPassword)}@`) : url;
        const getCpu0 = await cpuOf(t);
        const dl = await parallelDownload('curl', download, 1, P.fileSize, timeoutS, signal);
        getMbps[t.name]!.push(dl.mbps);
        getCpu[t.name]!.push((await cpuOf(t)) - getCpu0);
      }
      ctx.log(`PUT/GET repetition ${i + 1}/${P.reps} done`);
    }

    const ratio = (a: number, b: number) => (b > 0 ? a / b : null);
    const row = (benchmark: string, a: number, b: number, unit: string, target: string, met: boolean | null): SummaryRow => ({
      benchmark,
      atrium: a,
      peerName: 'rclone serve webdav',
      peer: b,
      unit,
      ratio: ratio(a, b),
      target,
      met,
    });
    const p50 = { atrium: median(listMs.atrium!), rclone: median(listMs.rclone!) };
    const put = { atrium: median(putMbps.atrium!), rclone: median(putMbps.rclone!) };
    const get = { atrium: median(getMbps.atrium!), rclone: median(getMbps.rclone!) };
    result.summary.push(
      row(`PROPFIND Depth 1, ${LIST_FILES} files, p50`, p50.atrium, p50.rclone, 'ms', '< 1.00× rclone', p50.atrium < p50.rclone),
      row(`PUT ${fmtBytes(P.fileSize)} (curl -T)`, put.atrium, put.rclone, 'MB/s', '> 1.00× rclone', put.atrium > put.rclone),
      row(`GET ${fmtBytes(P.fileSize)} (curl)`, get.atrium, get.rclone, 'MB/s', '> 1.00× rclone', get.atrium > get.rclone),
      row(`server CPU per PUT of ${fmtBytes(P.fileSize)}`, median(putCpu.atrium!), median(putCpu.rclone!), 's', '', null),
      row(`server CPU per GET of ${fmtBytes(P.fileSize)}`, median(getCpu.atrium!), median(getCpu.rclone!), 's', '', null),
      { benchmark: 'Atrium peak RSS during the PUTs', atrium: rss.peak / 1e6, unit: 'MB', target: '', met: null },
      { benchmark: 'Atrium RSS growth during a PUT (max)', atrium: rss.growth / 1e6, unit: 'MB', target: `< ${FLAT_RSS_BYTES / 1e6} MB (flat)`, met: rss.growth < FLAT_RSS_BYTES },
    );
    result.details.push({
      title: 'PROPFIND Depth 1 runs (ms)',
      columns: ['server', 'runs', 'p50', 'p90', 'min', 'max'],
      rows: targets.map((t) => {
        const v = listMs[t.name]!;
        return [t.name, v.length, fmtNum(median(v)), fmtNum(percentile(v, 90)), fmtNum(Math.min(...v)), fmtNum(Math.max(...v))];
      }),
    });
    result.details.push({
      title: `PUT and GET of ${fmtBytes(P.fileSize)} (per repetition: MB/s, and CPU seconds of the server)`,
      columns: ['server', 'PUT MB/s', 'GET MB/s', 'PUT CPU s', 'GET CPU s'],
      rows: targets.map((t) => [t.name, ...[putMbps, getMbps].map((m) => m[t.name]!.map((v) => fmtNum(v)).join(' / ')), ...[putCpu, getCpu].map((m) => m[t.name]!.map((v) => fmtNum(v, 2)).join(' / '))]),
    });
    result.raw = { listMs, putMbps, getMbps, putCpu, getCpu, rss };
  } catch (err) {
    result.errors.push({ benchmark: 'webdav', subject: 'harness', message: shortError(errMsg(err), 600) });
    throw err;
  } finally {
    for (const s of servers) await s.stop();
    result.environment.loadavg_at_end = `${loadavg()} (other work on the machine skews the figures)`;
    removeTempDir(tmp);
  }
}

const loadavg = () => os.loadavg().map((v) => v.toFixed(2)).join(' / ');

export const webdavBench: BenchModule = {
  area: 'webdav',
  title: 'WebDAV: PROPFIND and PUT/GET against rclone serve webdav',
  budgetMs: (quick) => (quick ? 5 : 15) * 60_000,
  run,
};
