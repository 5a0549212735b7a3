// Area `sync` (issue #42): a sync job's run against `rclone sync` of the same trees in the same
// run: 10 000 small files and one 1 GiB file (quick: 1 000 files and 64 MiB), Local → Local and
// Local → S3 (an s3rver process, the peer for both). Each pair is timed twice: the first run into
// an empty destination (target ≤ 1.2× rclone's time) and a run with nothing changed (target ≤ 1×).
//
// Atrium: POST /api/admin/sync/run, timed until the task is done (polled every 50 ms); the job has
// 4 transfers, as rclone's default `--transfers 4`. rclone: `rclone sync SRC DST` with its
// defaults (on S3 it reads each object's mtime with a HEAD, as it does without --checksum or
// --size-only; Atrium's no-change run uses the job's recorded state instead). Each destination
// is new for the first run; the copies are checked (file count and the big file's size).

import { mkdirSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { apiCall } from './lib/http.js';
import { createBigFile, createSmallFiles } from './lib/files.js';
import { freePort, makeTempDir, removeTempDir, runCommand, sleep, startProcess } from './lib/proc.js';
import { startAtrium, versionOf, type Atrium } from './lib/servers.js';
import { envInt } from './lib/params.js';
import { errorText } from './lib/report.js';
import { fmtNum, MiB } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const BUCKET = 'bench';

function waitPort(port: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  const once = () => new Promise<boolean>((resolve) => http.get(`http://127.0.0.1:${port}/`, (r) => (r.resume(), resolve(true))).on('error', () => resolve(false)));
  return (async () => {
    while (Date.now() < end) {
      if (await once()) return;
      await sleep(100);
    }
    throw new Error(`port ${port} did not open`);
  })();
}

/** rclone's environment: a remote S3 on s3rver and no config file (no CA bundle: plain HTTP). */
function rcloneEnv(s3Port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, RCLONE_CONFIG: '/dev/null' };
  delete env.AWS_CA_BUNDLE;
  const remote = { TYPE: 's3', PROVIDER: 'Other', ACCESS_KEY_ID: 'S3RVER', SECRET_ACCESS_KEY: 'S3RVER', ENDPOINT: `http://127.0.0.1:${s3Port}`, FORCE_PATH_STYLE: 'true', LIST_VERSION: '1', REGION: 'us-east-1' };
  for (const [k, v] of Object.entries(remote)) env[`RCLONE_CONFIG_S3_${k}`] = v;
  return env;
}

/** Seconds of one `rclone sync`. */
async function rcloneSync(src: string, dst: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  const t = process.hrtime.bigint();
  const r = await runCommand('rclone', 'rclone', ['sync', src, dst], { env, timeoutMs: 1_800_000, signal });
  if (r.code !== 0) throw new Error(`rclone sync ${src} ${dst}: exit ${r.code}: ${r.output.slice(-400)}`);
  return Number(process.hrtime.bigint() - t) / 1e9;
}

/** Seconds of one Atrium run of job `id`, from the run request until its task is done. */
async function atriumRun(a: Atrium, id: number, signal: AbortSignal): Promise<{ s: number; report: any }> {
  const t = process.hrtime.bigint();
  const { data } = await apiCall<{ task: { id: string } }>(a.base, `/api/admin/sync/run?id=${id}`, { token: a.token, body: {}, signal });
  for (;;) {
    const info = await apiCall<{ state: number; error: string }>(a.base, `/api/admin/task/sync/info?tid=${data.task.id}`, { token: a.token, body: {}, signal });
    if (info.data.state === 2) break;
    if ([4, 7].includes(info.data.state)) throw new Error(`the sync task ended in state ${info.data.state}: ${info.data.error}`);
    await sleep(50, signal);
  }
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  const job = await apiCall<{ reports: Array<{ report: any }> }>(a.base, `/api/admin/sync/get?id=${id}`, { token: a.token, signal });
  return { s, report: job.data.reports[0]!.report };
}

function countFiles(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? countFiles(path.join(dir, e.name)) : 1;
  return n;
}

