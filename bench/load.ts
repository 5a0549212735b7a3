// Area `load`: throughput under concurrency, one Atrium process against two (issue: "`wrk` at 64
// connections for 30 s on /api/fs/list (cached) and /api/fs/get against one and against two
// processes, error rate and p99 reported"; target: zero errors, two processes ≥ 1.6× one).
//
// Both runs go through the same front: nginx (1 worker) proxying to an upstream of one or of two
// Atrium processes on loopback, with keep-alive connections to them. Both Atrium processes run in
// cluster mode (PostgreSQL + Redis, unique table and key prefixes), also for the one-process run,
// so the only difference is the number of processes. An answer counts as an error unless it is
// HTTP 200 with envelope code 200 (checked on every response by the wrk script).
//
// On a 2-core machine the two Atrium processes, nginx and wrk share the same 2 cores: the
// 2-vs-1 ratio is bounded by that, not by Atrium.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { openDatabase } from '../src/db/index.js';
import { dropAll } from '../src/db/migrations.js';
import type { Config } from '../src/config/defaults.js';
import { apiCall } from './lib/http.js';
import { groupCpuSeconds, makeTempDir, removeTempDir, runCommand } from './lib/proc.js';
import { startAtrium, startNginxConfig, versionOf, which, type Atrium, type Server } from './lib/servers.js';
import { machine, shortError } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule, SummaryRow } from './lib/types.js';

const CONNECTIONS = 64;
const FILES = 100;
/** Entries of the folder listed against nginx's autoindex (issue 25). */
const AUTOINDEX_FILES = 1000;

const PG = { host: process.env.ATRIUM_TEST_PG_HOST ?? '127.0.0.1', port: Number(process.env.ATRIUM_TEST_PG_PORT ?? 5432), user: process.env.ATRIUM_TEST_PG_USER ?? 'postgres', name: process.env.ATRIUM_TEST_PG_DB ?? 'test' };
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface WrkResult {
  requests: number;
  duration_us: number;
  bad: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50_us: number;
  p99_us: number;
  max_us: number;
}

/**
 * wrk script: a POST of WRK_BODY (JSON) when it is set, else a GET; every answer that is not
 * HTTP 200 with a body starting with WRK_PREFIX (an envelope of code 200, a JSON array) is an error.
 */
const WRK_SCRIPT = `
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  bad = 0
  prefix = os.getenv("WRK_PREFIX")
  wrk.headers["Authorization"] = os.getenv("WRK_TOKEN")
  if os.getenv("WRK_BODY") ~= "" then
    wrk.method = "POST"
    wrk.body = os.getenv("WRK_BODY")
    wrk.headers["Content-Type"] = "application/json"
  end
end
function response(status, headers, body)
  if status ~= 200 or string.sub(body, 1, string.len(prefix)) ~= prefix then bad = bad + 1 end
end
function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"bad":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, b, e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99), latency.max))
end
`;

const rps = (r: WrkResult) => r.requests / (r.duration_us / 1e6);
/** Failed answers (wrong envelope or status) plus socket errors, over everything attempted. */
const errorCount = (r: WrkResult) => r.bad + r.connect + r.read + r.write + r.timeout;

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1500, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** nginx with one worker, proxying to the given loopback ports with keep-alive upstream connections. */
function startBalancer(workDir: string, ports: number[], signal: AbortSignal): Promise<Server> {
  return startNginxConfig(
    'nginx-balancer',
    workDir,
    (port) => `  upstream atrium {
${ports.map((p) => `    server 127.0.0.1:${p};`).join('\n')}
    keepalive 128;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://atrium;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering on;
    }
  }`,
    { workers: 1, connections: 4096, accessLog: false, ready: { path: '/ping', expect: 'pong' }, signal },
  );
}

/** nginx with one worker serving `root` with `autoindex_format json` (the listing peer). */
function startAutoindex(root: string, workDir: string, signal: AbortSignal): Promise<Server> {
  return startNginxConfig(
    'nginx-autoindex',
    workDir,
    (port) => `  server {
    listen 127.0.0.1:${port};
    root ${root};
    location / { autoindex on; autoindex_format json; }
    location = /ping { return 200 pong; }
  }`,
    { workers: 1, connections: 4096, accessLog: false, ready: { path: '/ping', expect: 'pong' }, signal },
  );
}

/** Value of an unlabelled sample in a Prometheus exposition. */
function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : Number.NaN;
}

async function scrape(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}

/** Redis's count of commands processed (every client of that Redis: an upper bound for ours). */
async function redisCommands(redis: Redis): Promise<number> {
  const m = /total_commands_processed:(\d+)/.exec(await redis.info('stats'));
  return m ? Number(m[1]) : Number.NaN;
}

