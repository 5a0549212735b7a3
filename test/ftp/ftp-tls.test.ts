import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { Client } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { hasProgram } from '../helpers/daemons.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

const enabled = hasProgram('openssl');
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
});
