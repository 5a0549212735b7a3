// Area `soak` (security issue: "30 minutes of mixed traffic (list/get/download/upload/rename)
// at 32 connections: zero 5xx, RSS growth under 10%, no file lost (checksums at the end)").
//
// 32 clients loop until the time is up, each picking list (30%), get (20%), download (25%),
// upload (15%) or rename (10%). Downloads are checked byte for byte against the seed files;
// uploads and renames are tracked, and at the end every file that should exist is read back
// from disk and compared by SHA-256. RSS is sampled every 5 s; growth compares the mean of the
// last 10% of samples with the mean of the samples after the warm-up (the first 10%). The
// server's /metrics is scraped at the same times, so the report splits memory into the V8 heap
// (reserved and in use), external memory (buffers) and the rest, and shows the listing cache.
//
// Each client keeps at most BENCH_SOAK_FILES files (default 200) in its folder: past that, an
// upload replaces one of its files (a write over an existing name, whose new bytes the final
// check expects), so the data and the traffic reach a steady state and memory growth measures
// leaks, not a data set that grows all along. BENCH_SOAK_FILES=0 lets the folders grow without
// bound (60 000 to 80 000 files in 30 min): every listing of a changed folder then re-reads a larger
// folder, and memory follows the size of that work.
//
// BENCH_SOAK_MIN (default 30; 1 with BENCH_QUICK) sets the duration, BENCH_SOAK_CLIENTS the
// number of clients (default 32).

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { apiCall } from './lib/http.js';
import { makeTempDir, removeTempDir, sampleRss, sleep } from './lib/proc.js';
import { startAtrium, type Atrium } from './lib/servers.js';
import { fmtNum, nowMs, percentile } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const SEED_FILES = 200;

interface Outcome {
  status: number;
  body: Buffer;
}

/** The memory figures of one /metrics scrape, in bytes (and entries for the cache). */
interface MemorySample {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  cacheObjects: number;
}

const METRIC_OF: Record<keyof MemorySample, string> = {
  rss: 'process_resident_memory_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  heapUsed: 'nodejs_heap_size_used_bytes',
  external: 'nodejs_external_memory_bytes',
  cacheObjects: 'atrium_listing_cache_objects',
};

function parseMemory(text: string): MemorySample | undefined {
  const out: Partial<MemorySample> = {};
  for (const [key, name] of Object.entries(METRIC_OF) as [keyof MemorySample, string][]) {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) return undefined;
    out[key] = Number(m[1]);
  }
  return out as MemorySample;
}

