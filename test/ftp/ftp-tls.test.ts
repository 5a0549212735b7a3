import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { Client } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { hasProgram } from '../helpers/daemons.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const enabled = hasProgram('openssl');
const clientsMissing = ['lftp', 'curl'].filter((p) => !hasProgram(p));
if (clientsMissing.length > 0 && process.env.CI) throw new Error(`CI needs ${clientsMissing.join(', ')} for the FTPS mirror tests`);

/** A folder tree as relative path -> 'dir' or the file's bytes in hex, to compare two trees. */
function treeOf(root: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(path.join(root, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (statSync(path.join(root, r)).isDirectory()) Object.assign(out, { [r]: 'dir' }, treeOf(root, r));
    else out[r] = readFileSync(path.join(root, r)).toString('hex');
  }
  return out;
}

/** A tree with empty folders (one nested in another), 0-byte files and files of a few sizes. */
const MIRRORED = {
  'empty/': '',
  'outer/inner-empty/': '',
  'outer/zero.bin': '',
  'zero.txt': '',
  'small.txt': 'a small file',
  'outer/big.bin': randomBytes(300_000),
  'outer/deeper/one.bin': randomBytes(70_000),
};
if (!enabled) {
  if (process.env.CI) throw new Error('CI needs openssl (.ci/packages.sh installs it) for the FTP TLS tests');
  console.warn('\n*** SKIPPING FTP TLS tests: no openssl to make a certificate ***\n');
}

/** The first reply line a plain client reads within a second ('' when none comes). */
function firstLine(port: number): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      sock.destroy();
      resolve(got.split('\r\n')[0] ?? '');
    };
    sock.setTimeout(1000, done);
    sock.on('data', (c) => {
      got += c.toString('latin1');
      if (got.includes('\r\n')) done();
    });
    sock.on('error', done);
  });
}

