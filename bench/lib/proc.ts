// Child processes and temp folders of a benchmark run, and their cleanup: on normal end, on a
// thrown error, on Ctrl-C / SIGTERM / SIGHUP and (synchronously) on process exit.
//
// Children are spawned in their own process group (detached) so that a whole tree (nginx
// master + workers, npm + node) is signalled at once, and so that a Ctrl-C in the terminal
// reaches only the harness, which then stops everything in order.

import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Last ~16 KiB of stdout+stderr, for error messages. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** True once the process has exited. */
  done(): boolean;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const procs = new Set<Proc>();
const tempDirs = new Set<string>();
let installed = false;
let interrupted = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** Spawns `cmd args` in its own process group and registers it for cleanup. */
export function startProcess(name: string, cmd: string, args: string[], opts: SpawnOptions = {}): Proc {
  installCleanup();
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...opts });
  let buf = '';
  const keep = (d: Buffer) => {
    buf += d.toString('utf8');
    if (buf.length > 16384) buf = buf.slice(-16384);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let finished = false;
  // 'exit' marks the process gone (for done()); the promise resolves on 'close', once its
  // stdout/stderr are drained too, so output() is complete by then.
  const exited = new Promise<number | string>((resolve) => {
    let status: number | string = -1;
    child.once('exit', (code, signal) => {
      finished = true;
      status = code ?? signal ?? -1;
    });
    child.once('close', (code, signal) => {
      finished = true;
      resolve(status !== -1 ? status : (code ?? signal ?? -1));
    });
    child.once('error', (err) => {
      finished = true;
      buf += `\n[spawn error] ${err.message}`;
      resolve(-1);
    });
  });
  const proc: Proc = {
    name,
    child,
    pid: child.pid ?? -1,
    output: () => buf,
    exited,
    done: () => finished,
    async stop(graceMs = 5000) {
      if (!finished && child.pid !== undefined) {
        killGroup(child.pid, 'SIGTERM');
        const timer = setTimeout(() => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
        // Leftovers of the group (e.g. nginx workers) — the group is ours alone.
        killGroup(child.pid, 'SIGKILL');
      }
      procs.delete(proc);
    },
  };
  // Stays registered after it exits, until stop(): a group can outlive its leader.
  procs.add(proc);
  return proc;
}

/** A fresh temp folder (mode 0755 so nginx workers may read it), removed on cleanup. */
export function makeTempDir(prefix = 'atrium-bench-'): string {
  installCleanup();
  const base = process.env.BENCH_TMPDIR || os.tmpdir();
  const dir = mkdtempSync(path.join(base, prefix));
  chmodSync(dir, 0o755);
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } finally {
    tempDirs.delete(dir);
  }
}

/** Stops every registered process (gracefully, then SIGKILL) and removes every temp folder. */
export async function cleanupAll(): Promise<void> {
  await Promise.all([...procs].map((p) => p.stop(3000).catch(() => undefined)));
  for (const d of [...tempDirs]) {
    try {
      removeTempDir(d);
    } catch (err) {
      console.error(`[bench] could not remove ${d}: ${(err as Error).message}`);
    }
  }
}

/** Synchronous last resort for process 'exit': SIGKILL every group, remove temp folders. */
function cleanupSync(): void {
  for (const p of procs) if (p.pid > 0) killGroup(p.pid, 'SIGKILL');
  procs.clear();
  for (const d of tempDirs) {
    try {
      rmSync(d, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
  tempDirs.clear();
}

/** Aborted on the first Ctrl-C / SIGTERM; benchmarks check it between steps. */
export const interruption = new AbortController();

export function wasInterrupted(): boolean {
  return interrupted;
}

export function installCleanup(): void {
  if (installed) return;
  installed = true;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) {
      // Second Ctrl-C: stop now.
      console.error(`\n[bench] ${sig} again: killing everything`);
      cleanupSync();
      process.exit(130);
    }
    interrupted = true;
    console.error(`\n[bench] ${sig}: stopping servers and removing temp folders…`);
    interruption.abort(new Error(`interrupted by ${sig}`));
    const hard = setTimeout(() => {
      cleanupSync();
      process.exit(130);
    }, 10_000);
    hard.unref();
    void cleanupAll().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('exit', cleanupSync);
}

/** Runs a command to completion (registered for cleanup meanwhile); resolves with its output. */
export async function runCommand(
  name: string,
  cmd: string,
  args: string[],
  opts: SpawnOptions & { timeoutMs?: number } = {},
): Promise<{ code: number | string; output: string }> {
  const p = startProcess(name, cmd, args, opts);
  const { code, timedOut } = await finish(p, opts.timeoutMs);
  if (timedOut) return { code: 'timeout', output: p.output() };
  return { code, output: p.output() };
}

/** Waits for `p` to exit, stopping it after `timeoutMs` (`timedOut`) or when `signal` aborts; reaped either way. */
async function finish(p: Proc, timeoutMs = 300_000, signal?: AbortSignal): Promise<{ code: number | string; timedOut: boolean }> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void p.stop(2000);
  }, timeoutMs);
  const onAbort = () => void p.stop(1000);
  signal?.addEventListener('abort', onAbort, { once: true });
  const code = await p.exited;
  clearTimeout(timer);
  signal?.removeEventListener('abort', onAbort);
  await p.stop();
  return { code, timedOut };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process in bytes, or undefined if it is gone. */
