// The servers under test: Atrium (bin/atrium.js), nginx and `rclone serve http`, each started
// on 127.0.0.1 with a free port, waited for, and stopped through the cleanup registry.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { apiCall, waitHttp } from './http.js';
import { freePort, runCommand, startProcess, type Proc } from './proc.js';

export interface Server {
  name: string;
  base: string;
  port: number;
  proc: Proc;
  stop(): Promise<void>;
}

export async function which(cmd: string): Promise<string | null> {
  const r = await runCommand(`which ${cmd}`, 'sh', ['-c', `command -v ${cmd}`], { timeoutMs: 5000 });
  return r.code === 0 ? r.output.trim() : null;
}

export async function versionOf(cmd: string, args: string[]): Promise<string> {
  try {
    const r = await runCommand(cmd, cmd, args, { timeoutMs: 10_000 });
    return r.output.trim().split('\n')[0] ?? '';
  } catch {
    return 'unknown';
  }
}

/** Waits for `url` on the started `proc`, then `ready()`; when either fails the process is stopped and the error thrown. */
async function whenUp<T>(proc: Proc, url: string, wait: { timeoutMs: number; expect?: string; signal?: AbortSignal }, ready: () => T | Promise<T>): Promise<T> {
  try {
    await waitHttp(url, { proc, ...wait });
    return await ready();
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Atrium

export interface BuildOutcome {
  /** Null when Atrium can be started (fresh build, or an older dist/atrium.js as fallback). */
  error: string | null;
  /** Set when the build failed but an existing dist/atrium.js is used instead. */
  warning?: string;
}

/**
 * `npm run build` once. When it fails (the source is being edited) and a dist/atrium.js from
 * an earlier build exists, that one is used, with a warning in the results; with
 * BENCH_STRICT_BUILD=1, or without a dist, the Atrium benchmarks report the build error.
 */
export async function buildAtrium(repoRoot: string): Promise<BuildOutcome> {
  const dist = path.join(repoRoot, 'dist/atrium.js');
  const distAge = () => (existsSync(dist) ? `dist/atrium.js of ${statSync(dist).mtime.toISOString()}` : '');
  if (process.env.BENCH_SKIP_BUILD === '1') {
    return existsSync(dist) ? { error: null, warning: `BENCH_SKIP_BUILD=1: using ${distAge()}` } : { error: 'BENCH_SKIP_BUILD=1 but dist/atrium.js is missing' };
  }
  const r = await runCommand('npm run build', 'npm', ['run', 'build', '--silent'], { cwd: repoRoot, timeoutMs: 120_000 });
  if (r.code === 0) return { error: null };
  const text = r.output
    .split('\n')
    .filter((l) => !/^npm warn/i.test(l))
    .join('\n')
    .trim();
  const message = `npm run build failed (${r.code}): ${text.slice(0, 3000)}`;
  if (process.env.BENCH_STRICT_BUILD === '1' || !existsSync(dist)) return { error: message };
  return { error: null, warning: `npm run build FAILED, benchmarking the older ${distAge()} instead. ${message}` };
}

export interface Atrium extends Server {
  password: string;
  dataDir: string;
  /** Login token (sent bare in Authorization). */
  token: string;
}

/**
 * Atrium's logging in a benchmark: as shipped (request logs at `info` into the data folder's
 * log/log.log) unless BENCH_ATRIUM_LOG=off, which turns it off as earlier rounds measured.
 */
export const atriumLogOff = () => process.env.BENCH_ATRIUM_LOG === 'off';

/** The environment of an Atrium process for its logging (atriumLogOff). */
export function atriumLogEnv(): Record<string, string> {
  return atriumLogOff() ? { ATRIUM_LOG_ENABLE: 'false', ATRIUM_LOG_LEVEL: 'warn' } : {};
}

/**
 * Starts `node bin/atrium.js server --data <dataDir> --port <port>` and logs in as admin.
 * Files under `<dataDir>/files` are visible at `/`.
 */
export async function startAtrium(repoRoot: string, dataDir: string, opts: { password?: string; signal?: AbortSignal } = {}): Promise<Atrium> {
  const port = await freePort();
  const password = opts.password ?? randomBytes(9).toString('base64url');
  mkdirSync(dataDir, { recursive: true });
  const proc = startProcess('atrium', process.execPath, [path.join(repoRoot, 'bin/atrium.js'), 'server', '--data', dataDir, '--port', String(port)], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ATRIUM_ADMIN_PASSWORD: password,
      ATRIUM_ADDR: '127.0.0.1',
      ...atriumLogEnv(),
      NODE_ENV: 'production',
    },
  });
  const base = `http://127.0.0.1:${port}`;
  return whenUp(proc, `${base}/ping`, { expect: 'pong', timeoutMs: 30_000, signal: opts.signal }, async () => {
    const { data } = await apiCall<{ token: string }>(base, '/api/auth/login', { body: { username: 'admin', password } });
    if (!data?.token) throw new Error('/api/auth/login answered without data.token');
    return { name: 'atrium', base, port, proc, password, dataDir, token: data.token, stop: () => proc.stop(10_000) };
  });
}

// ---------------------------------------------------------------------------------------------
// nginx

/** nginx with a private config in `workDir`, serving `root` with sendfile. */
export async function startNginx(root: string, workDir: string, opts: { signal?: AbortSignal } = {}): Promise<Server> {
  return startNginxWith(root, workDir, '', opts);
}

