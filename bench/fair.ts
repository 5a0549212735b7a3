// Area `fair` (issue 38, "Fairness"): one user's storm must not stall the others.
//
// One Atrium process (`bin/atrium.js server`, default configuration), a user `storm` and a user
// `calm`. The storm, in three phases: 500 concurrent listings of a 10 000-entry folder
// (`per_page: 0`), then 300 concurrent searches over an index of 300 000 names (SQLite), then
// listings of a 200 000-entry zip (`archive/meta` with `refresh`, the central directory read
// again each time). Throughout, a second client asks `/ping` and `calm` lists a small folder,
// one request after the other; their p99 are the fairness figures. The whole storm runs twice,
// with the per-user limits as shipped (`max_requests_per_user` = 8 × cores) and with them off
// (0), interleaved (on, off, on, off in full mode); the storm's own throughput with the limits
// against without them. Targets: /ping p99 < 100 ms, calm's listing p99 < 250 ms (limits on),
// storm throughput ≥ 0.9× of no limits.

import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { apiCall, request } from './lib/http.js';
import { makeTempDir, removeTempDir, sleep } from './lib/proc.js';
import { startAtrium, type Atrium } from './lib/servers.js';
import { nowMs, summarize } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const round = (v: number) => Number(v.toFixed(1));
const WORDS = ['report', 'photo', 'notes', 'budget', 'holiday', 'draft', 'scan', 'invoice', 'music', 'video'];

interface Sizes {
  listings: number;
  folder: number;
  searches: number;
  indexed: number;
  zipEntries: number;
  zipLists: number;
  rounds: number;
}

function sizes(quick: boolean): Sizes {
  return quick
    ? { listings: 100, folder: 10_000, searches: 60, indexed: 50_000, zipEntries: 20_000, zipLists: 2, rounds: 1 }
    : { listings: 500, folder: 10_000, searches: 300, indexed: 300_000, zipEntries: 200_000, zipLists: 3, rounds: 2 };
}

/** The files: a big and a small folder, a many-entry zip. */
function makeFixtures(files: string, s: Sizes): void {
  mkdirSync(path.join(files, 'big'), { recursive: true });
  mkdirSync(path.join(files, 'small'), { recursive: true });
  for (let i = 0; i < s.folder; i++) writeFileSync(path.join(files, 'big', `${WORDS[i % WORDS.length]}-${String(i).padStart(6, '0')}.txt`), '');
  for (let i = 0; i < 10; i++) writeFileSync(path.join(files, 'small', `f${i}.txt`), 'x');
  execFileSync('python3', ['-c', `
import zipfile, sys
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_STORED) as z:
    for i in range(int(sys.argv[2])):
        z.writestr('d%03d/file-%06d.txt' % (i // 1000, i), '')
`, path.join(files, 'many.zip'), String(s.zipEntries)]);
}

