import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

export const BIN = path.resolve('bin/atrium.js');
export const CLI_ENV = { ...process.env, ATRIUM_LOG_ENABLE: 'false' };

/** Runs `atrium <args>` (the built CLI) to completion. */
export const atrium = (...args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args], { env: CLI_ENV });

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
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
