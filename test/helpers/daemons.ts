import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './process.js';

export interface Daemon {
  /** What to give the matching `set_*` route. */
  uri: string;
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/** True when the program is on PATH (the tests that need it are skipped with a message otherwise). */
export function hasProgram(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

function run(cmd: string, args: string[]): { child: ChildProcess; log: () => string } {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (b) => (out = (out + b).slice(-20_000)));
  child.stderr!.on('data', (b) => (out = (out + b).slice(-20_000)));
  return { child, log: () => out };
}

async function untilAnswers(url: string, child: ChildProcess, log: () => string, init?: RequestInit): Promise<void> {
  const end = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the daemon exited (${child.exitCode}):\n${log()}`);
    try {
      await fetch(url, { ...init, signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      if (Date.now() > end) throw new Error(`${url} did not answer:\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
}

/** aria2c with JSON-RPC on a loopback port (it listens on loopback only unless told otherwise). */
export async function startAria2(dir: string, secret: string): Promise<Daemon> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const { child, log } = run('aria2c', [
    '--enable-rpc',
    `--rpc-listen-port=${port}`,
    `--rpc-secret=${secret}`,
    '--no-conf',
    `--dir=${dir}`,
    '--enable-dht=false',
    '--enable-dht6=false',
    '--bt-enable-lpd=false',
    '--enable-peer-exchange=false',
    '--follow-torrent=true',
    '--seed-time=0',
    '--quiet=true',
  ]);
  const uri = `http://127.0.0.1:${port}/jsonrpc`;
  await untilAnswers(uri, child, log, { method: 'POST', body: '{}' });
  return { uri, port, log, stop: stopper(child) };
}

/**
 * qbittorrent-nox with its own profile: the legal notice accepted, the Web UI on a loopback port,
 * and the session kept off the network (bound to lo; no DHT, LSD, PeX or UPnP).
 */
export async function startQbittorrent(profile: string): Promise<Daemon> {
  const port = await freePort();
  const conf = path.join(profile, 'qBittorrent/config');
  mkdirSync(conf, { recursive: true });
  writeFileSync(
    path.join(conf, 'qBittorrent.conf'),
    [
      '[LegalNotice]',
      'Accepted=true',
      '',
      '[BitTorrent]',
      'Session\\DHTEnabled=false',
      'Session\\LSDEnabled=false',
      'Session\\PeXEnabled=false',
      'Session\\Interface=lo',
      'Session\\InterfaceName=lo',
      'Session\\Port=0',
      'Session\\AnonymousModeEnabled=false',
      'Session\\TempPathEnabled=false',
      '',
      '[Preferences]',
      'Connection\\UPnP=false',
      'Connection\\ResolvePeerCountries=false',
      'General\\Locale=en',
      `WebUI\\Port=${port}`,
      'WebUI\\Address=127.0.0.1',
      'WebUI\\LocalHostAuth=true',
      'WebUI\\HostHeaderValidation=false',
      'WebUI\\CSRFProtection=false',
      '',
    ].join('\n'),
  );
  const { child, log } = run('qbittorrent-nox', [`--profile=${profile}`, `--webui-port=${port}`]);
  await untilAnswers(`http://127.0.0.1:${port}/api/v2/app/version`, child, log);
  // 4.5.x keeps the documented default credentials (the random password came with 4.6.1).
  return { uri: `http://admin:adminadmin@127.0.0.1:${port}/`, port, log, stop: stopper(child) };
}

/** transmission-daemon in the foreground with its own config folder, RPC on a loopback port. */
export async function startTransmission(configDir: string): Promise<Daemon> {
  mkdirSync(configDir, { recursive: true });
  const port = await freePort();
  const peerPort = await freePort();
  const { child, log } = run('transmission-daemon', [
    '--foreground',
    `--config-dir=${configDir}`,
    `--port=${port}`,
    '--rpc-bind-address=127.0.0.1',
    '--allowed=127.0.0.1',
    '--no-auth',
    '--no-dht',
    '--no-lpd',
    '--no-portmap',
    '--bind-address-ipv4=127.0.0.1',
    `--peerport=${peerPort}`,
    `--download-dir=${path.join(configDir, 'downloads')}`,
    '--log-error',
  ]);
  const uri = `http://127.0.0.1:${port}/transmission/rpc`;
  await untilAnswers(uri, child, log);
  return { uri, port, log, stop: stopper(child) };
}
