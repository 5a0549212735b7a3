// Area `read`: folder listings and downloads (issue: "list a local folder of 10 000 and of
// 100 000 files (cold and cached, p50/p99), and download a 1 GiB file through /d with 1 and 16
// parallel clients, side by side with `rclone serve http` and nginx serving the same folder").
//
// Targets checked:
//   - cached listing of 10 000 entries: p50 < 50 ms
//   - cold listing (refresh: true): p50 ≤ 2× a raw readdir + stat of the same folder in Node (the
//     fastest asynchronous form: callback API, 256 at a time; fs.promises is shown for reference)
//   - download throughput: ≥ 70 % of nginx's and above rclone's (1 and 16 clients)
//   - Atrium's RSS stays < 200 MB while 16 clients download the big file at once
//
// Every Atrium step that fails (endpoint missing, wrong answer) becomes an error row and the
// other benchmarks go on; peers (nginx, rclone) fail the same way, independently.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { mkdirSync, readdir as readdirCallback, stat as statCallback, type Stats } from 'node:fs';
import { apiCall, parallelDownload, rangeGet, request, type ClientKind, type ParallelResult } from './lib/http.js';
import { createBigFile, createSmallFiles, rawList, rawListSync, readSlice, warmPageCache } from './lib/files.js';
import { makeTempDir, removeTempDir, sampleRss, rssOf, sleep } from './lib/proc.js';
import { startAtrium, startNginx, startRclone, versionOf, which, type Atrium, type Server } from './lib/servers.js';
import { fmtBytes, fmtNum, GiB, median, MiB, nowMs, summarize, type Summary } from './lib/stats.js';
import { envInt } from './lib/params.js';
import { errorText, machine, shortError } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule, SummaryRow } from './lib/types.js';
import { auditFeature, onOffPairs } from './lib/on-off-pairs.js';

/**
 * The admin password of the run's data folder: ATRIUM_ADMIN_PASSWORD only counts when the
 * admin user is created (first start), so every start on the same folder must reuse it.
 */
const adminPassword = randomBytes(12).toString('base64url');

interface Params {
  listSizes: number[];
  listRuns: Record<number, number>;
  fileSize: number;
  clients: number[];
  /** Timed repetitions of each (peer, clients) download; the median is reported. */
  reps: Record<number, number>;
  client: ClientKind;
}

function params(quick: boolean): Params {
  const listSizes = process.env.BENCH_LIST_SIZES
    ? process.env.BENCH_LIST_SIZES.split(',').map((s) => Number(s.trim())).filter((n) => n > 0)
    : quick
      ? [1_000, 10_000]
      : [10_000, 100_000];
  const runsFor = (n: number) => envInt('BENCH_LIST_RUNS') ?? (quick ? 20 : n >= 100_000 ? 10 : 30);
  const fileMiB = envInt('BENCH_FILE_MIB');
  const client = (process.env.BENCH_CLIENT ?? 'curl') as ClientKind;
  if (client !== 'curl' && client !== 'node') throw new Error(`BENCH_CLIENT must be curl or node, got ${client}`);
  return {
    listSizes,
    listRuns: Object.fromEntries(listSizes.map((n) => [n, runsFor(n)])),
    fileSize: fileMiB ? fileMiB * MiB : quick ? 64 * MiB : GiB,
    clients: [1, 16],
    reps: { 1: envInt('BENCH_REPS') ?? (quick ? 5 : 3), 16: envInt('BENCH_REPS') ?? 3 },
    client,
  };
}

