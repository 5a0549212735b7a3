// Real peers for the driver tests, each a private daemon on a free loopback port with its own
// config in a scratch folder: OpenSSH sshd, rclone serve (webdav, sftp), pure-ftpd, s3rver.

import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { hasProgram } from '../helpers/daemons.js';
import { freePort } from '../helpers/process.js';

/**
 * The programs a test needs: undefined when all are there, else the reason to skip (printed as
 * `*** SKIPPING … ***`). Under CI=true a missing program is an error.
 */
export function missingPrograms(what: string, ...programs: string[]): string | undefined {
  const missing = programs.filter((p) => !hasProgram(p));
  if (missing.length === 0) return undefined;
  if (process.env.CI) throw new Error(`CI needs ${missing.join(', ')} for ${what} (.ci/packages.sh installs them)`);
  const reason = `${what}: ${missing.join(', ')} not installed`;
  console.warn(`\n*** SKIPPING ${reason} ***\n`);
  return reason;
}

/** sshd and pure-ftpd peers switch to `nobody` and chown their trees: they need root. */
export function notRoot(what: string): string | undefined {
  if (process.getuid?.() === 0) return undefined;
  if (process.env.CI) throw new Error(`CI runs ${what} as root (sshd and pure-ftpd switch users)`);
  const reason = `${what}: needs root`;
  console.warn(`\n*** SKIPPING ${reason} ***\n`);
  return reason;
}

export interface Peer {
  port: number;
  /** The scratch folder (config, keys, the served files). */
  dir: string;
  log(): string;
  /** Stops the daemon (it can be started again with `start`). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes the scratch folder. */
  destroy(): Promise<void>;
}

export function scratch(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `atrium-${prefix}-`));
  chmodSync(dir, 0o755);
  return dir;
}

async function untilListening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const end = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited (${child.exitCode}):\n${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`port ${port} did not open:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A daemon run by `cmd args`, restartable on the same port. */
async function daemon(dir: string, port: number, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Peer> {
  let child: ChildProcess | undefined;
  let out = '';
  const log = () => out;
  const start = async () => {
    child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    child.stdout!.on('data', (b) => (out = (out + b).slice(-20_000)));
    child.stderr!.on('data', (b) => (out = (out + b).slice(-20_000)));
    await untilListening(port, child, log);
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    // sshd and pure-ftpd serve each connection in a child of their own: end those too, so that
    // stopping the peer drops the connections as a crash of the server would.
    const children = spawnSync('pgrep', ['-P', String(c.pid)]).stdout.toString().split('\n').filter(Boolean).map(Number);
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return {
    port,
    dir,
    log,
    stop,
    start,
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The tree a peer serving as `nobody` gets: `files/` owned by nobody, `files/root/` the storage
 * root, `files/root/ro/` (with a file) owned by root, so writes there are refused, and a marker
 * file in `files/` outside the storage root.
 */
function servedTree(dir: string): string {
  const files = path.join(dir, 'files');
  mkdirSync(path.join(files, 'root/ro'), { recursive: true });
  writeFileSync(path.join(files, 'outside-marker.txt'), 'outside');
  writeFileSync(path.join(files, 'root/ro/locked.txt'), 'locked');
  execFileSync('chown', ['-R', 'nobody:nogroup', files]);
  execFileSync('chown', ['-R', 'root:root', path.join(files, 'root/ro')]);
  return files;
}

export interface SshdPeer extends Peer {
  /** The served tree (owned by `user`), with `root/` as the storage root and `root/ro/` owned by root. */
  files: string;
  user: string;
  privateKey: string;
}

/**
 * OpenSSH's sshd (run as root, as it must be to switch users) on a loopback port with its own
 * host key; the login is the unprivileged `nobody` with a key of its own, sftp only, so the
 * file system's permissions apply to it.
 */
export async function startSshd(): Promise<SshdPeer> {
  const dir = scratch('sshd');
  const port = await freePort();
  const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, file)]);
  keygen('host');
  keygen('user');
  execFileSync('cp', [path.join(dir, 'user.pub'), path.join(dir, 'authorized_keys')]);
  const files = servedTree(dir);
  const config = path.join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host')}`,
      'PidFile none',
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      // PAM's account check lets the password-less system user in with a key.
      'UsePAM yes',
      'Subsystem sftp internal-sftp',
      'ForceCommand internal-sftp',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  mkdirSync('/run/sshd', { recursive: true });
  const peer = await daemon(dir, port, '/usr/sbin/sshd', ['-D', '-e', '-f', config]);
  return { ...peer, files, user: 'nobody', privateKey: execFileSync('cat', [path.join(dir, 'user')]).toString() };
}