export async function rssOf(pid: number): Promise<number | undefined> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; returns peak and samples. */
export function sampleRss(pid: number, intervalMs = 100): { stop(): Promise<{ peak: number; samples: number[] }> } {
  const samples: number[] = [];
  let running = true;
  let resolveLoop!: () => void;
  const loopDone = new Promise<void>((r) => (resolveLoop = r));
  void (async () => {
    while (running) {
      const v = await rssOf(pid);
      if (v !== undefined) samples.push(v);
      await sleep(intervalMs).catch(() => undefined);
    }
    resolveLoop();
  })();
  return {
    async stop() {
      running = false;
      await loopDone;
      const v = await rssOf(pid);
      if (v !== undefined) samples.push(v);
      return { peak: samples.length ? Math.max(...samples) : 0, samples };
    },
  };
}

/**
 * Runs `script` (bash, positional parameters `args`) and times it inside bash with
 * $EPOCHREALTIME: the seconds cover the script only, not bash's own start-up. Registered for
 * cleanup like every other process; stopped when `signal` aborts.
 */
export async function timedBash(
  name: string,
  script: string,
  args: string[],
  opts: { timeoutMs?: number; signal?: AbortSignal; cwd?: string } = {},
): Promise<{ code: number | string; seconds: number; output: string }> {
  const wrapped = `s=$EPOCHREALTIME; { ${script}
}; rc=$?; e=$EPOCHREALTIME; echo "@@timed $rc $s $e" >&2; exit $rc`;
  const p = startProcess(name, 'bash', ['-c', wrapped, name, ...args], { cwd: opts.cwd, env: { ...process.env, LC_ALL: 'C' } });
  const { code, timedOut } = await finish(p, opts.timeoutMs, opts.signal);
  if (opts.signal?.aborted) throw opts.signal.reason;
  const out = p.output();
  if (timedOut) return { code: 'timeout', seconds: NaN, output: out };
  const m = /@@timed (\d+) ([\d.]+) ([\d.]+)\s*$/.exec(out);
  const output = out.replace(/@@timed [^\n]*\n?$/, '');
  if (!m) return { code: code === 0 ? -1 : code, seconds: NaN, output };
  return { code: Number(m[1]), seconds: Number(m[3]) - Number(m[2]), output };
}

let clockTicks: number | undefined;

/**
 * CPU seconds (user + system) used so far by the live processes of process group `pgid` (a
 * process started by startProcess leads its own group: nginx master + workers, Atrium…),
 * from /proc/<pid>/stat. Exited members no longer count.
 */
export async function groupCpuSeconds(pgid: number): Promise<number> {
  const { readdir, readFile } = await import('node:fs/promises');
  if (clockTicks === undefined) {
    const r = await runCommand('getconf', 'getconf', ['CLK_TCK'], { timeoutMs: 5000 }).catch(() => undefined);
    const n = Number(r?.output.trim());
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  let ticks = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after "(comm) ": state ppid pgrp … utime (14th field) stime (15th).
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[2]) === pgid) ticks += Number(rest[11]) + Number(rest[12]);
    } catch {
      /* gone meanwhile */
    }
  }
  return ticks / clockTicks;
}