/** Index rows straight into the server's SQLite file (the FTS triggers keep the trigram index). */
function fillIndex(dataDir: string, n: number): void {
  const file = readdirSync(dataDir).find((f) => f.endsWith('.db'));
  if (!file) throw new Error(`no SQLite database in ${dataDir}`);
  const db = new SQLite(path.join(dataDir, file));
  db.pragma('busy_timeout = 30000');
  const table = (db.prepare("select name from sqlite_master where type = 'table' and name like '%search_nodes'").get() as { name: string }).name;
  const insert = db.prepare(`insert into ${table} (parent, name, is_dir, size, modified) values (?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`/tree/d${i % 997}`, `${WORDS[i % WORDS.length]}-${WORDS[(i * 7) % WORDS.length]}-${i}.txt`, 0, i, 1_700_000_000_000);
  })();
  db.close();
}

// The watchers run in a process of their own: in the harness they would share its event loop with
// the storm's 500 answers of 2.3 MB and time the harness, not the server.
const WATCHER = `
const http = require('node:http');
const [base, calm] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
let stop = false;
process.stdin.on('data', () => { stop = true; });
const one = (path, body) => new Promise((resolve) => {
  const t0 = performance.now();
  const payload = body ? Buffer.from(JSON.stringify(body)) : undefined;
  const headers = payload ? { 'content-type': 'application/json', 'content-length': payload.length, authorization: calm } : {};
  const req = http.request(base + path, { method: payload ? 'POST' : 'GET', agent, headers }, (res) => { res.resume(); res.on('end', () => resolve(performance.now() - t0)); });
  req.on('error', () => resolve(NaN));
  req.end(payload);
});
const loop = async (path, body) => { const out = []; while (!stop) { out.push(await one(path, body)); await new Promise((r) => setTimeout(r, 5)); } return out; };
Promise.all([loop('/ping'), loop('/api/fs/list', { path: '/small' })]).then(([ping, list]) => { process.stdout.write(JSON.stringify({ ping, list })); });
`;

/** `/ping` and another user's small listing, one after the other, from another process until `stop` is called. */
function watchers(base: string, calm: string): { stop: () => Promise<[number[], number[]]> } {
  const child = spawn(process.execPath, ['-e', WATCHER, base, calm], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const done = new Promise<[number[], number[]]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => {
      try {
        const r = JSON.parse(out) as { ping: number[]; list: number[] };
        resolve([r.ping.filter(Number.isFinite), r.list.filter(Number.isFinite)]);
      } catch (err) {
        reject(err);
      }
    });
  });
  return {
    stop: () => {
      child.stdin.end('stop');
      return done;
    },
  };
}

/** `n` requests at once from their own sockets; the wall time and how many answered code 200. */
async function storm(n: number, make: (i: number) => Promise<{ status: number; body: Buffer }>): Promise<{ ms: number; ok: number; refused: number }> {
  const t0 = nowMs();
  const results = await Promise.all(Array.from({ length: n }, (_, i) => make(i).catch(() => ({ status: 0, body: Buffer.alloc(0) }))));
  const ms = nowMs() - t0;
  let ok = 0;
  let refused = 0;
  for (const r of results) {
    if (r.status === 429) refused++;
    else if (r.status === 200 && r.body.subarray(0, 12).toString() === '{"code":200,') ok++;
  }
  return { ms, ok, refused };
}

interface PhaseResult {
  phase: string;
  limits: boolean;
  requests: number;
  ok: number;
  refused: number;
  ms: number;
  ping: number[];
  calm: number[];
}

async function runPhases(a: Atrium, tokens: { storm: string; calm: string }, s: Sizes, limits: boolean): Promise<PhaseResult[]> {
  await apiCall(a.base, '/api/admin/setting/save', { token: a.token, body: [{ key: 'max_requests_per_user', value: limits ? String(8 * os.availableParallelism()) : '0' }] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1000 });
  const auth = { authorization: tokens.storm };
  const phases: Array<[string, number, (i: number) => Promise<{ status: number; body: Buffer }>]> = [
    [`${s.listings} listings of ${s.folder}`, s.listings, () => request(`${a.base}/api/fs/list`, { agent, headers: auth, body: { path: '/big', per_page: 0 }, timeoutMs: 300_000 })],
    [`${s.searches} searches over ${s.indexed}`, s.searches, (i) => request(`${a.base}/api/fs/search`, { agent, headers: auth, body: { parent: '/', keywords: WORDS[i % WORDS.length], scope: 0, page: 1, per_page: 100 }, timeoutMs: 300_000 })],
    [`${s.zipLists} listings of a ${s.zipEntries}-entry zip`, s.zipLists, () => request(`${a.base}/api/fs/archive/list`, { agent, headers: auth, body: { path: '/many.zip', inner_path: '/', refresh: true, per_page: 0 }, timeoutMs: 300_000 })],
  ];
  const out: PhaseResult[] = [];
  for (const [phase, n, make] of phases) {
    const watching = watchers(a.base, tokens.calm);
    await sleep(300);
    const r = await storm(n, make);
    const [ping, calm] = await watching.stop();
    out.push({ phase, limits, requests: n, ...r, ping, calm });
  }
  agent.destroy();
  return out;
}

async function prepare(ctx: BenchContext, tmp: string, s: Sizes): Promise<{ atrium: Atrium; tokens: { storm: string; calm: string } }> {
  const data = path.join(tmp, 'data');
  ctx.log(`fair: fixtures (${s.folder} files, a ${s.zipEntries}-entry zip)`);
  makeFixtures(path.join(data, 'files'), s);
  const atrium = await startAtrium(ctx.repoRoot, data, { signal: ctx.signal });
  const t = { token: atrium.token };
  await apiCall(atrium.base, '/api/admin/setting/save', { ...t, body: [{ key: 'search_index', value: 'database' }] });
  ctx.log(`fair: ${s.indexed} names into the index`);
  fillIndex(data, s.indexed);
  for (const name of ['storm', 'calm']) await apiCall(atrium.base, '/api/admin/user/create', { ...t, body: { username: name, password: `${name}-pass-1`, base_path: '/', permission: 1 << 12 } });
  const login = async (name: string) => (await apiCall<{ token: string }>(atrium.base, '/api/auth/login', { body: { username: name, password: `${name}-pass-1` } })).data.token;
  const tokens = { storm: await login('storm'), calm: await login('calm') };
  // Warm: the listing cached, the zip read once, the search worker started.
  await apiCall(atrium.base, '/api/fs/list', { token: tokens.storm, body: { path: '/big', per_page: 0 } });
  await apiCall(atrium.base, '/api/fs/archive/list', { token: tokens.storm, body: { path: '/many.zip', inner_path: '/' }, timeoutMs: 300_000 });
  await apiCall(atrium.base, '/api/fs/search', { token: tokens.storm, body: { parent: '/', keywords: 'report', page: 1, per_page: 10 } });
  return { atrium, tokens };
}

function report(result: AreaResult, runs: PhaseResult[]): void {
  const on = runs.filter((r) => r.limits);
  const off = runs.filter((r) => !r.limits);
  const ping = summarize(on.flatMap((r) => r.ping));
  const calm = summarize(on.flatMap((r) => r.calm));
  const pingOff = summarize(off.flatMap((r) => r.ping));
  const calmOff = summarize(off.flatMap((r) => r.calm));
  const rate = (rs: PhaseResult[]) => rs.reduce((n, r) => n + r.ok, 0) / (rs.reduce((n, r) => n + r.ms, 0) / 1000);
  const ratio = rate(on) / rate(off);
  result.summary.push(
    { benchmark: `/ping p99 during the storm (limits off: ${round(pingOff.p99)} ms)`, atrium: round(ping.p99), unit: 'ms', target: '< 100 ms', met: ping.p99 < 100 },
    { benchmark: `another user's small listing p99 during the storm (limits off: ${round(calmOff.p99)} ms)`, atrium: round(calm.p99), unit: 'ms', target: '< 250 ms', met: calm.p99 < 250 },
    { benchmark: 'storm throughput with the per-user limits / without (answers per s)', atrium: round(rate(on)), peerName: 'no limits', peer: round(rate(off)), ratio: Number(ratio.toFixed(2)), unit: 'req/s', target: '≥ 0.9×', met: ratio >= 0.9 },
  );
  result.details.push({
    title: 'per phase (ms)',
    columns: ['phase', 'limits', 'requests', 'ok', '429', 'wall', 'req/s', '/ping p50', '/ping p99', '/ping max', 'calm p50', 'calm p99', 'calm max'],
    rows: runs.map((r) => {
      const p = summarize(r.ping);
      const c = summarize(r.calm);
      return [r.phase, r.limits ? 'on' : 'off', r.requests, r.ok, r.refused, round(r.ms), round(r.ok / (r.ms / 1000)), round(p.p50), round(p.p99), round(p.max), round(c.p50), round(c.p99), round(c.max)];
    }),
  });
  result.raw = { runs };
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const s = sizes(ctx.quick);
  result.parameters = { ...s, max_requests_per_user: 8 * os.availableParallelism() };
  result.environment = { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`, loadavg_at_start: os.loadavg().map((v) => v.toFixed(2)).join(' / ') };
  const tmp = makeTempDir('atrium-bench-fair-');
  let atrium: Atrium | undefined;
  try {
    const prepared = await prepare(ctx, tmp, s);
    atrium = prepared.atrium;
    const runs: PhaseResult[] = [];
    for (let i = 0; i < s.rounds && !ctx.signal.aborted; i++) {
      for (const limits of [true, false]) {
        ctx.log(`fair: round ${i + 1}/${s.rounds}, limits ${limits ? 'on' : 'off'}`);
        runs.push(...(await runPhases(atrium, prepared.tokens, s, limits)));
      }
    }
    report(result, runs);
  } finally {
    await atrium?.stop();
    removeTempDir(tmp);
  }
}

export const fairBench: BenchModule = {
  area: 'fair',
  title: "Fair under load: one user's storm of listings, searches and a huge archive; /ping and another user's listing meanwhile",
  budgetMs: (quick) => (quick ? 10 : 30) * 60_000,
  run,
};
