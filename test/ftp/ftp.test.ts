import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { Client } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { waitFor, waitUntil } from '../helpers/wait.js';
import { hasProgram } from '../helpers/daemons.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

const FTP_READ = 1024;
const FTP_WRITE = 2048;
const WRITE_BITS = 8 | 16 | 32 | 128;
const run = promisify(execFile);

const CLIENTS = ['lftp', 'curl'];
const missing = CLIENTS.filter((p) => !hasProgram(p));
if (missing.length > 0) {
  if (process.env.CI) throw new Error(`CI needs ${missing.join(', ')} (.ci/packages.sh installs them)`);
  console.warn(`\n*** SKIPPING FTP tests with ${missing.join(', ')}: not installed ***\n`);
}


/** Collects a download into a buffer. */
function sink(): { stream: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  return {
    stream: new Writable({
      write(c: Buffer, _e, cb) {
        chunks.push(c);
        cb();
      },
    }),
    bytes: () => Buffer.concat(chunks),
  };
}

describe.each(ONE_BACKEND)('FTP server on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let srv: ProtocolListener;
  let root: string;
  const clients: Client[] = [];
  const connect = async (user: string, password: string) => {
    const c = new Client(10_000);
    clients.push(c);
    await c.access({ host: '127.0.0.1', port: srv.port, user, password });
    return c;
  };
  const names = (list: Array<{ name: string }>) => list.map((e) => e.name).sort();

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({ 'hello.txt': 'hello ftp', 'dir/inner.txt': 'inner', 'secret.txt': 'SECRET', 'locked/in.txt': 'locked' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    for (const m of [
      { path: '/s', hide: '^secret', h_sub: false },
      { path: '/s/locked', password: 'pw', p_sub: true },
    ]) {
      expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: m })).code).toBe(200);
    }
    for (const u of [
      { username: 'writer', password: 'w-pass', permission: FTP_READ | FTP_WRITE | WRITE_BITS },
      { username: 'reader', password: 'r-pass', permission: FTP_READ | WRITE_BITS },
      { username: 'nobits', password: 'n-pass', permission: WRITE_BITS },
    ]) {
      expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: u })).code).toBe(200);
    }
    srv = await startFtpServer(s.core, '127.0.0.1:0');
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await srv?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('basic-ftp: list, get (also from an offset), put, mkdir, rename, size, mtime, delete', async () => {
    const c = await connect('admin', ADMIN_PASSWORD);
    expect(await c.pwd()).toBe('/');
    expect(names(await c.list('/s'))).toEqual(['dir', 'hello.txt', 'locked', 'secret.txt']);
    const listed = (await c.list('/s')).find((e) => e.name === 'hello.txt')!;
    expect(listed.size).toBe(9);
    await c.cd('/s');
    expect(await c.pwd()).toBe('/s');
    const got = sink();
    await c.downloadTo(got.stream, 'hello.txt');
    expect(got.bytes().toString()).toBe('hello ftp');
    const part = sink();
    await c.downloadTo(part.stream, 'hello.txt', 6);
    expect(part.bytes().toString()).toBe('ftp');
    const body = randomBytes(4 * 1024 * 1024 + 5);
    await c.uploadFrom(Readable.from([body]), 'up.bin');
    expect(readFileSync(path.join(root, 'up.bin')).equals(body)).toBe(true);
    expect(await c.size('up.bin')).toBe(body.length);
    expect(Math.abs((await c.lastMod('up.bin')).getTime() - Date.now())).toBeLessThan(60_000);
    await c.send('MKD made');
    expect(existsSync(path.join(root, 'made'))).toBe(true);
    await c.rename('up.bin', 'made/moved.bin');
    expect(readFileSync(path.join(root, 'made', 'moved.bin')).equals(body)).toBe(true);
    expect(existsSync(path.join(root, 'up.bin'))).toBe(false);
    await expect(c.send('RMD made')).rejects.toThrow(/not empty/);
    await c.remove('made/moved.bin');
    await c.removeEmptyDir('made');
    expect(existsSync(path.join(root, 'made'))).toBe(false);
    await expect(c.downloadTo(sink().stream, 'nothing.txt')).rejects.toThrow(/550/);
  });

  it('hidden entries, password rules and permission bits 1024/2048', async () => {
    const w = await connect('writer', 'w-pass');
    expect(names(await w.list('/s'))).toEqual(['dir', 'hello.txt', 'locked']);
    await expect(w.downloadTo(sink().stream, '/s/secret.txt')).rejects.toThrow(/550/);
    await expect(w.send('DELE /s/secret.txt')).rejects.toThrow(/550/);
    await expect(w.list('/s/locked')).rejects.toThrow(/550/);
    expect(readFileSync(path.join(root, 'secret.txt'), 'utf8')).toBe('SECRET');

    const r = await connect('reader', 'r-pass');
    const got = sink();
    await r.downloadTo(got.stream, '/s/hello.txt');
    expect(got.bytes().toString()).toBe('hello ftp');
    await expect(r.uploadFrom(Readable.from([Buffer.from('x')]), '/s/r.txt')).rejects.toThrow(/550/);
    await expect(r.send('MKD /s/rdir')).rejects.toThrow(/550/);
    await expect(r.send('DELE /s/hello.txt')).rejects.toThrow(/550/);
    await expect(r.rename('/s/hello.txt', '/s/h2.txt')).rejects.toThrow(/550/);
    expect(existsSync(path.join(root, 'r.txt'))).toBe(false);
    expect(existsSync(path.join(root, 'hello.txt'))).toBe(true);

    await expect(connect('nobits', 'n-pass')).rejects.toThrow(/530/);
    await expect(connect('writer', 'wrong')).rejects.toThrow(/530/);
    await expect(connect('anonymous', 'x@y')).rejects.toThrow(/530/); // the guest is disabled
  });

  it('anonymous logs in as the guest, its password opening password rules', async () => {
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.role === 1);
    const upd = await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false, permission: FTP_READ } });
    expect(upd.code).toBe(200);
    try {
      const g = await connect('anonymous', 'pw');
      expect(names(await g.list('/s/locked'))).toEqual(['in.txt']);
      const wrong = await connect('anonymous', 'nope');
      await expect(wrong.list('/s/locked')).rejects.toThrow(/550/);
      await expect(g.uploadFrom(Readable.from([Buffer.from('x')]), '/s/g.txt')).rejects.toThrow(/550/);
    } finally {
      await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } });
    }
  });

  it('a dropped upload stores nothing under its name and leaves no temporary file (its bytes stay the user\'s partial)', async () => {
    const control = net.connect(srv.port, '127.0.0.1');
    control.setEncoding('utf8');
    let said = '';
    control.on('data', (d: string) => (said += d));
    const expectReply = async (code: number) => {
      await waitUntil(() => new RegExp(`^${code} `, 'm').test(said));
      const out = said;
      said = '';
      return out;
    };
    await expectReply(220);
    control.write(`USER admin\r\nPASS ${ADMIN_PASSWORD}\r\n`);
    await waitUntil(() => /^230 /m.test(said));
    said = '';
    control.write('EPSV\r\n');
    const port = Number(/\|\|\|(\d+)\|/.exec(await expectReply(229))![1]);
    const data = net.connect(port, '127.0.0.1');
    data.on('error', () => undefined); // the server resets it
    control.write('STOR /s/dropped.bin\r\n');
    await expectReply(150);
    // more than the 1 MiB the staging writes at once
    data.write(randomBytes(2 * 1024 * 1024 + 512 * 1024));
    // the bytes go into the user's partial (staging), kept for a resume, never under the name
    const adminId = (await s.core.repos.users.byUsername('admin'))!.id;
    const partial = async () => (await s.core.repos.uploads.receivingOf(adminId, 'partial'))[0];
    await waitFor(async () => {
      const r = await partial();
      return r !== undefined && existsSync(s.core.uploads.staging.file(r.id)) && readFileSync(s.core.uploads.staging.file(r.id)).length > 0;
    }, 20_000);
    control.destroy();
    await waitFor(async () => ((await partial())?.received ?? 0) > 0, 20_000);
    data.destroy();
    expect(existsSync(path.join(root, 'dropped.bin'))).toBe(false);
    const tmp = path.join(root, '.atrium-tmp');
    expect(existsSync(tmp) ? readdirSync(tmp) : []).toEqual([]);
    await s.core.uploads.partials.drop((await partial())!);
  });

  it.skipIf(missing.length > 0)('lftp and curl in passive mode: list, get, put, mkdir, rename, delete', async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'ftp-clients-'));
    const body = randomBytes(1024 * 1024 + 1);
    writeFileSync(path.join(work, 'local.bin'), body);
    const lftp = (script: string) =>
      run('lftp', ['-c', `set ftp:ssl-allow no; set ftp:passive-mode on; set net:max-retries 1; open -u writer,w-pass -p ${srv.port} 127.0.0.1; ${script}`], { cwd: work });
    const { stdout } = await lftp('mkdir /s/lf; cd /s/lf; put local.bin -o up.bin; ls; get up.bin -o back.bin; mv up.bin renamed.bin; cls -1');
    expect(stdout).toMatch(/up\.bin/);
    expect(stdout).toMatch(/renamed\.bin/);
    expect(readFileSync(path.join(work, 'back.bin')).equals(body)).toBe(true);
    expect(readFileSync(path.join(root, 'lf', 'renamed.bin')).equals(body)).toBe(true);
    await lftp('rm /s/lf/renamed.bin; rmdir /s/lf');
    expect(existsSync(path.join(root, 'lf'))).toBe(false);

    const url = `ftp://writer:w-pass@127.0.0.1:${srv.port}`;
    const listing = await run('curl', ['-sS', '--ftp-pasv', `${url}/s/`]);
    expect(listing.stdout).toMatch(/hello\.txt/);
    expect(listing.stdout).not.toMatch(/secret/);
    await run('curl', ['-sS', '--ftp-pasv', '-T', path.join(work, 'local.bin'), `${url}/s/curl.bin`]);
    expect(readFileSync(path.join(root, 'curl.bin')).equals(body)).toBe(true);
    const down = await run('curl', ['-sS', '--ftp-pasv', '-o', path.join(work, 'curl-back.bin'), `${url}/s/curl.bin`]);
    expect(down.stderr).toBe('');
    expect(readFileSync(path.join(work, 'curl-back.bin')).equals(body)).toBe(true);
    await run('curl', ['-sS', '--ftp-pasv', `${url}/s/`, '-Q', 'DELE /s/curl.bin']);
    expect(existsSync(path.join(root, 'curl.bin'))).toBe(false);
    rmSync(work, { recursive: true, force: true });
  });
});
