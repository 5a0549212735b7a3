// Area `startup` (issue 25): time from `atrium server` to the first `/ping` answer, whether
// every enabled listener (SFTP, FTP) is listening when the "Atrium is listening" line is
// printed, and the idle RSS of a default server, each against a bare Node `http` server
// started the same way in the same run (node's own start-up and memory, the floor).
//
// Each start is a new process (`node bin/atrium.js server`, as `npm start` runs it): the first
// on an empty data folder (database, admin user and host key made), then restarts on it. `/ping`
// is polled every 5 ms on fresh connections. When the start-up line appears on stdout, the SFTP
// and FTP ports are connected to at once and must greet (SSH identification line, FTP 220).

import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { freePort, groupCpuSeconds, makeTempDir, type Proc, removeTempDir, rssOf, sleep, startProcess } from './lib/proc.js';
import { fmtNum, median } from './lib/stats.js';
import { atriumLogEnv } from './lib/servers.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const BARE_SERVER = "require('node:http').createServer((q, s) => s.end('pong')).listen(Number(process.argv[1]), '127.0.0.1')";

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/ping', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });
}

/** Milliseconds from `started` until `/ping` answers 200. */
async function untilPing(proc: Proc, port: number, started: bigint, signal: AbortSignal): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (await ping(port)) return Number(process.hrtime.bigint() - started) / 1e6;
    if (proc.done()) throw new Error(`${proc.name} exited before answering: ${proc.output().slice(-1500)}`);
    if (Date.now() > deadline || signal.aborted) throw new Error(`${proc.name} did not answer /ping within 60 s`);
    await sleep(5);
  }
}

/** The first line a server sends on a new connection (SSH identification, FTP greeting). */
function greeting(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    const timer = setTimeout(() => (s.destroy(), reject(new Error(`no greeting on port ${port} within 5 s`))), 5000);
    s.on('data', (d) => {
      buf += d.toString('latin1');
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      s.destroy();
      resolve(buf.slice(0, nl).trim());
    });
    s.on('error', (err) => (clearTimeout(timer), reject(err)));
  });
}

function atriumProc(repoRoot: string, data: string, port: number): Proc {
  return startProcess('atrium', process.execPath, [path.join(repoRoot, 'bin/atrium.js'), 'server', '--data', data, '--port', String(port)], {
    cwd: repoRoot,
    env: { ...process.env, ATRIUM_ADMIN_PASSWORD: 'bench-startup-1', ATRIUM_ADDR: '127.0.0.1', ...atriumLogEnv(), NODE_ENV: 'production' },
  });
}

/** Resolves once `text` appears on the process's stdout. */
async function lineSeen(proc: Proc, text: string): Promise<void> {
  let seen = '';
  while (!seen.includes(text)) {
    const [chunk] = (await once(proc.child.stdout!, 'data')) as [Buffer];
    seen = (seen + chunk.toString('utf8')).slice(-4096);
  }
}