/** OpenList's FTP TLS settings: explicit AUTH TLS with PROT P, mandatory TLS, implicit TLS. */
describe.runIf(enabled)('FTP over TLS', () => {
  let s: TestServer;
  let admin: string;
  let srv: ProtocolListener;
  let root: string;
  let certDir: string;
  const clients: Client[] = [];
  const save = (key: string, value: string) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key, value }] });
  const connect = async (secure: boolean | 'implicit') => {
    const c = new Client(10_000);
    clients.push(c);
    await c.access({ host: '127.0.0.1', port: srv.port, user: 'admin', password: ADMIN_PASSWORD, secure, secureOptions: { rejectUnauthorized: false } });
    return c;
  };

  beforeAll(async () => {
    certDir = mkdtempSync(path.join(os.tmpdir(), 'atrium-ftp-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', path.join(certDir, 'key.pem'), '-out', path.join(certDir, 'cert.pem')], { stdio: 'ignore' });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({ 'hello.txt': 'hello over tls' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    srv = await startFtpServer(s.core, '127.0.0.1:0');
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await srv?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(certDir, { recursive: true, force: true });
  });

  it('without a certificate, AUTH TLS is refused and not offered', async () => {
    const plain = await connect(false);
    expect((await plain.send('FEAT')).message).not.toContain('AUTH TLS');
    await expect(plain.send('AUTH TLS')).rejects.toThrow(/502 TLS is not configured/);
    plain.close();
  });

  it('with one, AUTH TLS secures the control and (PROT P) the data connections', async () => {
    expect((await save('ftp_tls_public_cert_path', path.join(certDir, 'cert.pem'))).code).toBe(200);
    expect((await save('ftp_tls_private_key_path', path.join(certDir, 'key.pem'))).code).toBe(200);
    const c = await connect(true);
    expect(c.ftp.socket).toBeInstanceOf(TLSSocket);
    expect((c.ftp.socket as TLSSocket).encrypted).toBe(true);
    expect((await c.send('FEAT')).message).toMatch(/AUTH TLS[\s\S]*PBSZ[\s\S]*PROT/);
    expect((await c.list('/s')).map((e) => e.name)).toEqual(['hello.txt']);
    const chunks: Buffer[] = [];
    await c.downloadTo(new Writable({ write: (b, _e, cb) => (chunks.push(b), cb()) }), '/s/hello.txt');
    expect(Buffer.concat(chunks).toString()).toBe('hello over tls');
    await c.uploadFrom(Readable.from([Buffer.from('sent over tls')]), '/s/up.txt');
    expect(readFileSync(path.join(root, 'up.txt'), 'utf8')).toBe('sent over tls');
    c.close();
    // a plain client still logs in while TLS is not mandatory
    const plain = await connect(false);
    expect((await plain.list('/s')).map((e) => e.name).sort()).toEqual(['hello.txt', 'up.txt']);
    plain.close();
  });

  it('ftp_mandatory_tls refuses a login before AUTH TLS and clear data connections', async () => {
    expect((await save('ftp_mandatory_tls', 'true')).code).toBe(200);
    try {
      await expect(connect(false)).rejects.toThrow(/534 TLS is required/);
      const c = await connect(true);
      await expect(c.send('PROT C')).rejects.toThrow(/534/);
      expect((await c.list('/s')).length).toBe(2);
      c.close();
    } finally {
      await save('ftp_mandatory_tls', 'false');
    }
  });

  it('ftp_implicit_tls starts every connection in TLS', async () => {
    expect((await save('ftp_implicit_tls', 'true')).code).toBe(200);
    try {
      // a plain client reads no greeting: the server waits for a TLS handshake
      expect(await firstLine(srv.port)).not.toMatch(/^220/);
      const c = await connect('implicit');
      expect((c.ftp.socket as TLSSocket).encrypted).toBe(true);
      const chunks: Buffer[] = [];
      await c.downloadTo(new Writable({ write: (b, _e, cb) => (chunks.push(b), cb()) }), '/s/hello.txt');
      expect(Buffer.concat(chunks).toString()).toBe('hello over tls');
      c.close();
    } finally {
      await save('ftp_implicit_tls', 'false');
    }
    expect(await firstLine(srv.port)).toMatch(/^220/);
  });

  it.skipIf(clientsMissing.length > 0)('lftp (GnuTLS) and curl (OpenSSL) mirror a tree with empty folders and 0-byte files over explicit FTPS, both ways', async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'atrium-ftps-mirror-'));
    try {
      const source = makeTree(MIRRORED, path.join(root, 'tree'));
      const lftp = (script: string) =>
        run('lftp', ['-c', `set ftp:ssl-force true; set ftp:ssl-protect-data true; set ssl:verify-certificate no; set ftp:passive-mode on; set net:max-retries 1; set net:timeout 10; open -u admin,${ADMIN_PASSWORD} -p ${srv.port} 127.0.0.1; ${script}`], { cwd: work });
      // download: every empty listing and 0-byte file is a data connection with no bytes
      await lftp('mirror /s/tree down');
      expect(treeOf(path.join(work, 'down'))).toEqual(treeOf(source));
      // upload: the client sends nothing on the empty files' data connections
      await lftp('mirror -R down /s/up');
      expect(treeOf(path.join(root, 'up'))).toEqual(treeOf(source));
      const curl = (...args: string[]) => run('curl', ['-sS', '--ssl-reqd', '-k', '--user', `admin:${ADMIN_PASSWORD}`, ...args], { cwd: work, encoding: 'buffer' });
      const base = `ftp://127.0.0.1:${srv.port}/s/tree`;
      expect((await curl('-l', `${base}/empty/`)).stdout.length).toBe(0);
      expect((await curl('-l', `${base}/outer/inner-empty/`)).stdout.length).toBe(0);
      expect((await curl(`${base}/outer/zero.bin`)).stdout.length).toBe(0);
      expect((await curl(`${base}/outer/big.bin`)).stdout.equals(readFileSync(path.join(source, 'outer/big.bin')))).toBe(true);
      expect((await curl('-l', `${base}/outer/`)).stdout.toString().split(/\r?\n/).filter(Boolean).sort()).toEqual(['big.bin', 'deeper', 'inner-empty', 'zero.bin']);
      await curl('-T', path.join(work, 'down/zero.txt'), `ftp://127.0.0.1:${srv.port}/s/curl-zero.txt`);
      await curl('-T', path.join(work, 'down/outer/deeper/one.bin'), `ftp://127.0.0.1:${srv.port}/s/curl-one.bin`);
      expect(statSync(path.join(root, 'curl-zero.txt')).size).toBe(0);
      expect(readFileSync(path.join(root, 'curl-one.bin')).equals(readFileSync(path.join(source, 'outer/deeper/one.bin')))).toBe(true);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);
});