async function runWrk(url: string, body: unknown, token: string, seconds: number, scriptFile: string, signal: AbortSignal, prefix = '{"code":200'): Promise<WrkResult> {
  if (signal.aborted) throw signal.reason;
  const r = await runCommand('wrk', 'wrk', ['-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', scriptFile, url], {
    env: { ...process.env, WRK_BODY: body === undefined ? '' : JSON.stringify(body), WRK_TOKEN: token, WRK_PREFIX: prefix },
    timeoutMs: (seconds + 30) * 1000,
  });
  const line = r.output.split('\n').find((l) => l.startsWith('RESULT '));
  if (r.code !== 0 || !line) throw new Error(`wrk failed (${r.code}): ${r.output.slice(-2000)}`);
  return JSON.parse(line.slice('RESULT '.length)) as WrkResult;
}

export const loadBench: BenchModule = {
  area: 'load',
  title: 'Load: wrk against one and two Atrium processes behind nginx',
  budgetMs: (quick) => (quick ? 4 : 10) * 60_000,
  async run(ctx: BenchContext, result: AreaResult): Promise<void> {
    if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
    const seconds = Number(process.env.BENCH_LOAD_SECONDS ?? (ctx.quick ? 5 : 30));
    const [wrkPath, nginxPath] = await Promise.all([which('wrk'), which('nginx')]);
    if (!wrkPath || !nginxPath) throw new Error('wrk and nginx are needed: run bench/setup.sh');
    const redisUrl = new URL(REDIS_URL);
    if (!(await answers(PG.host, PG.port))) throw new Error(`PostgreSQL does not answer at ${PG.host}:${PG.port}`);
    if (!(await answers(redisUrl.hostname, Number(redisUrl.port || 6379)))) throw new Error(`Redis does not answer at ${REDIS_URL}`);

    result.environment = {
      ...machine(),
      load_average_at_start: os.loadavg().map((l) => l.toFixed(2)).join(' '),
      wrk: await versionOf('wrk', ['--version']),
      nginx: await versionOf('nginx', ['-v']),
      postgresql: await versionOf('psql', ['--version']),
      redis: await versionOf('redis-server', ['--version']),
      balancer: 'nginx, 1 worker, upstream keep-alive; the same front for the 1- and the 2-process runs',
      note: `wrk (2 threads), nginx and the Atrium processes share the machine's ${os.cpus().length} cores`,
    };
    result.parameters = { connections: CONNECTIONS, seconds, wrk_threads: 2, listing_entries: FILES, database: 'postgres', cache: 'redis pub/sub + BullMQ (cluster mode)' };

    const tmp = makeTempDir('atrium-bench-load-');
    const tablePrefix = `bl${randomBytes(4).toString('hex')}_`;
    const keyPrefix = `atrium-bench:${randomBytes(4).toString('hex')}:`;
    const password = randomBytes(12).toString('base64url');
    const jwt = randomBytes(16).toString('hex');
    const database: Config['database'] = { type: 'postgres', host: PG.host, port: PG.port, user: PG.user, password: '', name: PG.name, db_file: 'data.db', table_prefix: tablePrefix, ssl_mode: '', dsn: '' };
    const servers: Atrium[] = [];
    let balancer: Server | undefined;
    let autoindex: Server | undefined;
    let redisClient: Redis | undefined;
    try {
      const dirs = ['a', 'b'].map((n) => path.join(tmp, n));
      for (const dir of dirs) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ jwt_secret: jwt, database, redis: { url: REDIS_URL, key_prefix: keyPrefix }, log: { enable: false } }));
      }
      const folder = path.join(dirs[0]!, 'files/bench');
      mkdirSync(folder, { recursive: true });
      for (let i = 0; i < FILES; i++) writeFileSync(path.join(folder, `file-${String(i).padStart(4, '0')}.txt`), randomBytes(1024));
      const folder1k = path.join(dirs[0]!, 'files/bench1k');
      mkdirSync(folder1k, { recursive: true });
      for (let i = 0; i < AUTOINDEX_FILES; i++) writeFileSync(path.join(folder1k, `file-${String(i).padStart(4, '0')}.txt`), randomBytes(64));
      const scriptFile = path.join(tmp, 'wrk.lua');
      writeFileSync(scriptFile, WRK_SCRIPT);
      const redis = new Redis(REDIS_URL);
      redisClient = redis;

      ctx.log('starting two Atrium processes (PostgreSQL + Redis)');
      servers.push(await startAtrium(ctx.repoRoot, dirs[0]!, { password, signal: ctx.signal }));
      servers.push(await startAtrium(ctx.repoRoot, dirs[1]!, { password, signal: ctx.signal }));
      const token = servers[0]!.token;
      const metricsToken = randomBytes(12).toString('hex');
      await apiCall(servers[0]!.base, '/api/admin/setting/save', { body: [{ key: 'metrics_token', value: metricsToken }], token });
      for (const s of servers) {
        // the other process learns the setting over the cluster bus
        for (let tries = 0; ; tries++) {
          const ok = await scrape(s.base, metricsToken).then(() => true, () => false);
          if (ok) break;
          if (tries > 100) throw new Error(`/metrics of ${s.base} does not take the metrics_token`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }

      // Cached listing of 1 000 entries straight from one process vs nginx's autoindex JSON.
      const peerRows: Array<Array<string | number | null>> = [];
      const listing1k: Record<string, WrkResult> = {};
      {
        for (let i = 0; i < 20; i++) await apiCall(servers[0]!.base, '/api/fs/list', { body: { path: '/bench1k' }, token });
        autoindex = await startAutoindex(path.join(dirs[0]!, 'files'), path.join(tmp, 'nginx-autoindex'), ctx.signal);
        const sizes = {
          atrium: (await apiCall(servers[0]!.base, '/api/fs/list', { body: { path: '/bench1k' }, token })).bytes,
          nginx: Buffer.byteLength(await (await fetch(`${autoindex.base}/bench1k/`)).text()),
        };
        for (const [name, url, body, prefix] of [
          ['atrium', `${servers[0]!.base}/api/fs/list`, { path: '/bench1k' }, '{"code":200'],
          ['nginx', `${autoindex.base}/bench1k/`, undefined, '['],
        ] as const) {
          ctx.log(`wrk ${name} listing of ${AUTOINDEX_FILES} entries, ${CONNECTIONS} connections, ${seconds} s`);
          try {
            const r = await runWrk(url, body, token, seconds, scriptFile, ctx.signal, prefix);
            listing1k[name] = r;
            peerRows.push([name === 'atrium' ? 'Atrium POST /api/fs/list (cached), 1 process' : 'nginx autoindex_format json, 1 worker', sizes[name], Math.round(rps(r)), errorCount(r), r.p50_us / 1000, r.p99_us / 1000]);
          } catch (err) {
            result.errors.push({ benchmark: `listing of ${AUTOINDEX_FILES} entries`, subject: name, message: (err as Error).message });
          }
        }
        await autoindex.stop();
        autoindex = undefined;
        result.details.push({ title: `Cached listing of ${AUTOINDEX_FILES} entries, wrk ${CONNECTIONS} connections, ${seconds} s, no proxy`, columns: ['server', 'answer bytes', 'req/s', 'errors', 'p50 ms', 'p99 ms'], rows: peerRows });
      }
      const costs = new Map<string, { cpuPer1000: number; dbPerRequest: number; redisPerRequest: number; redisIdlePerSecond: number }>();

      const targets = [
        { name: '/api/fs/list (cached)', body: { path: '/bench' } },
        { name: '/api/fs/get', body: { path: '/bench/file-0042.txt' } },
      ];
      const measured = new Map<string, WrkResult>();
      const rows: Array<Array<string | number | null>> = [];
      for (const processes of [1, 2]) {
        balancer = await startBalancer(path.join(tmp, `nginx-${processes}`), servers.slice(0, processes).map((s) => s.port), ctx.signal);
        for (const target of targets) {
          // Warm-up: fills each process's listing cache and the upstream connections.
          // apiCall throws unless the envelope's code is 200.
          for (let i = 0; i < 20; i++) await apiCall(balancer.base, `/api/fs/${target.name.includes('list') ? 'list' : 'get'}`, { body: target.body, token });
          ctx.log(`wrk ${target.name}, ${processes} process(es), ${CONNECTIONS} connections, ${seconds} s`);
          const url = `${balancer.base}/api/fs/${target.name.includes('list') ? 'list' : 'get'}`;
          try {
            const used = servers.slice(0, processes);
            const cpu0 = await Promise.all(used.map((s) => groupCpuSeconds(s.proc.pid)));
            const db0 = await Promise.all(used.map(async (s) => metricValue(await scrape(s.base, metricsToken), 'atrium_db_queries_total')));
            // Redis also serves BullMQ's idle polling (and any other client of that Redis): the
            // rate of an idle window just before is taken off the run's count.
            const idleS = Math.min(seconds, 10);
            const idle0 = await redisCommands(redis);
            await new Promise((r) => setTimeout(r, idleS * 1000));
            const idleRate = ((await redisCommands(redis)) - idle0) / idleS;
            const redis0 = await redisCommands(redis);
            const r = await runWrk(url, target.body, token, seconds, scriptFile, ctx.signal);
            const redis1 = await redisCommands(redis);
            const cpu1 = await Promise.all(used.map((s) => groupCpuSeconds(s.proc.pid)));
            const db1 = await Promise.all(used.map(async (s) => metricValue(await scrape(s.base, metricsToken), 'atrium_db_queries_total')));
            const sum = (a: number[], b: number[]) => a.reduce((acc, v, i) => acc + v - b[i]!, 0);
            costs.set(`${target.name}|${processes}`, {
              cpuPer1000: sum(cpu1, cpu0) / (r.requests / 1000),
              // each scrape is a request too, and the second scrape's own count is in db1
              dbPerRequest: sum(db1, db0) / r.requests,
              redisPerRequest: Math.max(0, redis1 - redis0 - idleRate * (r.duration_us / 1e6)) / r.requests,
              redisIdlePerSecond: idleRate,
            });
            measured.set(`${target.name}|${processes}`, r);
            const total = r.requests + r.connect + r.read + r.write + r.timeout;
            rows.push([target.name, processes, Math.round(rps(r)), r.requests, errorCount(r), total ? (errorCount(r) / total) * 100 : 0, r.p50_us / 1000, r.p99_us / 1000, r.max_us / 1000]);
          } catch (err) {
            result.errors.push({ benchmark: `${target.name} × ${processes}`, subject: 'atrium', message: (err as Error).message });
            rows.push([target.name, processes, null, null, null, null, null, null, null]);
          }
        }
        await balancer.stop();
        balancer = undefined;
      }
      result.details.push({ title: `wrk, ${CONNECTIONS} connections, ${seconds} s, through nginx`, columns: ['endpoint', 'processes', 'req/s', 'requests', 'errors', 'error %', 'p50 ms', 'p99 ms', 'max ms'], rows });
      result.raw = { ...Object.fromEntries(measured), listing1k, costs: Object.fromEntries(costs) };

      const summary: SummaryRow[] = [];
      {
        const a = listing1k.atrium;
        const n = listing1k.nginx;
        const ratio = a && n ? rps(a) / rps(n) : null;
        summary.push({
          benchmark: `cached /api/fs/list of ${AUTOINDEX_FILES} entries, ${CONNECTIONS} connections (req/s)`,
          atrium: a ? rps(a) : null,
          peerName: 'nginx autoindex JSON',
          peer: n ? rps(n) : null,
          unit: 'req/s',
          ratio,
          target: '≥ 1.00×',
          met: ratio === null ? null : ratio >= 1,
          error: ratio === null ? 'a run failed (see Errors)' : undefined,
        });
      }
      for (const target of targets) {
        const one = measured.get(`${target.name}|1`);
        const two = measured.get(`${target.name}|2`);
        const ratio = one && two ? rps(two) / rps(one) : null;
        summary.push({
          benchmark: `${target.name}: 2 processes vs 1 (req/s; 2 cores shared with nginx and wrk: not a scale-out measure)`,
          atrium: two ? rps(two) : null,
          peerName: '1 process',
          peer: one ? rps(one) : null,
          unit: 'req/s',
          ratio,
          target: '',
          error: ratio === null ? 'a run failed (see Errors)' : undefined,
        });
        for (const [n, r] of [[1, one], [2, two]] as const) {
          if (!r) continue;
          const c = costs.get(`${target.name}|${n}`);
          summary.push({ benchmark: `${target.name}: errors, ${n} process(es)`, atrium: errorCount(r), unit: 'errors', target: '0', met: errorCount(r) === 0 });
          summary.push({ benchmark: `${target.name}: p99, ${n} process(es)`, atrium: r.p99_us / 1000, unit: 'ms', target: '' });
          if (!c) continue;
          summary.push({ benchmark: `${target.name}: Atrium CPU seconds per 1 000 requests, ${n} process(es)`, atrium: c.cpuPer1000, unit: 'CPU s', target: '' });
          summary.push({ benchmark: `${target.name}: database queries per request, ${n} process(es)`, atrium: c.dbPerRequest, unit: 'queries', target: '~0 (< 0.01)', met: c.dbPerRequest < 0.01 });
          summary.push({ benchmark: `${target.name}: Redis commands per request, ${n} process(es) (beyond the idle rate of ${c.redisIdlePerSecond.toFixed(1)}/s: BullMQ polling)`, atrium: c.redisPerRequest, unit: 'commands', target: '~0 (< 0.01)', met: c.redisPerRequest < 0.01 });
        }
      }
      result.summary = summary;
    } catch (err) {
      result.errors.push({ benchmark: 'load', subject: 'setup', message: shortError((err as Error).message, 3000) });
      throw err;
    } finally {
      await balancer?.stop();
      await autoindex?.stop();
      await redisClient?.quit().catch(() => undefined);
      for (const s of servers) await s.stop();
      const handle = openDatabase(database);
      await dropAll(handle).catch(() => {});
      await handle.close();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${keyPrefix}*`).catch(() => [] as string[]);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
      removeTempDir(tmp);
    }
  },
};
