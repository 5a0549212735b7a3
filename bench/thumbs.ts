// Area `thumbs` (issue #43): thumbnails made in the background on a Local storage — 1 000 JPEGs
// of 12 MP (BENCH_QUICK: 40), listed once, made by Atrium's thumbnail worker — against
// `vipsthumbnail` (libvips-tools) on the same files in the same run, as many at once as Atrium's
// workers; then a cached thumbnail request.
//
// Targets checked:
//   - background throughput ≥ 0.7× vipsthumbnail's (files per second)
//   - a cached thumbnail request (GET /d/<path>?type=thumb): p50 < 5 ms
//
// The machine is shared: the load average at start and end is recorded with the figures.

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os, { loadavg } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { apiCall, request } from './lib/http.js';
import { makeTempDir, removeTempDir, runCommand, sleep } from './lib/proc.js';
import { startAtrium, versionOf, which } from './lib/servers.js';
import { nowMs, summarize } from './lib/stats.js';
import { envInt } from './lib/params.js';
import { errorText, machine } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const SIZE = 144;

/** `n` distinct 12 MP JPEGs (4000 × 3000, smooth noise as a photo has) in `dir`. */
async function makePhotos(dir: string, n: number): Promise<number> {
  mkdirSync(dir, { recursive: true });
  let bytes = 0;
  const variants = Math.min(n, 8);
  const bodies: Buffer[] = [];
  for (let v = 0; v < variants; v++) {
    const small = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 110 + v * 5, sigma: 40 } } }).png().toBuffer();
    bodies.push(await sharp(small).resize(4000, 3000, { kernel: 'cubic' }).jpeg({ quality: 85 }).toBuffer());
  }
  for (let i = 0; i < n; i++) {
    const body = bodies[i % variants]!;
    writeFileSync(path.join(dir, `photo-${String(i).padStart(5, '0')}.jpg`), body);
    bytes += body.length;
  }
  return bytes;
}

const countCached = (dir: string): number => {
  let n = 0;
  for (const shard of (() => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  })()) {
    n += readdirSync(path.join(dir, shard)).filter((f) => f.endsWith('.webp')).length;
  }
  return n;
};