export const startupBench: BenchModule = {
  area: 'startup',
  title: 'Start-up time, listeners before the start-up line, idle memory',
  budgetMs: (quick) => (quick ? 3 : 6) * 60_000,
  async run(ctx: BenchContext, result: AreaResult) {
    if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
    const reps = Number(process.env.BENCH_REPS ?? '') || (ctx.quick ? 3 : 5);
    const idleWaitS = ctx.quick ? 10 : 30;
    const work = makeTempDir('atrium-bench-startup-');
    try {
      result.parameters = { restarts: reps, idle_rss_after_s: [2, idleWaitS], ping_poll_ms: 5 };
      result.environment = { node: process.version, loadavg_at_start: loadavg().map((v) => v.toFixed(2)).join(' ') };
      const rows: Array<Array<string | number | null>> = [];

      // Start-up with SFTP and FTP enabled: first start on an empty folder, then restarts.
      const data = path.join(work, 'data');
      mkdirSync(data, { recursive: true });
      const [sftpPort, ftpPort] = [await freePort(), await freePort()];
      writeFileSync(path.join(data, 'config.json'), JSON.stringify({ sftp: { enable: true, listen: `127.0.0.1:${sftpPort}` }, ftp: { enable: true, listen: `127.0.0.1:${ftpPort}` } }));
      const atriumMs: number[] = [];
      const atriumCpu: number[] = [];
      let firstMs = 0;
      let listenersReady = true;
      for (let i = 0; i <= reps; i++) {
        const port = await freePort();
        const started = process.hrtime.bigint();
        const proc = atriumProc(ctx.repoRoot, data, port);
        try {
          await lineSeen(proc, 'Atrium is listening on');
          const [ssh, ftp] = await Promise.all([greeting(sftpPort), greeting(ftpPort)]).catch((err: Error) => [`ERROR ${err.message}`, `ERROR ${err.message}`]);
          const ready = ssh.startsWith('SSH-2.0-') && ftp.startsWith('220');
          listenersReady &&= ready;
          const ms = await untilPing(proc, port, started, ctx.signal);
          const cpu = (await groupCpuSeconds(proc.pid)) * 1000;
          if (i === 0) firstMs = ms;
          else (atriumMs.push(ms), atriumCpu.push(cpu));
          rows.push(['atrium (SFTP + FTP on)', i === 0 ? 'first start, empty data folder' : `restart ${i}`, fmtNum(ms, 0), fmtNum(cpu, 0), `${ssh.slice(0, 20)} / ${ftp.slice(0, 24)}`]);
          ctx.log(`atrium start ${i}: /ping after ${fmtNum(ms, 0)} ms; at the start-up line SFTP says "${ssh}", FTP "${ftp.slice(0, 40)}"`);
        } finally {
          await proc.stop();
        }
      }
      const bareMs: number[] = [];
      const bareCpu: number[] = [];
      for (let i = 0; i < reps; i++) {
        const port = await freePort();
        const started = process.hrtime.bigint();
        const proc = startProcess('node-http', process.execPath, ['-e', BARE_SERVER, String(port)]);
        try {
          bareMs.push(await untilPing(proc, port, started, ctx.signal));
          bareCpu.push((await groupCpuSeconds(proc.pid)) * 1000);
          rows.push(['bare node http server', `start ${i + 1}`, fmtNum(bareMs.at(-1)!, 0), fmtNum(bareCpu.at(-1)!, 0), '']);
        } finally {
          await proc.stop();
        }
      }
      result.details.push({ title: 'Every start (ms from spawn to the first /ping answer)', columns: ['server', 'start', 'ms to /ping', 'CPU ms by then', 'greetings at the start-up line (SFTP / FTP)'], rows });

      // Idle RSS, default configuration (no SFTP/FTP), fresh data folder, and the bare server.
      const idle = async (name: string, spawn: (port: number) => Proc) => {
        const port = await freePort();
        const proc = spawn(port);
        try {
          await untilPing(proc, port, process.hrtime.bigint(), ctx.signal);
          await sleep(2000, ctx.signal);
          const early = (await rssOf(proc.pid)) ?? Number.NaN;
          await sleep((idleWaitS - 2) * 1000, ctx.signal);
          const late = (await rssOf(proc.pid)) ?? Number.NaN;
          ctx.log(`${name} idle RSS: ${fmtNum(early / 1e6)} MB after 2 s, ${fmtNum(late / 1e6)} MB after ${idleWaitS} s`);
          return { early, late };
        } finally {
          await proc.stop();
        }
      };
      const defaultData = path.join(work, 'default');
      const atriumIdle = await idle('atrium', (port) => atriumProc(ctx.repoRoot, defaultData, port));
      const bareIdle = await idle('bare node', (port) => startProcess('node-http', process.execPath, ['-e', BARE_SERVER, String(port)]));

      const a = median(atriumMs);
      const b = median(bareMs);
      result.summary.push(
        { benchmark: `start to /ping, restart (median of ${reps}; SFTP + FTP on)`, atrium: a, peerName: 'bare node http server', peer: b, unit: 'ms', ratio: a / b, target: '< 300 ms', met: a < 300 },
        { benchmark: `CPU time until /ping, restart (median of ${reps}; less skewed by the load than the wall time)`, atrium: median(atriumCpu), peerName: 'bare node http server', peer: median(bareCpu), unit: 'ms', ratio: median(atriumCpu) / median(bareCpu) },
        { benchmark: 'start to /ping, first start (empty data folder: database, admin, host key)', atrium: firstMs, peerName: 'bare node http server', peer: b, unit: 'ms', ratio: firstMs / b, target: '< 300 ms', met: firstMs < 300 },
        { benchmark: 'SFTP and FTP greet when the start-up line is printed (every start)', atrium: listenersReady ? 1 : 0, unit: 'yes=1', target: 'every start', met: listenersReady },
        { benchmark: 'idle RSS 2 s after start, default config', atrium: atriumIdle.early / 1e6, peerName: 'bare node http server', peer: bareIdle.early / 1e6, unit: 'MB', ratio: atriumIdle.early / bareIdle.early, target: '< 60 MB', met: atriumIdle.early < 60e6 },
        { benchmark: `idle RSS ${idleWaitS} s after start (after V8's idle-time GC), default config`, atrium: atriumIdle.late / 1e6, peerName: 'bare node http server', peer: bareIdle.late / 1e6, unit: 'MB', ratio: atriumIdle.late / bareIdle.late, target: '< 60 MB', met: atriumIdle.late < 60e6 },
      );
      result.raw = { atrium_restart_cpu_ms: atriumCpu, bare_cpu_ms: bareCpu, atrium_restart_ms: atriumMs, atrium_first_ms: firstMs, bare_ms: bareMs, atrium_idle_rss: atriumIdle, bare_idle_rss: bareIdle };
      result.environment.loadavg_at_end = `${loadavg().map((v) => v.toFixed(2)).join(' ')} (2 cores; start-up times scale with the load, compare the ratio)`;
    } finally {
      removeTempDir(work);
    }
  },
};
