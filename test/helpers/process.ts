import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const BIN = path.resolve('bin/atrium.js');
export const CLI_ENV = { ...process.env, ATRIUM_LOG_ENABLE: 'false' };

/** Runs `atrium <args>` (the built CLI) to completion. */
export const atrium = (...args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args], { env: CLI_ENV });

/*
 * Ports for peers that must be told one up front (an `atrium server --port`, nginx, aria2c…).
 * Asking the kernel for port 0 and closing it hands over a port the kernel may give to anyone
 * next (another worker's peer, any outgoing connection), so with parallel workers two peers could
 * get the same one. Instead each test process claims a block of its own below the kernel's
 * ephemeral range (32768–60999 on Linux, never handed out for port 0 or outgoing connections):
 * a lock file per block in the temp folder, created exclusively and holding the owner's pid (a
 * block whose owner died is taken over). Ports come from the block in turn, never twice in a
 * process, each checked to be unbound first (a peer left behind by a previous owner keeps its
 * port). Other vitest runs on the machine claim blocks the same way.
 */
const PORT_LOW = 20_000;
const PORT_BLOCK = 200;
const PORT_BLOCKS = 60; // 20000–31999
const LOCK_DIR = path.join(os.tmpdir(), 'atrium-test-ports');
let block: { first: number; next: number } | undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function claimBlock(): { first: number; next: number } {
  mkdirSync(LOCK_DIR, { recursive: true });
  const start = (process.pid + Number(process.env.VITEST_POOL_ID ?? 0)) % PORT_BLOCKS;
  for (let k = 0; k < 2 * PORT_BLOCKS; k++) {
    const i = (start + k) % PORT_BLOCKS;
    const lock = path.join(LOCK_DIR, `${i}.lock`);
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(readFileSync(lock, 'utf8') || 'NaN');
      // A lock being written (empty) or held by a live process is someone else's; a dead owner's is taken over.
      if (!Number.isInteger(owner) || alive(owner)) continue;
      rmSync(lock, { force: true });
      k--;
      continue;
    }
    process.once('exit', () => {
      try {
        if (readFileSync(lock, 'utf8') === String(process.pid)) rmSync(lock, { force: true });
      } catch {}
    });
    return { first: PORT_LOW + i * PORT_BLOCK, next: 0 };
  }
  throw new Error(`freePort: all ${PORT_BLOCKS} port blocks in ${LOCK_DIR} are held by live processes`);
}

function unbound(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A loopback port reserved for this test process (see above) that nobody listens on right now. */
export async function freePort(): Promise<number> {
  block ??= claimBlock();
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = block.first + (block.next++ % PORT_BLOCK);
    if (await unbound(port)) return port;
  }
  throw new Error(`freePort: every port of ${block.first}–${block.first + PORT_BLOCK - 1} is in use`);
}

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  out(): string;
  /** SIGTERM, resolving with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, as a crash or an OOM kill would end it. */
  kill9(): Promise<void>;
}

/** Starts `atrium server` on a data folder and waits until it listens. */
export async function startServerProcess(data: string, port: number, opts: { timeoutMs?: number } = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'server', '--data', data, '--port', String(port)], { env: { ...CLI_ENV, ATRIUM_ADDR: '127.0.0.1' } });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  while (!out.includes('Atrium is listening')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    base: `http://127.0.0.1:${port}`,
    out: () => out,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** POSTs JSON (or GETs) an API route and returns the envelope. */
export async function callApi(base: string, method: string, route: string, opts: { token?: string; body?: unknown } = {}): Promise<{ code: number; message: string; data: any }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = opts.token;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${route}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return res.json() as Promise<{ code: number; message: string; data: any }>;
}
