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
import { apiCall, waitHttp } from './lib/http.js';
import { freePort, makeTempDir, removeTempDir, runCommand, startProcess } from './lib/proc.js';
import { startAtrium, versionOf, which, type Atrium, type Server } from './lib/servers.js';
import { GiB } from './lib/stats.js';
import { shortError } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule, SummaryRow } from './lib/types.js';

const CONNECTIONS = 64;
const FILES = 100;
const TARGET_RATIO = 1.6;

const PG = { host: process.env.ATRIUM_TEST_PG_HOST ?? '127.0.0.1', port: Number(process.env.ATRIUM_TEST_PG_PORT ?? 5432), user: process.env.ATRIUM_TEST_PG_USER ?? 'postgres', name: process.env.ATRIUM_TEST_PG_DB ?? 'test' };
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** wrk script: a POST with a JSON body; every answer not HTTP 200 + envelope 200 is an error. */
const WRK_SCRIPT = `
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  bad = 0
  wrk.method = "POST"
  wrk.body = os.getenv("WRK_BODY")
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = os.getenv("WRK_TOKEN")
end
function response(status, headers, body)
  if status ~= 200 or string.sub(body, 1, 11) ~= '{"code":200' then bad = bad + 1 end
end
function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"bad":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, b, e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99), latency.max))
end
`;

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
async function startBalancer(workDir: string, ports: number[], signal: AbortSignal): Promise<Server> {
  const port = await freePort();
  mkdirSync(workDir, { recursive: true });
  const t = (f: string) => path.join(workDir, f);
  for (const d of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(t(d), { recursive: true });
  const conf = `# written by bench/load.ts
${process.getuid?.() === 0 ? 'user root root;' : ''}
daemon off;
worker_processes 1;
pid ${t('nginx.pid')};
error_log ${t('error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${t('client_body')};
  proxy_temp_path ${t('proxy')};
  fastcgi_temp_path ${t('fastcgi')};
  uwsgi_temp_path ${t('uwsgi')};
  scgi_temp_path ${t('scgi')};
  upstream atrium {
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
  }
}
`;
  writeFileSync(t('nginx.conf'), conf);
  const proc = startProcess('nginx-balancer', 'nginx', ['-e', t('error.log'), '-c', t('nginx.conf'), '-p', workDir]);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitHttp(`${base}/ping`, { proc, expect: 'pong', timeoutMs: 15_000, signal });
    return { name: 'nginx', base, port, proc, stop: () => proc.stop(5000) };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

async function runWrk(url: string, body: unknown, token: string, seconds: number, scriptFile: string, signal: AbortSignal): Promise<WrkResult> {
  if (signal.aborted) throw signal.reason;
  const r = await runCommand('wrk', 'wrk', ['-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', scriptFile, url], {
    env: { ...process.env, WRK_BODY: JSON.stringify(body), WRK_TOKEN: token },
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
      node: process.version,
      cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
      memory: `${(os.totalmem() / GiB).toFixed(1)} GiB`,
      kernel: `${os.type()} ${os.release()}`,
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
    try {
      const dirs = ['a', 'b'].map((n) => path.join(tmp, n));
      for (const dir of dirs) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ jwt_secret: jwt, database, redis: { url: REDIS_URL, key_prefix: keyPrefix }, log: { enable: false } }));
      }
      const folder = path.join(dirs[0]!, 'files/bench');
      mkdirSync(folder, { recursive: true });
      for (let i = 0; i < FILES; i++) writeFileSync(path.join(folder, `file-${String(i).padStart(4, '0')}.txt`), randomBytes(1024));
      const scriptFile = path.join(tmp, 'post.lua');
      writeFileSync(scriptFile, WRK_SCRIPT);

      ctx.log('starting two Atrium processes (PostgreSQL + Redis)');
      servers.push(await startAtrium(ctx.repoRoot, dirs[0]!, { password, signal: ctx.signal }));
      servers.push(await startAtrium(ctx.repoRoot, dirs[1]!, { password, signal: ctx.signal }));
      const token = servers[0]!.token;

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
            const r = await runWrk(url, target.body, token, seconds, scriptFile, ctx.signal);
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
      result.raw = Object.fromEntries(measured);

      const summary: SummaryRow[] = [];
      for (const target of targets) {
        const one = measured.get(`${target.name}|1`);
        const two = measured.get(`${target.name}|2`);
        const ratio = one && two ? rps(two) / rps(one) : null;
        summary.push({
          benchmark: `${target.name}: 2 processes vs 1 (req/s)`,
          atrium: two ? rps(two) : null,
          peerName: '1 process',
          peer: one ? rps(one) : null,
          unit: 'req/s',
          ratio,
          target: `≥ ${TARGET_RATIO.toFixed(2)}×`,
          met: ratio === null ? null : ratio >= TARGET_RATIO,
          error: ratio === null ? 'a run failed (see Errors)' : undefined,
        });
        for (const [n, r] of [[1, one], [2, two]] as const) {
          if (!r) continue;
          summary.push({ benchmark: `${target.name}: errors, ${n} process(es)`, atrium: errorCount(r), unit: 'errors', target: '0', met: errorCount(r) === 0 });
          summary.push({ benchmark: `${target.name}: p99, ${n} process(es)`, atrium: r.p99_us / 1000, unit: 'ms', target: '' });
        }
      }
      result.summary = summary;
    } catch (err) {
      result.errors.push({ benchmark: 'load', subject: 'setup', message: shortError((err as Error).message, 3000) });
      throw err;
    } finally {
      await balancer?.stop();
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