/** Gives the seeded paths (and the folders made for them) to the unprivileged login of the sshd peer. */
export function chownSeeded(user: string, root: string, tree: Record<string, unknown>): void {
  const paths = new Set<string>();
  for (const rel of Object.keys(tree)) {
    for (let p = rel.replace(/\/$/, ''); p !== '/' && p !== '.' && p !== ''; p = path.posix.dirname(p)) paths.add(path.join(root, p));
  }
  if (paths.size > 0) spawnSync('chown', [`${user}:`, ...paths]);
}

/** `rclone serve <kind>` of a local folder on a loopback port (extra flags: credentials, --read-only). */
export async function startRcloneServe(kind: 'webdav' | 'sftp', root: string, extra: string[] = [], dirCacheTime = '0s'): Promise<Peer> {
  const dir = scratch(`rclone-${kind}`);
  const port = await freePort();
  mkdirSync(root, { recursive: true });
  // A short directory cache: tests seed the folder directly and must see it soon.
  const args = ['serve', kind, root, '--addr', `127.0.0.1:${port}`, '--config', path.join(dir, 'rclone.conf'), '--dir-cache-time', dirCacheTime, ...extra];
  if (kind === 'sftp') args.push('--key', path.join(dir, 'host'));
  if (kind === 'sftp') execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host')]);
  return daemon(dir, port, 'rclone', args);
}

export interface FtpPeer extends Peer {
  /** The user's home (the FTP root): `root/` is the storage root, `root/ro/` belongs to root. */
  files: string;
  user: string;
  password: string;
}

/**
 * pure-ftpd with one virtual user (mapped to `nobody`, chrooted to its home) on a loopback port,
 * passive ports on loopback in a range of its own.
 */
export async function startPureFtpd(): Promise<FtpPeer> {
  const dir = scratch('ftpd');
  const port = await freePort();
  const files = servedTree(dir);
  const user = 'atrium';
  const password = 'ftp pass 1';
  const db = path.join(dir, 'pureftpd.passwd');
  // pure-pw would hash with argon2id at a cost of seconds per login; SHA-512 crypt keeps logins quick.
  const hash = execFileSync('openssl', ['passwd', '-6', '-stdin'], { input: password }).toString().trim();
  writeFileSync(db, `${user}:${hash}:65534:65534::${files}/./::::::::::::\n`);
  execFileSync('pure-pw', ['mkdb', `${db}.pdb`, '-f', db]);
  // A passive range unlikely to be shared with another test run on this machine.
  const low = 40_000 + Math.floor(Math.random() * 400) * 50;
  const peer = await daemon(dir, port, 'pure-ftpd', [
    '-S', `127.0.0.1,${port}`,
    '-l', `puredb:${db}.pdb`,
    '-p', `${low}:${low + 49}`,
    '-P', '127.0.0.1',
    '-E', // no anonymous logins
    '-H', // no DNS lookups
    '-A', // everyone chrooted
    '-c', '20',
    '-C', '20',
  ]);
  return { ...peer, files, user, password };
}

export interface NginxPeer extends Peer {
  /** The served folder: `/html/` lists it as nginx's HTML index (exact sizes), `/approx/` with
   * rounded sizes, `/json/` in nginx's json format. */
  files: string;
  base: string;
}

/** nginx on a loopback port with its own config, pid, logs and temp folders, serving `server` lines. */
async function runNginx(dir: string, port: number, server: string[], http: string[] = []): Promise<Peer> {
  mkdirSync(path.join(dir, 'logs'));
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, `${name}-temp`)};`;
  const config = path.join(dir, 'nginx.conf');
  writeFileSync(
    config,
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      'error_log stderr warn;',
      'events { worker_connections 128; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((n) => `  ${temp(n)}`),
      '  default_type application/octet-stream;',
      ...http,
      '  server {',
      `    listen 127.0.0.1:${port};`,
      ...server,
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  return daemon(dir, port, 'nginx', ['-p', dir, '-c', config, '-e', 'stderr']);
}

/** nginx with `autoindex` on a loopback port. */
export async function startNginx(): Promise<NginxPeer> {
  const dir = scratch('nginx');
  const port = await freePort();
  const files = path.join(dir, 'files');
  mkdirSync(files);
  chmodSync(files, 0o755);
  const index = (loc: string, extra: string) => `    location /${loc}/ { alias ${files}/; autoindex on; ${extra} }`;
  const peer = await runNginx(dir, port, [index('html', 'autoindex_exact_size on;'), index('approx', 'autoindex_exact_size off;'), index('json', 'autoindex_format json;')]);
  return { ...peer, files, base: `http://127.0.0.1:${port}` };
}