export const thumbsBench: BenchModule = {
  area: 'thumbs',
  title: 'Thumbnails: background throughput against vipsthumbnail, cached request latency',
  budgetMs: (quick) => (quick ? 10 : 60) * 60_000,
  async run(ctx: BenchContext, result: AreaResult) {
    const n = envInt('BENCH_THUMB_FILES') ?? (ctx.quick ? 40 : 1_000);
    const workers = envInt('BENCH_THUMB_WORKERS') ?? Math.max(1, os.availableParallelism());
    result.parameters = { files: n, megapixels: 12, size: SIZE, workers, atrium_output: 'WebP', vipsthumbnail_output: 'JPEG' };
    result.environment = { ...machine(), loadavg_at_start: loadavg().map((x) => x.toFixed(2)).join(' ') };
    const tmp = makeTempDir('atrium-bench-thumbs-');
    try {
      const dataDir = path.join(tmp, 'data');
      const photos = path.join(dataDir, 'files', 'photos');
      ctx.log(`thumbs: generating ${n} JPEGs of 12 MP`);
      const bytes = await makePhotos(photos, n);
      result.parameters.total_mib = Math.round(bytes / 1048576);

      // vipsthumbnail: the same files, `workers` processes at once, batches of 8 files each.
      let vipsRate: number | null = null;
      const vips = await which('vipsthumbnail');
      if (!vips) result.errors.push({ benchmark: 'vipsthumbnail', subject: 'vipsthumbnail', message: 'not installed (Debian libvips-tools)' });
      else {
        result.environment.vipsthumbnail = await versionOf('vips', ['--version']).catch(() => 'unknown');
        const out = path.join(tmp, 'vips-out');
        mkdirSync(out);
        ctx.log(`thumbs: vipsthumbnail, ${workers} at once`);
        const t0 = nowMs();
        const script = `cd ${JSON.stringify(photos)} && ls | xargs -P ${workers} -n 8 vipsthumbnail -s ${SIZE} -o ${JSON.stringify(out)}/%s.jpg`;
        const r = await runCommand('vipsthumbnail', 'bash', ['-c', script], { timeoutMs: 3_600_000 }).catch((e) => ({ code: 'error', output: errorText(e) }));
        const s = (nowMs() - t0) / 1000;
        const made = readdirSync(out).length;
        if (r.code !== 0 || made !== n) result.errors.push({ benchmark: 'vipsthumbnail', subject: 'vipsthumbnail', message: `exit ${r.code}, ${made}/${n} made: ${r.output.slice(0, 300)}` });
        else vipsRate = n / s;
        result.raw.vips_seconds = s;
      }

      ctx.log('thumbs: starting Atrium');
      const atrium = await startAtrium(ctx.repoRoot, dataDir, { signal: ctx.signal });
      let atriumRate: number | null = null;
      let p50: number | null = null;
      try {
        const { base, token } = atrium;
        await apiCall(base, '/api/admin/setting/save', {
          token,
          body: [
            { key: 'thumb_workers', value: String(workers) },
            { key: 'thumb_cache_size', value: '100000' },
            { key: 'thumb_sizes', value: String(SIZE) },
          ],
        });
        const cacheDir = path.join(dataDir, 'thumbs');
        ctx.log(`thumbs: listing ${n} files; Atrium makes their thumbnails in the background`);
        const t0 = nowMs();
        const { data } = await apiCall<{ content: Array<{ name: string; thumb: string }> }>(base, '/api/fs/list', { token, body: { path: '/photos', refresh: true, per_page: 0 } });
        const deadline = Date.now() + 3_600_000;
        while (countCached(cacheDir) < n && Date.now() < deadline && !ctx.signal.aborted) await sleep(50);
        const s = (nowMs() - t0) / 1000;
        const made = countCached(cacheDir);
        if (made !== n) result.errors.push({ benchmark: 'background thumbnails', subject: 'atrium', message: `${made}/${n} made` });
        else atriumRate = n / s;
        result.raw.atrium_seconds = s;

        // Cached requests: each thumbnail once more, one at a time over a kept-alive connection.
        const urls = data.content.filter((o) => o.thumb).map((o) => o.thumb);
        if (urls.length === 0) throw new Error('the listing carried no thumbnail links');
        const samples: number[] = [];
        for (let i = 0; i < Math.max(400, urls.length); i++) {
          const u = urls[i % urls.length]!;
          const res = await request(u.startsWith('http') ? u : base + u);
          if (res.status !== 200) throw new Error(`cached thumbnail: HTTP ${res.status}`);
          samples.push(res.ms);
        }
        const sum = summarize(samples);
        p50 = sum.p50;
        result.raw.cached_ms = samples;
        result.details.push({ title: 'cached thumbnail requests (ms)', columns: ['n', 'p50', 'p99', 'min', 'max'], rows: [[sum.n, sum.p50.toFixed(2), sum.p99.toFixed(2), sum.min.toFixed(2), sum.max.toFixed(2)]] });
      } catch (err) {
        result.errors.push({ benchmark: 'thumbs', subject: 'atrium', message: errorText(err) });
      } finally {
        await atrium.stop();
      }
      const ratio = atriumRate !== null && vipsRate !== null ? atriumRate / vipsRate : null;
      result.summary.push(
        { benchmark: `background thumbnails, ${n} × 12 MP JPEG`, atrium: atriumRate, peerName: 'vipsthumbnail', peer: vipsRate, unit: 'files/s', ratio, target: '≥ 0.70× vipsthumbnail', met: ratio === null ? null : ratio >= 0.7 },
        { benchmark: 'cached thumbnail request p50', atrium: p50, unit: 'ms', target: '< 5 ms', met: p50 === null ? null : p50 < 5 },
      );
      result.environment.loadavg_at_end = `${loadavg().map((x) => x.toFixed(2)).join(' ')} (other work on the machine skews the figures)`;
    } finally {
      removeTempDir(tmp);
    }
  },
};