// -----------------------------------------------------------------------------------------------

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const P = params(ctx.quick);
  const { signal } = ctx;
  result.parameters = {
    list_sizes: P.listSizes,
    list_runs: P.listRuns,
    file_size: fmtBytes(P.fileSize),
    clients: P.clients,
    download_reps: P.reps,
    client: P.client,
  };
  const [nginxPath, rclonePath, curlPath] = await Promise.all([which('nginx'), which('rclone'), which('curl')]);
  result.environment = {
    ...machine(),
    nginx: nginxPath ? await versionOf('nginx', ['-v']) : 'missing (run bench/setup.sh)',
    rclone: rclonePath ? await versionOf('rclone', ['version']) : 'missing (run bench/setup.sh)',
    download_client: P.client === 'curl' ? `curl (${curlPath ? (await versionOf('curl', ['--version'])).split(' ').slice(0, 2).join(' ') : 'missing'})` : 'node http.get',
    units: 'MB = 10^6 bytes; ms are wall-clock from request to last byte',
  };
  if (P.client === 'curl' && !curlPath) throw new Error('curl is missing: run bench/setup.sh or set BENCH_CLIENT=node');

  const tmp = makeTempDir('atrium-bench-read-');
  try {
    const dataDir = path.join(tmp, 'data');
    const filesDir = path.join(dataDir, 'files');
    mkdirSync(filesDir, { recursive: true });

    // Fixtures, shared by every server.
    for (const n of P.listSizes) {
      const t0 = nowMs();
      await createSmallFiles(path.join(filesDir, `list-${n}`), n, signal);
      ctx.log(`created ${n} files in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    }
    const bigName = 'big.bin';
    const bigFile = path.join(filesDir, bigName);
    {
      const t0 = nowMs();
      await createBigFile(bigFile, P.fileSize, signal);
      ctx.log(`wrote ${fmtBytes(P.fileSize)} ${bigName} in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    }

    await listingBenchmarks(ctx, result, P, dataDir, filesDir);
    signal.throwIfAborted();
    await downloadBenchmarks(ctx, result, P, dataDir, filesDir, bigName, { nginx: Boolean(nginxPath), rclone: Boolean(rclonePath) });
    signal.throwIfAborted();
    await auditBenchmarks(ctx, result, P, dataDir, bigName);
  } finally {
    ctx.log('removing the temp folder');
    removeTempDir(tmp);
  }
}

// -----------------------------------------------------------------------------------------------
// Listing

/**
 * The baseline: readdir + stat of every entry, 256 at a time, through the callback API, which is
 * the fastest asynchronous form in Node 20 (about 2.5x faster than fs.promises.stat here).
 */
async function rawListCallback(dir: string): Promise<number> {
  const names = await new Promise<string[]>((resolve, reject) => readdirCallback(dir, (err, n) => (err ? reject(err) : resolve(n))));
  const stat = (file: string) => new Promise<Stats>((resolve, reject) => statCallback(file, (err, st) => (err ? reject(err) : resolve(st))));
  let count = 0;
  for (let i = 0; i < names.length; i += 256) {
    count += (await Promise.all(names.slice(i, i + 256).map((n) => stat(path.join(dir, n))))).length;
  }
  return count;
}