/**
 * nginx as the reverse proxy in front of a server, with a request body limit as a CDN or a
 * hosting proxy sets one (`client_max_body_size`); bodies are passed through, not buffered.
 */
export async function startNginxProxy(upstream: string, bodyLimit: string): Promise<Peer & { base: string }> {
  const dir = scratch('nginx-proxy');
  const port = await freePort();
  const peer = await runNginx(dir, port, [
    `    client_max_body_size ${bodyLimit};`,
    '    proxy_request_buffering off;',
    '    proxy_http_version 1.1;',
    `    location / { proxy_pass ${upstream}; proxy_set_header Host $host; }`,
  ]);
  return { ...peer, base: `http://127.0.0.1:${port}` };
}

/** nginx spreading requests round-robin over several upstreams (one request to each in turn, no keep-alive upstream). */
export async function startNginxRoundRobin(upstreams: string[]): Promise<Peer & { base: string }> {
  const dir = scratch('nginx-rr');
  const port = await freePort();
  const peer = await runNginx(
    dir,
    port,
    ['    client_max_body_size 0;', '    proxy_request_buffering off;', '    location / { proxy_pass http://atrium_rr; proxy_set_header Host $host:$server_port; }'],
    [`  upstream atrium_rr { ${upstreams.map((u) => `server ${u};`).join(' ')} }`],
  );
  return { ...peer, base: `http://127.0.0.1:${port}` };
}

/** Azurite's fixed development account (its documented well-known key). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface AzuritePeer extends Peer {
  /** The blob endpoint, path-style: `http://127.0.0.1:<port>/devstoreaccount1`. */
  endpoint: string;
}

/** Azurite's blob service (the npm emulator, a dev dependency) on a loopback port, data in a scratch folder, telemetry off (it would call out). */
export async function startAzurite(): Promise<AzuritePeer> {
  const dir = scratch('azurite');
  const port = await freePort();
  const bin = path.join(process.cwd(), 'node_modules', '.bin', 'azurite-blob');
  const peer = await daemon(dir, port, bin, ['--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', dir, '--silent', '--skipApiVersionCheck', '--disableProductStyleUrl', '--disableTelemetry']);
  return { ...peer, endpoint: `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}` };
}

export interface SambaPeer extends Peer {
  /** The share's folder: `root/` is the storage root, `root/ro/` belongs to root (writes refused). */
  files: string;
  share: string;
  user: string;
  password: string;
}

/**
 * Debian's Samba (smbd, as root: it switches to the logged-in user) on a loopback port with a
 * private smb.conf and password database; the server's own authentication defaults stay as they
 * are (`ntlm auth = ntlmv2-only`). The login is the unprivileged `nobody` with a Samba password.
 */
export async function startSamba(): Promise<SambaPeer> {
  const dir = scratch('samba');
  const port = await freePort();
  const files = servedTree(dir);
  for (const d of ['private', 'lock', 'state', 'cache', 'pid', 'ncalrpc']) mkdirSync(path.join(dir, d));
  const config = path.join(dir, 'smb.conf');
  writeFileSync(
    config,
    [
      '[global]',
      `  smb ports = ${port}`,
      '  interfaces = 127.0.0.1',
      '  bind interfaces only = yes',
      ...['private', 'lock', 'state', 'cache', 'pid', 'ncalrpc'].map((d) => `  ${d === 'private' ? 'private dir' : d === 'ncalrpc' ? 'ncalrpc dir' : `${d} directory`} = ${path.join(dir, d)}`),
      `  log file = ${path.join(dir, 'log.smbd')}`,
      `  passdb backend = tdbsam:${path.join(dir, 'private', 'passdb.tdb')}`,
      '  server role = standalone server',
      '  disable netbios = yes',
      '  map to guest = never',
      '  load printers = no',
      '  printing = bsd',
      '  printcap name = /dev/null',
      '  disable spoolss = yes',
      '[share]',
      `  path = ${files}`,
      '  read only = no',
      '',
    ].join('\n'),
  );
  const user = 'nobody';
  const password = 'smb pass 1';
  execFileSync('pdbedit', ['-s', config, '-a', '-u', user, '-t'], { input: `${password}\n${password}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
  // Its own process group (no --no-process-group): smbd's shutdown signals its whole group.
  const peer = await daemon(dir, port, 'smbd', ['--foreground', '-s', config, '-d', '1', '--debug-stdout']);
  return { ...peer, files, share: 'share', user, password };
}
