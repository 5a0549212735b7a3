import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasProgram } from '../helpers/daemons.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { MAX_DATA, READ_LENGTH } from '../../src/protocols/sftp/openssh-ext.js';

/**
 * The SFTP server started by `atrium server` from config (`sftp.enable`, `sftp.listen`), used by
 * real clients: OpenSSH's `sftp` in batch mode (password through sshpass, and a registered key)
 * and rclone's sftp backend (a round trip of 1 000 files).
 */
const PROGRAMS = ['sftp', 'sshpass', 'ssh-keygen', 'rclone'];
const missing = PROGRAMS.filter((p) => !hasProgram(p));
if (missing.length > 0) {
  if (process.env.CI) throw new Error(`CI needs ${missing.join(', ')} (.ci/packages.sh installs them)`);
  console.warn(`\n*** SKIPPING SFTP client tests: ${missing.join(', ')} not installed ***\n`);
}
const run = promisify(execFile);
const PASSWORD = 'sftp-admin-pw';

describe.skipIf(missing.length > 0)('SFTP with OpenSSH sftp and rclone against atrium server', () => {
  let data: string;
  let work: string;
  let files: string;
  let server: ServerProcess;
  let sftpPort: number;
  let httpPort: number;
  let knownHosts: string;

  const start = async () => {
    server = await startServerProcess(data, httpPort);
    expect(server.out()).toContain(`sftp://127.0.0.1:${sftpPort}`);
  };
  const sshOpts = () => ['-P', String(sftpPort), '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'LogLevel=ERROR'];
  const batch = (commands: string[]) => {
    const file = path.join(work, `batch-${randomBytes(4).toString('hex')}`);
    writeFileSync(file, `${commands.join('\n')}\n`);
    return file;
  };
  const withPassword = (commands: string[]) =>
    // `-b` turns BatchMode on, which forbids password prompts: turned off again before it
    run('sshpass', ['-p', PASSWORD, 'sftp', ...sshOpts(), '-o', 'BatchMode=no', '-o', 'PreferredAuthentications=password', '-o', 'PubkeyAuthentication=no', '-b', batch(commands), 'admin@127.0.0.1'], {
      cwd: work,
    });

  beforeAll(async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-sftp-'));
    work = mkdtempSync(path.join(os.tmpdir(), 'atrium-sftp-work-'));
    files = path.join(data, 'files');
    await atrium('admin', 'set', PASSWORD, '--data', data);
    sftpPort = await freePort();
    httpPort = await freePort();
    const config = JSON.parse(readFileSync(path.join(data, 'config.json'), 'utf8'));
    config.sftp = { enable: true, listen: `127.0.0.1:${sftpPort}` };
    writeFileSync(path.join(data, 'config.json'), JSON.stringify(config));
    await start();
    // the host key made on the first start, as OpenSSH would record it
    const pub = readFileSync(path.join(data, 'ssh', 'ssh_host_ed25519_key.pub'), 'utf8').trim().split(' ');
    knownHosts = path.join(work, 'known_hosts');
    writeFileSync(knownHosts, `[127.0.0.1]:${sftpPort} ${pub[0]} ${pub[1]}\n`);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(data, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('makes an Ed25519 host key once (mode 0600, no RSA unless asked) and keeps it across restarts', async () => {
    const keyFile = path.join(data, 'ssh', 'ssh_host_ed25519_key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, 'utf8')).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----/);
    expect(existsSync(path.join(data, 'ssh', 'ssh_host_rsa_key'))).toBe(false);
    const before = readFileSync(keyFile, 'utf8');
    expect(execFileSync('ssh-keygen', ['-l', '-f', `${keyFile}.pub`]).toString()).toMatch(/^256 SHA256:.* \(ED25519\)$/m);
    // OpenSSH reads the private key and derives the same public key
    expect(execFileSync('ssh-keygen', ['-y', '-f', keyFile]).toString().split(' ').slice(0, 2)).toEqual(readFileSync(`${keyFile}.pub`, 'utf8').split(' ').slice(0, 2));
    await server.stop();
    await start();
    expect(readFileSync(keyFile, 'utf8')).toBe(before);
    // StrictHostKeyChecking against the key recorded before the restart
    const { stdout } = await withPassword(['pwd']);
    expect(stdout).toContain('Remote working directory: /');
  }, 60_000);

  it('OpenSSH sftp -b with a password: put, get, ls, mkdir, rename, rm, rmdir', async () => {
    const body = randomBytes(5 * 1024 * 1024 + 3);
    writeFileSync(path.join(work, 'local.bin'), body);
    const { stdout } = await withPassword([
      'mkdir /box',
      'cd /box',
      'put local.bin remote.bin',
      'ls -l',
      'get remote.bin back.bin',
      'rename remote.bin renamed.bin',
      'mkdir sub',
      'rename renamed.bin sub/renamed.bin',
      'ls sub',
    ]);
    expect(stdout).toMatch(/-rw-r--r-- .* 5242883 .* remote\.bin/);
    expect(readFileSync(path.join(work, 'back.bin')).equals(body)).toBe(true);
    expect(readFileSync(path.join(files, 'box', 'sub', 'renamed.bin')).equals(body)).toBe(true);
    await withPassword(['rm /box/sub/renamed.bin', 'rmdir /box/sub', 'rmdir /box']);
    expect(existsSync(path.join(files, 'box'))).toBe(false);
    // a failing command fails the batch
    await expect(withPassword(['get /no/such/file'])).rejects.toThrow();
    await expect(run('sshpass', ['-p', 'wrong', 'sftp', ...sshOpts(), '-o', 'BatchMode=no', '-o', 'PubkeyAuthentication=no', '-b', batch(['pwd']), 'admin@127.0.0.1'])).rejects.toThrow();
  }, 60_000);

  it('OpenSSH sftp -b with a key registered through /api/me/sshkey/add', async () => {
    const keyFile = path.join(work, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const base = `http://127.0.0.1:${httpPort}`;
    const token = (await callApi(base, 'POST', '/api/auth/login', { body: { username: 'admin', password: PASSWORD } })).data.token;
    const keyArgs = [...sshOpts(), '-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'PreferredAuthentications=publickey'];
    const sftpWithKey = (cmds: string[]) => run('sftp', [...keyArgs, '-b', batch(cmds), 'admin@127.0.0.1'], { cwd: work });
    await expect(sftpWithKey(['pwd'])).rejects.toThrow(); // not registered yet
    const added = await callApi(base, 'POST', '/api/me/sshkey/add', { token, body: { title: 'ci', key: readFileSync(`${keyFile}.pub`, 'utf8') } });
    expect(added.code).toBe(200);
    writeFileSync(path.join(work, 'k.txt'), 'by key');
    await sftpWithKey(['put k.txt /k.txt', 'ls /']);
    expect(readFileSync(path.join(files, 'k.txt'), 'utf8')).toBe('by key');
    // OpenSSH's sftp asks limits@openssh.com and takes its lengths for the transfer requests
    const verbose = await run('sftp', [...keyArgs, '-vvv', '-b', batch(['get /k.txt k-back.txt']), 'admin@127.0.0.1'], { cwd: work });
    expect(verbose.stderr).toContain(`server upload/download buffer sizes ${MAX_DATA} / ${READ_LENGTH}; using ${MAX_DATA} / ${READ_LENGTH}`);
    expect(readFileSync(path.join(work, 'k-back.txt'), 'utf8')).toBe('by key');
    const keys = (await callApi(base, 'GET', '/api/me/sshkey/list', { token })).data.content;
    expect(Date.parse(keys[0].last_used_time)).toBeGreaterThan(Date.parse(keys[0].added_time));
  }, 60_000);

  it('OpenSSH sftp -b: put -a resumes a partial upload; df and df -h show the storage size', async () => {
    const body = randomBytes(3 * 1024 * 1024 + 5);
    writeFileSync(path.join(work, 'resume.bin'), body);
    // the part already there differs from the local file: only the rest may be sent
    const partial = Buffer.alloc(1_000_000, 0x58);
    writeFileSync(path.join(files, 'resume.bin'), partial);
    const { stdout } = await withPassword(['put -a resume.bin /resume.bin', 'df', 'df -h']);
    expect(readFileSync(path.join(files, 'resume.bin')).equals(Buffer.concat([partial, body.subarray(partial.length)]))).toBe(true);
    // the partial it went through (the stored file seeded it) is gone
    for (const dir of ['sftp-spool', 'resumable']) {
      const full = path.join(data, 'temp', dir);
      expect(existsSync(full) ? readdirSync(full) : []).toEqual([]);
    }
    // df: sizes in KiB of the Local storage's file system; df -h: the same scaled
    const real = statfsSync(files);
    expect(stdout).toMatch(/Size\s+Used\s+Avail\s+\(root\)\s+%Capacity/);
    expect(stdout).toMatch(new RegExp(`^\\s*${Math.floor((real.blocks * real.bsize) / 1024)}\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+%`, 'm'));
    expect(stdout).toMatch(/^\s*[\d.]+[KMGTPE]B\s+[\d.]+[KMGTPE]?B\s+[\d.]+[KMGTPE]?B\s+[\d.]+[KMGTPE]?B\s+\d+%/m);
  }, 60_000);

  it('rclone sftp backend: copy and check of 1 000 files', async () => {
    const src = path.join(work, 'tree');
    for (let d = 0; d < 10; d++) {
      mkdirSync(path.join(src, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(path.join(src, `d${d}`, `f${f}.bin`), randomBytes(100 + ((d * 100 + f) * 37) % 5000));
    }
    const obscured = execFileSync('rclone', ['obscure', PASSWORD]).toString().trim();
    const env = {
      ...process.env,
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_X_TYPE: 'sftp',
      RCLONE_CONFIG_X_HOST: '127.0.0.1',
      RCLONE_CONFIG_X_PORT: String(sftpPort),
      RCLONE_CONFIG_X_USER: 'admin',
      RCLONE_CONFIG_X_PASS: obscured,
      RCLONE_CONFIG_X_KNOWN_HOSTS_FILE: knownHosts,
      RCLONE_CONFIG_X_SHELL_TYPE: 'none',
      RCLONE_CONFIG_X_DISABLE_HASHCHECK: 'true',
    };
    await run('rclone', ['copy', src, 'X:/rc', '--transfers', '8', '--checkers', '8'], { env });
    const uploaded = readdirSync(path.join(files, 'rc'), { recursive: true }).filter((f) => String(f).endsWith('.bin'));
    expect(uploaded.length).toBe(1000);
    // times set by rclone through setstat survive: a second copy transfers nothing
    const again = await run('rclone', ['copy', src, 'X:/rc', '-v', '--stats-one-line'], { env });
    expect(again.stderr).not.toMatch(/Copied \(new\)|Copied \(replaced/);
    const check = await run('rclone', ['check', src, 'X:/rc', '--download', '--checkers', '8'], { env });
    expect(check.stderr).toMatch(/0 differences found/);
    expect(check.stderr).toMatch(/1000 matching files/);
    // and back down
    const back = path.join(work, 'back');
    await run('rclone', ['copy', 'X:/rc', back, '--transfers', '8'], { env });
    await run('rclone', ['check', src, back, '--download'], { env });
  }, 120_000);
});