async function listingBenchmarks(ctx: BenchContext, result: AreaResult, P: Params, dataDir: string, filesDir: string): Promise<void> {
  const { signal } = ctx;
  const raw: Record<number, Summary> = {};
  const rawPromises: Record<number, Summary> = {};
  const rawSync: Record<number, Summary> = {};
  const cold: Record<number, Summary | string> = {};
  const cached: Record<number, Summary | string> = {};
  const samples: Record<string, number[]> = {};

  // Baseline: readdir + stat in this process.
  for (const n of P.listSizes) {
    const dir = path.join(filesDir, `list-${n}`);
    await rawListCallback(dir); // warm-up (dentry/inode caches, JIT)
    await rawList(dir);
    const ms: number[] = [];
    const promiseMs: number[] = [];
    for (let i = 0; i < P.listRuns[n]!; i++) {
      signal.throwIfAborted();
      let t0 = nowMs();
      const count = await rawListCallback(dir);
      ms.push(nowMs() - t0);
      if (count !== n) throw new Error(`raw readdir saw ${count} entries in ${dir}, expected ${n}`);
      t0 = nowMs();
      await rawList(dir);
      promiseMs.push(nowMs() - t0);
    }
    raw[n] = summarize(ms);
    rawPromises[n] = summarize(promiseMs);
    samples[`raw-${n}`] = ms;
    samples[`raw-promises-${n}`] = promiseMs;
    ctx.log(`raw readdir+stat ${n}: p50 ${fmtNum(raw[n]!.p50, 2)} ms, p99 ${fmtNum(raw[n]!.p99, 2)} ms`);
    const syncMs: number[] = [];
    for (let i = 0; i < P.listRuns[n]!; i++) {
      signal.throwIfAborted();
      const t0 = nowMs();
      rawListSync(dir);
      syncMs.push(nowMs() - t0);
    }
    rawSync[n] = summarize(syncMs);
    samples[`raw-sync-${n}`] = syncMs;
  }

  // Atrium.
  let atrium: Atrium | undefined;
  let startError: string | undefined;
  let cacheError: string | undefined;
  let listingRss: number | undefined;
  if (ctx.atriumBuildError) startError = `build: ${ctx.atriumBuildError}`;
  else {
    try {
      atrium = await startAtrium(ctx.repoRoot, dataDir, { signal, password: adminPassword });
    } catch (err) {
      startError = `start/login: ${errorText(err)}`;
    }
  }
  if (startError) result.errors.push({ benchmark: 'listing', subject: 'atrium', message: startError });

  try {
    if (atrium) {
      // The listing cache must be on (cache_expiration minutes > 0) for the cached runs.
      try {
        const { data } = await apiCall<{ content: Array<Record<string, unknown>> }>(atrium.base, '/api/admin/storage/list', { token: atrium.token, method: 'GET' });
        const storage = data?.content?.find((s) => s.mount_path === '/') ?? data?.content?.[0];
        if (!storage) throw new Error('/api/admin/storage/list: no storage');
        await apiCall(atrium.base, '/api/admin/storage/update', { token: atrium.token, body: { ...storage, cache_expiration: 30 } });
        const after = await apiCall<{ content: Array<Record<string, unknown>> }>(atrium.base, '/api/admin/storage/list', { token: atrium.token, method: 'GET' });
        const s2 = after.data?.content?.find((s) => s.id === storage.id);
        if (s2?.cache_expiration !== 30) throw new Error(`storage/update did not persist cache_expiration (now ${JSON.stringify(s2?.cache_expiration)})`);
        if (s2.status !== 'work') throw new Error(`storage status after update: ${JSON.stringify(s2.status)}`);
      } catch (err) {
        cacheError = `enabling the listing cache: ${errorText(err)}`;
        result.errors.push({ benchmark: 'listing cached', subject: 'atrium', message: cacheError });
      }

      for (const n of P.listSizes) {
        signal.throwIfAborted();
        const virtual = `/list-${n}`;
        const list = async (refresh: boolean) => {
          const r = await request(`${atrium!.base}/api/fs/list`, {
            headers: { authorization: atrium!.token },
            body: { path: virtual, page: 1, per_page: 0, refresh, password: '' },
            timeoutMs: 120_000,
            signal,
          });
          let json: any;
          try {
            json = JSON.parse(r.body.toString('utf8'));
          } catch {
            throw new Error(`/api/fs/list ${virtual}: HTTP ${r.status}, not JSON: ${r.body.toString('utf8').slice(0, 200)}`);
          }
          if (r.status !== 200 || json?.code !== 200) throw new Error(`/api/fs/list ${virtual}: HTTP ${r.status}, code ${json?.code}, message ${JSON.stringify(json?.message)}`);
          const len = Array.isArray(json.data?.content) ? json.data.content.length : -1;
          if (json.data?.total !== n || len !== n) throw new Error(`/api/fs/list ${virtual}: total ${json.data?.total}, ${len} entries, expected ${n}`);
          return r;
        };
        const measure = async (refresh: boolean): Promise<number[]> => {
          const ms: number[] = [];
          for (let i = 0; i < P.listRuns[n]!; i++) {
            signal.throwIfAborted();
            ms.push((await list(refresh)).ms);
          }
          return ms;
        };

        try {
          const w = await list(true); // warm-up
          ctx.log(`atrium list ${n}: response ${(w.bytes / 1e6).toFixed(1)} MB`);
          const ms = await measure(true);
          cold[n] = summarize(ms);
          samples[`atrium-cold-${n}`] = ms;
          ctx.log(`atrium cold list ${n}: p50 ${fmtNum(cold[n].p50, 2)} ms, p99 ${fmtNum(cold[n].p99, 2)} ms`);
        } catch (err) {
          cold[n] = errorText(err);
          result.errors.push({ benchmark: `list ${n} cold`, subject: 'atrium', message: cold[n] });
        }
        if (cacheError) {
          cached[n] = cacheError;
          continue;
        }
        try {
          await list(false); // fills the cache
          const ms = await measure(false);
          cached[n] = summarize(ms);
          samples[`atrium-cached-${n}`] = ms;
          ctx.log(`atrium cached list ${n}: p50 ${fmtNum(cached[n].p50, 2)} ms, p99 ${fmtNum(cached[n].p99, 2)} ms`);
        } catch (err) {
          cached[n] = errorText(err);
          result.errors.push({ benchmark: `list ${n} cached`, subject: 'atrium', message: cached[n] });
        }
      }
    }
    if (atrium) {
      const rss = await rssOf(atrium.proc.pid);
      if (rss !== undefined) {
        result.raw.atrium_rss_after_listings_bytes = rss;
        listingRss = rss;
      }
    }
  } finally {
    await atrium?.stop();
  }

  // Tables.
  const detailRows: Array<Array<string | number | null>> = [];
  const row = (what: string, n: number, s: Summary | string | undefined) =>
    typeof s === 'object'
      ? detailRows.push([what, n, s.n, fmtNum(s.p50, 2), fmtNum(s.p99, 2), fmtNum(s.min, 2), fmtNum(s.max, 2), fmtNum(s.mean, 2)])
      : detailRows.push([what, n, null, 'ERROR', null, null, null, shortError(s ?? startError ?? 'not run')]);
  for (const n of P.listSizes) {
    row('raw readdir + stat ×256, callback API (baseline)', n, raw[n]);
    row('raw fs.promises readdir + stat ×256 (reference)', n, rawPromises[n]);
    row('raw readdirSync + statSync (reference)', n, rawSync[n]);
    row('atrium /api/fs/list refresh:true (cold)', n, cold[n] ?? startError);
    row('atrium /api/fs/list (cached)', n, cached[n] ?? startError);
  }
  result.details.push({ title: 'Listing (ms)', columns: ['what', 'entries', 'runs', 'p50', 'p99', 'min', 'max', 'mean / error'], rows: detailRows });

  for (const n of P.listSizes) {
    const r = raw[n]!;
    const c = cold[n] ?? startError ?? 'not run';
    const k = cached[n] ?? startError ?? 'not run';
    const cs = typeof c === 'object' ? c : undefined;
    const ks = typeof k === 'object' ? k : undefined;
    const ratio = (a: number | undefined, b: number) => (a === undefined ? null : a / b);
    /** One listing figure of Atrium's (ms) against the same figure of a raw read. */
    const vs = (benchmark: string, atrium: number | undefined, peerName: string, peer: number, err: Summary | string, target: Pick<SummaryRow, 'target' | 'met'> = {}): SummaryRow => ({
      benchmark,
      atrium: atrium ?? null,
      peerName,
      peer,
      unit: 'ms',
      ratio: ratio(atrium, peer),
      ...target,
      error: typeof err === 'string' ? err : undefined,
    });
    const coldRatio = ratio(cs?.p50, r.p50);
    result.summary.push(
      vs(`list ${n} cold p50`, cs?.p50, 'raw', r.p50, c, { target: '≤ 2.00× raw', met: coldRatio === null ? null : coldRatio <= 2 }),
      vs(`list ${n} cold p50 vs fs.promises`, cs?.p50, 'raw (promises)', rawPromises[n]!.p50, c),
      vs(`list ${n} cold p99`, cs?.p99, 'raw', r.p99, c),
      vs(`list ${n} cached p50`, ks?.p50, 'raw', r.p50, k, n === 10_000 ? { target: '< 50 ms', met: ks ? ks.p50 < 50 : null } : {}),
      vs(`list ${n} cached p99`, ks?.p99, 'raw', r.p99, k),
    );
  }
  if (listingRss !== undefined) {
    result.summary.push({ benchmark: `atrium RSS after the listings (cache holds ${P.listSizes.join(' + ')} entries)`, atrium: listingRss / 1e6, unit: 'MB' });
  }
  result.raw.listing_ms = samples;
}