function call(agent: http.Agent, base: string, method: string, route: string, token: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${route}`, { method, agent, headers: { authorization: token, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`timeout: ${method} ${route}`)));
    req.on('error', reject);
    req.end(body);
  });
}

export const soakBench: BenchModule = {
  area: 'soak',
  title: 'Soak: mixed traffic at 32 connections (5xx, RSS growth, lost files)',
  onlyWhenNamed: true,
  budgetMs: (quick) => (quick ? 5 : Number(process.env.BENCH_SOAK_MIN ?? 30) + 10) * 60_000,
  async run(ctx: BenchContext, result: AreaResult) {
    const minutes = Number(process.env.BENCH_SOAK_MIN ?? (ctx.quick ? 1 : 30));
    const clients = Number(process.env.BENCH_SOAK_CLIENTS ?? 32);
    const filesPerClient = Number(process.env.BENCH_SOAK_FILES ?? 200);
    result.parameters = {
      minutes,
      clients,
      seedFiles: SEED_FILES,
      filesPerClient: filesPerClient > 0 ? filesPerClient : 'unbounded',
      mix: 'list 30%, get 20%, download 25%, upload 15%, rename 10%',
    };
    const work = makeTempDir('atrium-soak-');
    let atrium: Atrium | undefined;
    try {
      const dataDir = path.join(work, 'data');
      const seedDir = path.join(dataDir, 'files/soak/seed');
      mkdirSync(seedDir, { recursive: true });
      const seeds = new Map<string, string>();
      for (let i = 0; i < SEED_FILES; i++) {
        const body = randomBytes(1024 + Math.floor(Math.random() * 512 * 1024));
        const name = `seed-${i}.bin`;
        writeFileSync(path.join(seedDir, name), body);
        seeds.set(name, sha(body));
      }
      atrium = await startAtrium(ctx.repoRoot, dataDir, { signal: ctx.signal });
      const { base, token } = atrium;
      const metricsToken = randomBytes(12).toString('hex');
      await apiCall(base, '/api/admin/setting/save', {
        token,
        body: [
          { key: 'sign_all', value: 'false' },
          { key: 'metrics_token', value: metricsToken },
        ],
      });
      const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
      /** Files clients wrote: virtual path → sha256, updated on rename. */
      const written = new Map<string, string>();
      const counts = { requests: 0, serverErrors: 0, clientErrors: 0, failures: 0, badBytes: 0 };
      const latencies: number[] = [];
      const firstErrors: string[] = [];
      const note = (what: string) => {
        if (firstErrors.length < 20) firstErrors.push(what);
      };
      const rss = sampleRss(atrium.proc.pid, 5000);
      const deadline = Date.now() + minutes * 60_000;
      const memory: MemorySample[] = [];
      const scraping = (async () => {
        while (Date.now() < deadline && !ctx.signal.aborted) {
          const r = await call(agent, base, 'GET', '/metrics', `Bearer ${metricsToken}`).catch(() => undefined);
          const m = r?.status === 200 ? parseMemory(r.body.toString()) : undefined;
          if (m) memory.push(m);
          await sleep(5000, ctx.signal).catch(() => undefined);
        }
      })();
      const seedNames = [...seeds.keys()];
      const pick = <T>(a: T[]) => a[Math.floor(Math.random() * a.length)]!;

      const client = async (n: number) => {
        const own: string[] = [];
        let serial = 0;
        await call(agent, base, 'POST', '/api/fs/mkdir', token, JSON.stringify({ path: `/soak/w${n}` }), { 'content-type': 'application/json' });
        while (Date.now() < deadline && !ctx.signal.aborted) {
          const roll = Math.random();
          const t0 = nowMs();
          let what = '';
          try {
            let r: Outcome;
            if (roll < 0.3) {
              what = 'list';
              r = await call(agent, base, 'POST', '/api/fs/list', token, JSON.stringify({ path: Math.random() < 0.5 ? '/soak/seed' : `/soak/w${n}`, per_page: 50, page: 1 }), { 'content-type': 'application/json' });
            } else if (roll < 0.5) {
              what = 'get';
              r = await call(agent, base, 'POST', '/api/fs/get', token, JSON.stringify({ path: `/soak/seed/${pick(seedNames)}` }), { 'content-type': 'application/json' });
            } else if (roll < 0.75) {
              what = 'download';
              const name = pick(seedNames);
              r = await call(agent, base, 'GET', `/d/soak/seed/${name}`, token);
              if (r.status === 200 && sha(r.body) !== seeds.get(name)) {
                counts.badBytes++;
                note(`download ${name}: wrong bytes`);
              }
            } else if (roll < 0.9 || own.length === 0) {
              what = 'upload';
              const body = randomBytes(512 + Math.floor(Math.random() * 256 * 1024));
              const replacing = filesPerClient > 0 && own.length >= filesPerClient;
              const target = replacing ? pick(own) : `/soak/w${n}/up-${serial++}.bin`;
              r = await call(agent, base, 'PUT', '/api/fs/put', token, body, { 'file-path': encodeURIComponent(target), 'content-length': String(body.length) });
              if (r.status === 200 && JSON.parse(r.body.toString()).code === 200) {
                written.set(target, sha(body));
                if (!replacing) own.push(target);
              }
            } else {
              what = 'rename';
              const i = Math.floor(Math.random() * own.length);
              const from = own[i]!;
              const name = `rn-${serial++}.bin`;
              r = await call(agent, base, 'POST', '/api/fs/rename', token, JSON.stringify({ path: from, name }), { 'content-type': 'application/json' });
              if (r.status === 200 && JSON.parse(r.body.toString()).code === 200) {
                const to = `/soak/w${n}/${name}`;
                written.set(to, written.get(from)!);
                written.delete(from);
                own[i] = to;
              }
            }
            counts.requests++;
            latencies.push(nowMs() - t0);
            const envelope = r.body.length < 4096 && r.body[0] === 0x7b ? (JSON.parse(r.body.toString()) as { code?: number; message?: string }) : undefined;
            if (r.status >= 500 || /internal error/.test(envelope?.message ?? '')) {
              counts.serverErrors++;
              note(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`);
            } else if (r.status >= 400 || (envelope?.code !== undefined && envelope.code !== 200)) {
              counts.clientErrors++;
              note(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`);
            }
          } catch (err) {
            counts.failures++;
            note(`${what}: ${(err as Error).message}`);
          }
        }
      };
      ctx.log(`${clients} clients for ${minutes} min`);
      await Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
      await scraping;
      const { samples } = await rss.stop();
      agent.destroy();

      // Every file that should exist, read back from disk.
      let lost = 0;
      for (const [name, digest] of seeds) if (sha(readFileSync(path.join(seedDir, name))) !== digest) lost++;
      for (const [virtual, digest] of written) {
        const file = path.join(dataDir, 'files', virtual);
        if (!existsSync(file) || sha(readFileSync(file)) !== digest) lost++;
      }
      const tenth = Math.max(1, Math.floor(samples.length / 10));
      const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
      const warm = mean(samples.slice(tenth, 2 * tenth));
      const last = mean(samples.slice(-tenth));
      const growth = warm > 0 ? ((last - warm) / warm) * 100 : 0;
      const seconds = minutes * 60;
      result.summary.push(
        { benchmark: `requests in ${minutes} min (${clients} clients)`, atrium: counts.requests, unit: 'requests' },
        { benchmark: 'throughput', atrium: counts.requests / seconds, unit: 'req/s' },
        { benchmark: 'latency p99', atrium: percentile(latencies, 99), unit: 'ms' },
        { benchmark: '5xx / unhandled errors', atrium: counts.serverErrors, unit: 'count', target: '= 0', met: counts.serverErrors === 0 },
        { benchmark: 'failed requests (connection, timeout)', atrium: counts.failures, unit: 'count', target: '= 0', met: counts.failures === 0 },
        { benchmark: 'downloads with wrong bytes', atrium: counts.badBytes, unit: 'count', target: '= 0', met: counts.badBytes === 0 },
        { benchmark: `files lost (of ${seeds.size + written.size} checked)`, atrium: lost, unit: 'count', target: '= 0', met: lost === 0 },
        { benchmark: 'RSS growth after warm-up', atrium: growth, unit: '%', target: '< 10%', met: growth < 10 },
      );
      result.details.push({
        title: 'RSS samples (MB, every 5 s)',
        columns: ['warm-up mean', 'last 10% mean', 'peak', 'samples'],
        rows: [[fmtNum(warm / 1e6), fmtNum(last / 1e6), fmtNum(Math.max(...samples) / 1e6), samples.length]],
      });
      if (memory.length >= 10) {
        // The same windows over the server's own figures (scraped from /metrics).
        const mt = Math.max(1, Math.floor(memory.length / 10));
        const part = (label: string, of: (m: MemorySample) => number, unit = 'MB', scale = 1e6) => {
          const a = mean(memory.slice(mt, 2 * mt).map(of));
          const b = mean(memory.slice(-mt).map(of));
          return [label, fmtNum(a / scale), fmtNum(b / scale), fmtNum((b - a) / scale), unit];
        };
        result.details.push({
          title: 'Server memory from /metrics (warm-up window vs last 10%, means)',
          columns: ['part', 'warm-up', 'last 10%', 'change', 'unit'],
          rows: [
            part('RSS', (m) => m.rss),
            part('V8 heap reserved', (m) => m.heapTotal),
            part('V8 heap in use (live + garbage)', (m) => m.heapUsed),
            part('external (buffers)', (m) => m.external),
            part('rest (code, native, allocator)', (m) => m.rss - m.heapTotal - m.external),
            part('listing cache entries', (m) => m.cacheObjects, 'entries', 1),
          ],
        });
      }
      if (firstErrors.length) result.details.push({ title: 'first errors', columns: ['error'], rows: firstErrors.map((e) => [e]) });
      result.raw = { counts, rssSamples: samples, memorySamples: memory, clientErrors: counts.clientErrors };
    } finally {
      await atrium?.stop();
      removeTempDir(work);
    }
  },
};