export const syncBench: BenchModule = {
  area: 'sync',
  title: 'sync jobs vs rclone sync: 10 000 small files + 1 GiB, Local → Local and Local → S3 (s3rver)',
  budgetMs: (quick) => (quick ? 10 : 40) * 60_000,
  onlyWhenNamed: true,
  async run(ctx: BenchContext, result: AreaResult) {
    if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
    const files = envInt('BENCH_SYNC_FILES') ?? (ctx.quick ? 1_000 : 10_000);
    const big = (envInt('BENCH_FILE_MIB') ?? (ctx.quick ? 64 : 1024)) * MiB;
    const work = makeTempDir('atrium-bench-sync-');
    const seconds: Record<string, number> = {};
    try {
      const src = path.join(work, 'src');
      ctx.log(`creating ${files} small files and a ${fmtNum(big / MiB, 0)} MiB file`);
      await createSmallFiles(path.join(src, 'small'), files, ctx.signal);
      await createBigFile(path.join(src, 'big.bin'), big, ctx.signal);
      result.parameters = { small_files: files, big_file_bytes: big, atrium_transfers: 4, rclone: await versionOf('rclone', ['version']) };
      result.environment = { loadavg_at_start: loadavg().map((v) => v.toFixed(2)).join(' ') };

      const peerDir = path.join(work, 's3rver');
      mkdirSync(peerDir);
      const s3Port = await freePort();
      const script = `const S3rver=require('s3rver');new S3rver({port:${s3Port},address:'127.0.0.1',directory:${JSON.stringify(peerDir)},silent:true,configureBuckets:[{name:'${BUCKET}'}]}).run().catch(e=>{console.error(e);process.exit(1)});`;
      startProcess('s3rver', process.execPath, ['--openssl-legacy-provider', '-e', script], { cwd: ctx.repoRoot });
      await waitPort(s3Port, 30_000);

      const a = await startAtrium(ctx.repoRoot, path.join(work, 'atrium'), { signal: ctx.signal });
      const api = (route: string, body: unknown) => apiCall<any>(a.base, route, { token: a.token, body, signal: ctx.signal });
      const local = (mount: string, root: string) => api('/api/admin/storage/create', { mount_path: mount, driver: 'Local', addition: JSON.stringify({ root_folder_path: root }), trash: 'off' });
      mkdirSync(path.join(work, 'dst-atrium'));
      await local('/src', src);
      await local('/dst', path.join(work, 'dst-atrium'));
      const s3Addition = { bucket: BUCKET, endpoint: `http://127.0.0.1:${s3Port}`, access_key_id: 'S3RVER', secret_access_key: 'S3RVER', root_folder_path: '/atrium', region: 'us-east-1', force_path_style: true, list_object_version: 'v1' };
      await api('/api/admin/storage/create', { mount_path: '/s3', driver: 'S3', addition: JSON.stringify(s3Addition) });
      const env = rcloneEnv(s3Port);

      const only = (process.env.BENCH_SYNC_PAIRS ?? 'local,s3').split(',');
      const pairs = [
        { key: 'local', label: 'Local → Local', dst: '/dst/copy', rcloneDst: path.join(work, 'dst-rclone'), check: () => countFiles(path.join(work, 'dst-atrium', 'copy')) },
        { key: 's3', label: 'Local → S3', dst: '/s3/copy', rcloneDst: `S3:${BUCKET}/rclone/copy`, check: undefined },
      ].filter((p) => only.includes(p.key));
      for (const p of pairs) {
        const job = await api('/api/admin/sync/create', { name: `bench ${p.label.replace(/\W+/g, ' ')}`, src: '/src', dst: p.dst, mode: 'sync', options: { transfers: 4 } });
        for (const phase of ['first', 'no-change'] as const) {
          const key = `${p.label} ${phase}`;
          ctx.log(`${key}: atrium`);
          let atriumS: number | null = null;
          let rcloneS: number | null = null;
          let error: string | undefined;
          try {
            const r = await atriumRun(a, job.data.id, ctx.signal);
            atriumS = r.s;
            const moved = r.report.copied.files + r.report.updated.files;
            const expected = phase === 'first' ? files + 1 : 0;
            if (moved !== expected || r.report.failed.files > 0) throw new Error(`the run copied ${moved} files (expected ${expected}), ${r.report.failed.files} failed`);
            if (p.check && p.check() !== files + 1) throw new Error(`the destination holds ${p.check()} files, not ${files + 1}`);
          } catch (err) {
            error = `atrium: ${errorText(err, 2)}`;
            result.errors.push({ benchmark: key, subject: 'atrium', message: errorText(err) });
          }
          ctx.log(`${key}: rclone`);
          try {
            rcloneS = await rcloneSync(src, p.rcloneDst, env, ctx.signal);
            if (p.label === 'Local → Local' && statSync(path.join(p.rcloneDst, 'big.bin')).size !== big) throw new Error('rclone left a short big.bin');
          } catch (err) {
            error = `${error ? `${error}; ` : ''}rclone: ${errorText(err, 2)}`;
            result.errors.push({ benchmark: key, subject: 'rclone', message: errorText(err) });
          }
          if (atriumS !== null) seconds[`${key} atrium`] = atriumS;
          if (rcloneS !== null) seconds[`${key} rclone`] = rcloneS;
          const ratio = atriumS !== null && rcloneS !== null ? atriumS / rcloneS : null;
          const limit = phase === 'first' ? 1.2 : 1;
          result.summary.push({ benchmark: `sync ${p.label}, ${phase === 'first' ? 'first run' : 'no-change run'}`, atrium: atriumS, peerName: 'rclone sync', peer: rcloneS, unit: 's', ratio, target: `≤ ${limit.toFixed(2)}×`, met: ratio === null ? null : ratio <= limit, error });
        }
      }
      await a.stop();
      result.raw = { seconds };
      result.environment.loadavg_at_end = loadavg().map((v) => v.toFixed(2)).join(' ');
    } finally {
      removeTempDir(work);
    }
  },
};