// -----------------------------------------------------------------------------------------------
// Download

interface Peer {
  name: 'atrium' | 'nginx' | 'rclone';
  server?: Server;
  url?: string;
  error?: string;
}

async function downloadBenchmarks(
  ctx: BenchContext,
  result: AreaResult,
  P: Params,
  dataDir: string,
  filesDir: string,
  bigName: string,
  have: { nginx: boolean; rclone: boolean },
): Promise<void> {
  const { signal } = ctx;
  const bigFile = path.join(filesDir, bigName);
  await warmPageCache(bigFile);

  const peers: Peer[] = [{ name: 'atrium' }, { name: 'nginx' }, { name: 'rclone' }];
  const peer = (name: Peer['name']) => peers.find((p) => p.name === name)!;
  const work = path.dirname(dataDir);

  try {
    // Start the three servers (each independently).
    const atriumPeer = peer('atrium');
    let atrium: Atrium | undefined;
    let idleRss: number | undefined;
    if (ctx.atriumBuildError) atriumPeer.error = `build: ${ctx.atriumBuildError}`;
    else {
      try {
        // A fresh process: the listing benchmarks' heap does not count against the RSS target.
        atrium = await startAtrium(ctx.repoRoot, dataDir, { signal, password: adminPassword });
        atriumPeer.server = atrium;
        await sleep(1000, signal);
        idleRss = await rssOf(atrium.proc.pid);
        const { data } = await apiCall<{ sign?: string; raw_url?: string; size?: number }>(atrium.base, '/api/fs/get', { token: atrium.token, body: { path: `/${bigName}`, password: '' } });
        if (data?.size !== P.fileSize) throw new Error(`/api/fs/get /${bigName}: size ${data?.size}, expected ${P.fileSize}`);
        atriumPeer.url = `${atrium.base}/d/${encodeURIComponent(bigName)}${data.sign ? `?sign=${encodeURIComponent(data.sign)}` : ''}`;
        result.raw.atrium_raw_url = data.raw_url;
      } catch (err) {
        atriumPeer.error = `start/login//api/fs/get: ${errorText(err)}`;
      }
    }
    const nginx = peer('nginx');
    if (!have.nginx) nginx.error = 'nginx is not installed (run bench/setup.sh)';
    else {
      try {
        nginx.server = await startNginx(filesDir, path.join(work, 'nginx'), { signal });
        nginx.url = `${nginx.server.base}/${encodeURIComponent(bigName)}`;
      } catch (err) {
        nginx.error = `start: ${errorText(err)}`;
      }
    }
    const rclone = peer('rclone');
    if (!have.rclone) rclone.error = 'rclone is not installed (run bench/setup.sh)';
    else {
      try {
        rclone.server = await startRclone(filesDir, path.join(work, 'rclone'), { signal });
        rclone.url = `${rclone.server.base}/${encodeURIComponent(bigName)}`;
      } catch (err) {
        rclone.error = `start: ${errorText(err)}`;
      }
    }

    // Correctness first: a Range request must return the right bytes, a full GET the right size.
    const start = Math.floor(P.fileSize / 2) + 12345;
    const expect = await readSlice(bigFile, start, 4096);
    for (const p of peers) {
      if (!p.url || p.error) continue;
      try {
        const r = await rangeGet(p.url, start, start + 4095);
        if (r.status !== 206) throw new Error(`Range request answered HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 200)}`);
        if (!r.body.equals(expect)) throw new Error(`Range request returned wrong bytes (${r.body.length} bytes)`);
        await parallelDownload(P.client, p.url, 1, P.fileSize, timeoutFor(P.fileSize), signal); // warm-up
      } catch (err) {
        p.error = `sanity check (Range + one full download): ${errorText(err)}`;
      }
    }
    for (const p of peers) if (p.error) result.errors.push({ benchmark: 'download', subject: p.name, message: p.error });

    // Timed runs: for each client count, repetitions rotating the order of the peers.
    const runs: Record<string, ParallelResult[]> = {};
    const failures: Record<string, string> = {};
    let rss: { peak: number; baseline: number; samples: number[] } | undefined;
    let rssError: string | undefined;
    for (const clients of P.clients) {
      const live = peers.filter((p) => p.url && !p.error);
      for (let rep = 0; rep < P.reps[clients]!; rep++) {
        for (let j = 0; j < live.length; j++) {
          signal.throwIfAborted();
          const p = live[(rep + j) % live.length]!;
          const key = `${p.name}-${clients}`;
          if (failures[key]) continue;
          const sampler = p.name === 'atrium' && clients === 16 ? sampleRss(p.server!.proc.pid, 100) : undefined;
          const baseline = sampler ? ((await rssOf(p.server!.proc.pid)) ?? 0) : 0;
          try {
            const r = await parallelDownload(P.client, p.url!, clients, P.fileSize, timeoutFor(P.fileSize * clients), signal);
            (runs[key] ??= []).push(r);
            ctx.log(`${p.name} ${clients} client(s) rep ${rep + 1}: ${r.mbps.toFixed(0)} MB/s`);
          } catch (err) {
            signal.throwIfAborted();
            failures[key] = errorText(err);
            result.errors.push({ benchmark: `download ${clients} client(s)`, subject: p.name, message: failures[key] });
          } finally {
            if (sampler) {
              const s = await sampler.stop();
              if (!rss || s.peak > rss.peak) rss = { peak: s.peak, baseline, samples: s.samples };
            }
          }
        }
      }
    }
    if (atrium && atrium.proc.done()) rssError = `the Atrium process exited during the downloads: ${atrium.proc.output().slice(-500)}`;

    // Tables.
    const label = `${fmtBytes(P.fileSize)}`;
    const detail: Array<Array<string | number | null>> = [];
    const med: Record<string, number | undefined> = {};
    for (const clients of P.clients) {
      for (const p of peers) {
        const key = `${p.name}-${clients}`;
        const rs = runs[key];
        if (rs?.length) {
          med[key] = median(rs.map((r) => r.mbps));
          const per = rs.flatMap((r) => r.perClientMbps);
          detail.push([p.name, clients, rs.length, fmtNum(med[key], 0), rs.map((r) => r.mbps.toFixed(0)).join(', '), `${fmtNum(Math.min(...per), 0)}–${fmtNum(Math.max(...per), 0)}`, fmtNum(median(rs.map((r) => r.wallS)), 2)]);
        } else {
          detail.push([p.name, clients, 0, 'ERROR', shortError(failures[key] ?? p.error ?? 'not run'), null, null]);
        }
      }
    }
    result.details.push({
      title: `Download of ${label} (MB/s, aggregate over all clients = bytes / wall time)`,
      columns: ['server', 'clients', 'reps', 'median MB/s', 'each rep MB/s / error', 'per-client MB/s (min–max)', 'wall s (median)'],
      rows: detail,
    });
    result.raw.downloads = runs;

    for (const clients of P.clients) {
      const a = med[`atrium-${clients}`];
      const aErr = failures[`atrium-${clients}`] ?? peer('atrium').error;
      for (const [peerName, target, ok] of [
        ['nginx', '≥ 0.70× nginx', (r: number) => r >= 0.7],
        ['rclone', '> 1.00× rclone', (r: number) => r > 1],
      ] as const) {
        const b = med[`${peerName}-${clients}`];
        const bErr = failures[`${peerName}-${clients}`] ?? peer(peerName).error;
        const ratio = a !== undefined && b !== undefined ? a / b : null;
        const row: SummaryRow = {
          benchmark: `download ${label}, ${clients} client${clients > 1 ? 's' : ''} vs ${peerName}`,
          atrium: a ?? null,
          peerName,
          peer: b ?? null,
          unit: 'MB/s',
          ratio,
          target,
          met: ratio === null ? null : ok(ratio),
          error: a === undefined ? `atrium: ${aErr ?? 'not run'}` : b === undefined ? `${peerName}: ${bErr ?? 'not run'}` : undefined,
        };
        result.summary.push(row);
      }
    }
    const rssRow: SummaryRow = {
      benchmark: `atrium peak RSS, 16 clients × ${label}`,
      atrium: rss ? rss.peak / 1e6 : null,
      unit: 'MB',
      target: '< 200 MB',
      met: rss && !rssError ? rss.peak < 200e6 : null,
      error: rssError ?? (rss ? undefined : `atrium: ${failures['atrium-16'] ?? peer('atrium').error ?? 'not run'}`),
    };
    result.summary.push(rssRow);
    if (idleRss !== undefined) result.summary.push({ benchmark: 'atrium RSS idle (fresh process, logged in)', atrium: idleRss / 1e6, unit: 'MB' });
    if (rss) {
      result.summary.push({ benchmark: 'atrium RSS before the 16-client download', atrium: rss.baseline / 1e6, unit: 'MB' });
      result.raw.rss_samples_bytes = rss.samples;
    }
    if (rssError) result.errors.push({ benchmark: 'RSS', subject: 'atrium', message: rssError });
  } finally {
    await Promise.all(peers.map((p) => p.server?.stop()));
  }
}

