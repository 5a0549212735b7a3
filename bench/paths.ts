// Area `paths`: deep paths against the per-user view's bounds (src/view/paths.ts).
//
// A signed-in non-admin user (hide and password rules in force, so every ancestor is checked)
// lists the deepest folder of a 256-segment tree (the longest path the limit lets through),
// and asks for a 3 000-segment path (refused at once with a 400 envelope). Meanwhile a second
// client measures `/ping`: its latency while deep requests run, against its idle latency.
// Targets: the 256-segment list < 50 ms (p50), /ping p99 during deep requests < 100 ms.

import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiCall, request } from './lib/http.js';
import { makeTempDir, removeTempDir } from './lib/proc.js';
import { startAtrium, type Atrium } from './lib/servers.js';
import { nowMs, summarize } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const DEPTH = 256;
const REFUSED_DEPTH = 3000;
const round = (v: number) => Number(v.toFixed(2));

async function pingLoop(base: string, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (!until()) {
    const r = await request(`${base}/ping`);
    out.push(r.ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return out;
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const runs = Number(process.env.BENCH_REPS) || (ctx.quick ? 30 : 200);
  result.parameters = { depth: DEPTH, refused_depth: REFUSED_DEPTH, runs };
  result.environment = { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`, loadavg_at_start: os.loadavg().map((v) => v.toFixed(2)).join(' / ') };
  const tmp = makeTempDir('atrium-bench-paths-');
  let atrium: Atrium | undefined;
  try {
    const data = path.join(tmp, 'data');
    // 256 folders: the listed path /a/…/a has 256 segments, the most the limit lets through.
    const deepRel = Array.from({ length: DEPTH }, () => 'a').join('/');
    mkdirSync(path.join(data, 'files', deepRel), { recursive: true });
    atrium = await startAtrium(ctx.repoRoot, data, { signal: ctx.signal });
    const admin = { token: atrium.token };
    await apiCall(atrium.base, '/api/admin/meta/create', { ...admin, body: { path: '/', hide: '^secret', h_sub: true } });
    await apiCall(atrium.base, '/api/admin/meta/create', { ...admin, body: { path: `/${Array.from({ length: 128 }, () => 'a').join('/')}/b`, password: 'x', p_sub: true } });
    await apiCall(atrium.base, '/api/admin/user/create', { ...admin, body: { username: 'deep', password: 'deep-pass', base_path: '/', permission: 0 } });
    const token = (await apiCall<{ token: string }>(atrium.base, '/api/auth/login', { body: { username: 'deep', password: 'deep-pass' } })).data.token;
    const listPath = `/${deepRel}`;
    const refusedPath = `/${'a/'.repeat(REFUSED_DEPTH)}`;
    const list = async (p: string) => request(`${atrium!.base}/api/fs/list`, { headers: { authorization: token }, body: { path: p, password: '' } });

    const first = await list(listPath);
    const firstJson = JSON.parse(first.body.toString()) as { code: number; message: string };
    if (firstJson.code !== 200) throw new Error(`the ${DEPTH}-segment list answered ${firstJson.code} ${firstJson.message}`);
    const refusedJson = JSON.parse((await list(refusedPath)).body.toString()) as { code: number; message: string };
    if (refusedJson.code !== 400) throw new Error(`the ${REFUSED_DEPTH}-segment list answered ${refusedJson.code}, not 400`);

    ctx.log(`paths: idle /ping`);
    let stop = false;
    const idleStart = nowMs();
    const idle = await pingLoop(atrium.base, () => nowMs() - idleStart > (ctx.quick ? 1000 : 3000));

    ctx.log(`paths: ${runs} lists of ${DEPTH} segments and ${runs} of ${REFUSED_DEPTH}, /ping meanwhile`);
    const during = pingLoop(atrium.base, () => stop);
    const deep: number[] = [];
    const refused: number[] = [];
    for (let i = 0; i < runs && !ctx.signal.aborted; i++) {
      deep.push((await list(listPath)).ms);
      refused.push((await list(refusedPath)).ms);
    }
    stop = true;
    const pings = await during;

    const d = summarize(deep);
    const r = summarize(refused);
    const pi = summarize(idle);
    const pd = summarize(pings);
    result.summary.push(
      { benchmark: `POST /api/fs/list, ${DEPTH}-segment path (non-admin, hide + password rules), p50`, atrium: round(d.p50), unit: 'ms', target: '< 50 ms', met: d.p50 < 50 },
      { benchmark: `POST /api/fs/list, ${REFUSED_DEPTH}-segment path refused (400), p50`, atrium: round(r.p50), unit: 'ms' },
      { benchmark: `/ping p99 during deep requests (idle p99 ${round(pi.p99)} ms)`, atrium: round(pd.p99), unit: 'ms', target: '< 100 ms', met: pd.p99 < 100 },
    );
    result.details.push({
      title: 'latency, ms',
      columns: ['what', 'n', 'p50', 'p99', 'min', 'max'],
      rows: [
        [`list ${DEPTH} segments deep`, d.n, round(d.p50), round(d.p99), round(d.min), round(d.max)],
        [`list ${REFUSED_DEPTH} segments (refused)`, r.n, round(r.p50), round(r.p99), round(r.min), round(r.max)],
        ['/ping idle', pi.n, round(pi.p50), round(pi.p99), round(pi.min), round(pi.max)],
        ['/ping during', pd.n, round(pd.p50), round(pd.p99), round(pd.min), round(pd.max)],
      ],
    });
    result.raw = { deep, refused, idle, pings };
  } finally {
    await atrium?.stop();
    removeTempDir(tmp);
  }
}

export const pathsBench: BenchModule = {
  area: 'paths',
  title: 'Deep paths: bounded, linear rule checks, /ping unaffected',
  budgetMs: (quick) => (quick ? 2 : 5) * 60_000,
  run,
};