/**
 * nginx accepting WebDAV `PUT` (core `ngx_http_dav_module`, no extra module) under `root`:
 * `dav_methods PUT DELETE`, `create_full_put_path on`, no body size limit. nginx receives the
 * body into `client_body_temp_path` (`<workDir>/client_body`, keep it on the same filesystem
 * as `root`) and renames it into place.
 */
export async function startNginxDav(root: string, workDir: string, opts: { signal?: AbortSignal } = {}): Promise<Server> {
  return startNginxWith(root, workDir, 'dav_methods PUT DELETE; create_full_put_path on; dav_access user:rw group:r all:r; client_max_body_size 0;', opts);
}

async function startNginxWith(root: string, workDir: string, locationBody: string, opts: { signal?: AbortSignal }): Promise<Server> {
  return startNginxConfig(
    'nginx',
    workDir,
    (port) => `  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    root ${root};
    location / { ${locationBody}}
  }`,
    { workers: 'auto', connections: 1024, accessLog: true, signal: opts.signal },
  );
}

export interface NginxOptions {
  workers: 'auto' | number;
  connections: number;
  /** Log every request to `<workDir>/access.log` (else `access_log off`). */
  accessLog: boolean;
  /** The path waited for, and the body it must answer (default: `/`, any answer). */
  ready?: { path: string; expect: string };
  signal?: AbortSignal;
}

/**
 * nginx (process `name`) with a private config in `workDir`: its temp folders, pid and logs
 * there, and `http(port)` (the server blocks, on the free `port` it is given) inside the http block.
 */
export async function startNginxConfig(name: string, workDir: string, http: (port: number) => string, opts: NginxOptions): Promise<Server> {
  const port = await freePort();
  mkdirSync(workDir, { recursive: true });
  const t = (f: string) => path.join(workDir, f);
  for (const d of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(t(d), { recursive: true });
  const asRoot = process.getuid?.() === 0;
  const conf = `# written by bench/lib/servers.ts
${asRoot ? 'user root root;  # the files live in a root-owned temp folder' : ''}
daemon off;
master_process on;
worker_processes ${opts.workers};
pid ${t('nginx.pid')};
error_log ${t('error.log')} warn;
events { worker_connections ${opts.connections}; }
http {
  access_log ${opts.accessLog ? t('access.log') : 'off'};
  client_body_temp_path ${t('client_body')};
  proxy_temp_path ${t('proxy')};
  fastcgi_temp_path ${t('fastcgi')};
  uwsgi_temp_path ${t('uwsgi')};
  scgi_temp_path ${t('scgi')};
${http(port)}
}
`;
  writeFileSync(t('nginx.conf'), conf);
  const proc = startProcess(name, 'nginx', ['-e', t('error.log'), '-c', t('nginx.conf'), '-p', workDir]);
  const base = `http://127.0.0.1:${port}`;
  return whenUp(proc, `${base}${opts.ready?.path ?? '/'}`, { expect: opts.ready?.expect, timeoutMs: 15_000, signal: opts.signal }, () => ({ name: 'nginx', base, port, proc, stop: () => proc.stop(5000) }));
}

// ---------------------------------------------------------------------------------------------
// The bare Node server (the floor of uploads through Node)

/** bench/lib/node-floor-server.ts writing PUT bodies under `root` (see there). */
export async function startNodeFloor(repoRoot: string, root: string, opts: { signal?: AbortSignal } = {}): Promise<Server> {
  const port = await freePort();
  mkdirSync(root, { recursive: true });
  const script = path.join(repoRoot, 'bench/lib/node-floor-server.ts');
  const proc = startProcess('node-floor', process.execPath, ['--import', 'tsx', script, root, String(port)], { cwd: repoRoot, env: { ...process.env, NODE_ENV: 'production' } });
  const base = `http://127.0.0.1:${port}`;
  return whenUp(proc, `${base}/`, { timeoutMs: 30_000, signal: opts.signal }, () => ({ name: 'node-floor', base, port, proc, stop: () => proc.stop(5000) }));
}

// ---------------------------------------------------------------------------------------------
// rclone

/** `rclone serve http <root> --addr 127.0.0.1:<port>` (read-only) with an empty private config. */
export function startRclone(root: string, workDir: string, opts: { signal?: AbortSignal } = {}): Promise<Server> {
  return startRcloneServe('http', ['--read-only'], root, workDir, opts);
}

/**
 * `rclone serve webdav <root> --addr 127.0.0.1:<port>` with an empty private config and the
 * default `--vfs-cache-mode off` (a PUT streams straight into the file).
 */
export function startRcloneWebdav(root: string, workDir: string, opts: { signal?: AbortSignal } = {}): Promise<Server> {
  return startRcloneServe('webdav', [], root, workDir, opts);
}

async function startRcloneServe(protocol: 'http' | 'webdav', flags: string[], root: string, workDir: string, opts: { signal?: AbortSignal }): Promise<Server> {
  const port = await freePort();
  mkdirSync(workDir, { recursive: true });
  const conf = path.join(workDir, 'rclone.conf');
  writeFileSync(conf, '');
  const proc = startProcess(
    'rclone',
    'rclone',
    ['serve', protocol, root, '--addr', `127.0.0.1:${port}`, ...flags, '--config', conf, '--cache-dir', path.join(workDir, 'cache'), '--log-level', 'ERROR'],
    { env: { ...process.env, HOME: workDir } },
  );
  const base = `http://127.0.0.1:${port}`;
  return whenUp(proc, `${base}/`, { timeoutMs: 15_000, signal: opts.signal }, () => ({ name: 'rclone', base, port, proc, stop: () => proc.stop(5000) }));
}