/** Generous per-run time limit: at least 60 s, or the bytes at 20 MB/s. */
function timeoutFor(bytes: number): number {
  return Math.max(60, Math.ceil(bytes / 20e6));
}

export const readBench: BenchModule = {
  area: 'read',
  title: 'Reading: folder listings and downloads',
  budgetMs: (quick) => (quick ? 15 : 60) * 60_000,
  run,
};

// -----------------------------------------------------------------------------------------------
// The audit log on vs off (issue 37): cached listing p50 and one-client download throughput

async function auditBenchmarks(ctx: BenchContext, result: AreaResult, P: Params, dataDir: string, bigName: string): Promise<void> {
  const { signal } = ctx;
  const n = Math.min(...P.listSizes);
  const pairs = envInt('BENCH_AUDIT_PAIRS') ?? (ctx.quick ? 3 : 5);
  let atrium: Atrium | undefined;
  try {
    atrium = await startAtrium(ctx.repoRoot, dataDir, { signal, password: adminPassword });
    const a = atrium;
    const { data } = await apiCall<{ sign?: string }>(a.base, '/api/fs/get', { token: a.token, body: { path: `/${bigName}`, password: '' } });
    const url = `${a.base}/d/${encodeURIComponent(bigName)}${data.sign ? `?sign=${encodeURIComponent(data.sign)}` : ''}`;
    const list = async () => {
      const r = await request(`${a.base}/api/fs/list`, { headers: { authorization: a.token }, body: { path: `/list-${n}`, page: 1, per_page: 0, refresh: false, password: '' }, timeoutMs: 120_000, signal });
      if (r.status !== 200 || !r.body.toString('utf8').startsWith('{"code":200')) throw new Error(`/api/fs/list /list-${n}: HTTP ${r.status}`);
      return r.ms;
    };
    await list();
    await parallelDownload(P.client, url, 1, P.fileSize, timeoutFor(P.fileSize), signal);
    await onOffPairs(ctx, result, auditFeature(a), [
      {
        name: `cached list ${n} p50`,
        unit: 'ms',
        better: 'lower',
        target: 0.95,
        run: async () => {
          const ms: number[] = [];
          for (let i = 0; i < P.listRuns[n]!; i++) ms.push(await list());
          return median(ms);
        },
      },
      { name: 'download /d, 1 client', unit: 'MB/s', better: 'higher', target: 0.95, run: async () => (await parallelDownload(P.client, url, 1, P.fileSize, timeoutFor(P.fileSize), signal)).mbps },
    ], pairs);
  } catch (err) {
    signal.throwIfAborted();
    result.errors.push({ benchmark: 'audit log on vs off', subject: 'atrium', message: errorText(err) });
  } finally {
    await atrium?.stop();
  }
}
