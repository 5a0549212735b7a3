import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, type FileEntry, type ParsedKey, type Stats, utils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DATA, READ_LENGTH } from '../../src/protocols/sftp/openssh-ext.js';
import { READDIR_PAGE } from '../../src/protocols/sftp/channel.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { waitFor, waitUntil } from '../helpers/wait.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';

const FTP_READ = 1024;
const FTP_WRITE = 2048;
const WRITE_BITS = 8 | 16 | 32 | 128;
const PERMISSION_DENIED = 3;
const NO_SUCH_FILE = 2;


describe.each(ONE_BACKEND)('SFTP server with the ssh2 client on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let srv: ProtocolListener;
  let root: string;
  let a: SftpSession;
  const sessions: SftpSession[] = [];
  const open = async (username: string, password: string) => {
    const sess = await connectSftp(srv.port, { username, password });
    sessions.push(sess);
    return sess;
  };
  const names = (list: FileEntry[]) => list.map((e) => e.filename).sort();

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({ 'hello.txt': 'hello world', 'dir/inner.txt': 'inner', 'secret.txt': 'SECRET', 'locked/in.txt': 'locked', 'hidden/x.txt': 'x' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    for (const m of [
      { path: '/s', hide: '^secret\n^hidden$', h_sub: false },
      { path: '/s/locked', password: 'pw', p_sub: true },
    ]) {
      expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: m })).code).toBe(200);
    }
    const users = [
      { username: 'writer', password: 'w-pass', permission: FTP_READ | FTP_WRITE | WRITE_BITS },
      { username: 'reader', password: 'r-pass', permission: FTP_READ | WRITE_BITS },
      { username: 'nobits', password: 'n-pass', permission: WRITE_BITS },
      { username: 'based', password: 'b-pass', permission: FTP_READ, base_path: '/s/dir' },
    ];
    for (const u of users) expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: u })).code).toBe(200);
    srv = await startSftp(s);
    a = await open('admin', 'admin-pass-1');
  });
  afterAll(async () => {
    for (const x of sessions) x.end();
    await srv?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps its host key in the data folder and offers it on the next start', async () => {
    const file = path.join(s.dataDir, 'ssh', 'ssh_host_ed25519_key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const offered = await new Promise<string>((resolve, reject) => {
      const c = new Client();
      c.on('error', reject);
      c.connect({
        host: '127.0.0.1',
        port: srv.port,
        username: 'admin',
        password: 'admin-pass-1',
        hostVerifier: (key: Buffer) => {
          resolve(key.toString('base64'));
          c.end();
          return false;
        },
      });
    });
    const parsed = utils.parseKey(readFileSync(file));
    expect(parsed instanceof Error).toBe(false);
    expect(offered).toBe((parsed as ParsedKey).getPublicSSH().toString('base64'));
  });

  it('realpath, stat, lstat and a listing of the user root', async () => {
    expect(await call(a.sftp, 'realpath', '.')).toBe('/');
    expect(await call(a.sftp, 'realpath', '/s/dir/../dir/./inner.txt')).toBe('/s/dir/inner.txt');
    const st = await call<Stats>(a.sftp, 'stat', '/s/hello.txt');
    expect(st.size).toBe(11);
    expect(st.isFile()).toBe(true);
    expect((await call<Stats>(a.sftp, 'lstat', '/s/dir')).isDirectory()).toBe(true);
    expect(names(await call<FileEntry[]>(a.sftp, 'readdir', '/'))).toContain('s');
    const list = await call<FileEntry[]>(a.sftp, 'readdir', '/s');
    expect(names(list)).toEqual(['dir', 'hello.txt', 'hidden', 'locked', 'secret.txt']); // the admin sees hidden entries
    expect(list.find((e) => e.filename === 'hello.txt')!.longname).toMatch(/^-rw-r--r-- .* 11 .* hello\.txt$/);
    await expect(call(a.sftp, 'stat', '/s/missing')).rejects.toMatchObject({ code: NO_SUCH_FILE });
  });

  it('reads with offsets, writes, renames, sets times, removes; uploads land complete', async () => {
    const body = randomBytes(3 * 1024 * 1024 + 17);
    const local = path.join(mkdtempSync(path.join(os.tmpdir(), 'sftp-')), 'up.bin');
    writeFileSync(local, body);
    await call(a.sftp, 'fastPut', local, '/s/up.bin');
    expect(readFileSync(path.join(root, 'up.bin')).equals(body)).toBe(true);
    // ranged read through open/read/close
    const h = await call<Buffer>(a.sftp, 'open', '/s/up.bin', 'r');
    const buf = Buffer.alloc(1000);
    const n = await new Promise<number>((resolve, reject) => a.sftp.read(h, buf, 0, 1000, 2_000_000, (err, bytes) => (err ? reject(err) : resolve(bytes))));
    expect(n).toBe(1000);
    expect(buf.equals(body.subarray(2_000_000, 2_001_000))).toBe(true);
    const tail = Buffer.alloc(100);
    const m = await new Promise<number>((resolve, reject) => a.sftp.read(h, tail, 0, 100, body.length - 17, (err, bytes) => (err ? reject(err) : resolve(bytes))));
    expect(tail.subarray(0, m).equals(body.subarray(body.length - 17))).toBe(true);
    expect((await call<Stats>(a.sftp, 'fstat', h)).size).toBe(body.length);
    // The client took the lengths of the limits@openssh.com answer: writes of 255 KiB, reads of 64 KiB.
    const lengths = a.sftp as unknown as { _maxReadLen: number; _maxWriteLen: number };
    expect([lengths._maxReadLen, lengths._maxWriteLen]).toEqual([READ_LENGTH, MAX_DATA]);
    // A longer read than the limit is answered with MAX_DATA bytes, not with the whole request.
    lengths._maxReadLen = 1 << 20;
    const big = Buffer.alloc(1 << 20);
    const got = await new Promise<number>((resolve, reject) => a.sftp.read(h, big, 0, big.length, 1000, (err, bytes) => (err ? reject(err) : resolve(bytes))));
    lengths._maxReadLen = READ_LENGTH;
    expect(got).toBe(MAX_DATA);
    expect(big.subarray(0, got).equals(body.subarray(1000, 1000 + MAX_DATA))).toBe(true);
    await call(a.sftp, 'close', h);
    const down = path.join(path.dirname(local), 'down.bin');
    await call(a.sftp, 'fastGet', '/s/up.bin', down);
    expect(readFileSync(down).equals(body)).toBe(true);

    await call(a.sftp, 'mkdir', '/s/made');
    expect(statSync(path.join(root, 'made')).isDirectory()).toBe(true);
    await expect(call(a.sftp, 'mkdir', '/s/made')).rejects.toThrow(/exists/);
    await call(a.sftp, 'rename', '/s/up.bin', '/s/made/moved.bin');
    expect(existsSync(path.join(root, 'made', 'moved.bin'))).toBe(true);
    expect(existsSync(path.join(root, 'up.bin'))).toBe(false);
    writeFileSync(path.join(root, 'other.txt'), 'other');
    await expect(call(a.sftp, 'rename', '/s/other.txt', '/s/hello.txt')).rejects.toThrow(/exists/);
    // advertised in the VERSION reply (hardlink is not)
    const exts = (a.sftp as unknown as { _extensions: Record<string, string> })._extensions;
    expect(exts).toEqual({ 'posix-rename@openssh.com': '1', 'statvfs@openssh.com': '2', 'fstatvfs@openssh.com': '2', 'limits@openssh.com': '1' });
    writeFileSync(path.join(root, 'hello2.txt'), 'replaced');
    await call(a.sftp, 'ext_openssh_rename', '/s/other.txt', '/s/hello2.txt');
    expect(readFileSync(path.join(root, 'hello2.txt'), 'utf8')).toBe('other');

    const when = new Date('2020-02-03T04:05:06Z');
    await call(a.sftp, 'utimes', '/s/hello2.txt', when, when);
    expect(statSync(path.join(root, 'hello2.txt')).mtime.toISOString()).toBe(when.toISOString());
    expect((await call<Stats>(a.sftp, 'stat', '/s/hello2.txt')).mtime).toBe(when.getTime() / 1000);

    await expect(call(a.sftp, 'rmdir', '/s/made')).rejects.toThrow(/not empty/);
    await expect(call(a.sftp, 'unlink', '/s/made')).rejects.toThrow(/is a folder/);
    await call(a.sftp, 'unlink', '/s/made/moved.bin');
    await call(a.sftp, 'rmdir', '/s/made');
    await call(a.sftp, 'unlink', '/s/hello2.txt');
    expect(existsSync(path.join(root, 'made'))).toBe(false);
    expect(existsSync(path.join(root, 'hello2.txt'))).toBe(false);
    // an empty upload makes an empty file
    const e = await call<Buffer>(a.sftp, 'open', '/s/empty.txt', 'w');
    await call(a.sftp, 'close', e);
    expect(readFileSync(path.join(root, 'empty.txt')).length).toBe(0);
    rmSync(path.dirname(local), { recursive: true, force: true });
  });

  it('lists a big folder in pages', async () => {
    const big = path.join(root, 'big');
    makeTree(Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${String(i).padStart(4, '0')}.txt`, 'x'])), big);
    const h = await call<Buffer>(a.sftp, 'opendir', '/s/big');
    const pages: number[] = [];
    for (;;) {
      const page = await new Promise<FileEntry[] | false>((resolve, reject) =>
        a.sftp.readdir(h, (err, list) => (err ? ((err as { code?: number }).code === 1 ? resolve(false) : reject(err)) : resolve(list))),
      );
      if (!page) break;
      pages.push(page.length);
    }
    await call(a.sftp, 'close', h);
    expect(pages.reduce((x, y) => x + y, 0)).toBe(1000);
    expect(Math.max(...pages)).toBe(READDIR_PAGE);
    expect(pages.length).toBe(Math.ceil(1000 / READDIR_PAGE));
  });

  it('password rules, hidden entries and the base path hold as on the HTTP API', async () => {
    const w = await open('writer', 'w-pass');
    expect(names(await call<FileEntry[]>(w.sftp, 'readdir', '/s'))).not.toContain('secret.txt');
    expect(names(await call<FileEntry[]>(w.sftp, 'readdir', '/s'))).not.toContain('hidden');
    await expect(call(w.sftp, 'stat', '/s/secret.txt')).rejects.toMatchObject({ code: NO_SUCH_FILE });
    await expect(call(w.sftp, 'open', '/s/secret.txt', 'r')).rejects.toMatchObject({ code: NO_SUCH_FILE });
    await expect(call(w.sftp, 'readdir', '/s/hidden')).rejects.toMatchObject({ code: NO_SUCH_FILE });
    await expect(call(w.sftp, 'open', '/s/hidden/x.txt', 'r')).rejects.toMatchObject({ code: NO_SUCH_FILE });
    // changing a hidden entry is refused whether or not it exists
    await expect(call(w.sftp, 'unlink', '/s/secret.txt')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(w.sftp, 'open', '/s/secret-new.txt', 'w')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    expect(readFileSync(path.join(root, 'secret.txt'), 'utf8')).toBe('SECRET');
    // a password rule: SFTP carries no path password, so the folder is closed to users who need one
    await expect(call(w.sftp, 'readdir', '/s/locked')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(w.sftp, 'open', '/s/locked/in.txt', 'r')).rejects.toMatchObject({ code: PERMISSION_DENIED });

    const b = await open('based', 'b-pass');
    expect(await call(b.sftp, 'realpath', '.')).toBe('/');
    expect(names(await call<FileEntry[]>(b.sftp, 'readdir', '/'))).toEqual(['inner.txt']);
    expect(names(await call<FileEntry[]>(b.sftp, 'readdir', '/../..'))).toEqual(['inner.txt']);
    await expect(call(b.sftp, 'stat', '../hello.txt')).rejects.toMatchObject({ code: NO_SUCH_FILE });
  });

  it('permission bits: 1024 to log in and read, 2048 to change anything', async () => {
    await expect(open('nobits', 'n-pass')).rejects.toThrow(/authentication/i);
    const r = await open('reader', 'r-pass');
    const st = await call<Stats>(r.sftp, 'stat', '/s/hello.txt');
    expect(st.mode & 0o777).toBe(0o444);
    const got = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      r.sftp.createReadStream('/s/hello.txt').on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
    });
    expect(got.toString()).toBe('hello world');
    await expect(call(r.sftp, 'open', '/s/new.txt', 'w')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(r.sftp, 'mkdir', '/s/newdir')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(r.sftp, 'unlink', '/s/hello.txt')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(r.sftp, 'rename', '/s/hello.txt', '/s/h.txt')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(r.sftp, 'utimes', '/s/hello.txt', new Date(0), new Date(0))).rejects.toMatchObject({ code: PERMISSION_DENIED });
    expect(existsSync(path.join(root, 'new.txt'))).toBe(false);
    expect(existsSync(path.join(root, 'hello.txt'))).toBe(true);
    // the write bit alone is not the remove bit
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'norm', password: 'x', permission: FTP_READ | FTP_WRITE | 8 } });
    const n = await open('norm', 'x');
    await call(n.sftp, 'writeFile', '/s/norm.txt', 'norm');
    await expect(call(n.sftp, 'unlink', '/s/norm.txt')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await expect(call(n.sftp, 'rename', '/s/norm.txt', '/s/dir/norm.txt')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    expect(readFileSync(path.join(root, 'norm.txt'), 'utf8')).toBe('norm');
  });

  it('the guest logs in without a password when enabled with bit 1024; password logins can be turned off', async () => {
    await expect(connectSftp(srv.port, { username: 'guest' })).rejects.toThrow(/authentication/i); // disabled
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false, permission: FTP_READ } })).code).toBe(200);
    const g = await connectSftp(srv.port, { username: 'guest' });
    sessions.push(g);
    const seen = names(await call<FileEntry[]>(g.sftp, 'readdir', '/s'));
    expect(seen).toContain('hello.txt');
    expect(seen).not.toContain('secret.txt');
    await expect(call(g.sftp, 'mkdir', '/s/g')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } });

    const save = (v: string) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'sftp_disable_password_login', value: v }] });
    expect((await save('true')).code).toBe(200);
    await expect(open('writer', 'w-pass')).rejects.toThrow(/authentication/i);
    expect((await save('false')).code).toBe(200);
    await open('writer', 'w-pass');
  });

  it('refuses wrong passwords and locks the address out after five failures', async () => {
    await expect(open('writer', 'wrong')).rejects.toThrow(/authentication/i);
    for (let i = 0; i < 5; i++) await expect(open('writer', `wrong${i}`)).rejects.toThrow(/authentication/i);
    await expect(open('writer', 'w-pass')).rejects.toThrow(/authentication/i);
    s.core.limiter.succeed('127.0.0.1');
    const ok = await open('writer', 'w-pass');
    expect(await call(ok.sftp, 'realpath', '.')).toBe('/');
  });

  /** The admin's interrupted uploads (uploads/partials.ts), which a dropped connection leaves. */
  const adminPartials = async () => s.core.repos.uploads.receivingOf((await s.core.repos.users.byUsername('admin'))!.id, 'partial');

  it('a dropped upload leaves no file under its name (its bytes stay the user\'s partial); an old file keeps its content', async () => {
    const tmpDir = path.join(root, '.atrium-tmp');
    for (const target of ['/s/dropped.bin', '/s/hello.txt']) {
      const d = await connectSftp(srv.port, { username: 'admin', password: 'admin-pass-1' });
      const h = await call<Buffer>(d.sftp, 'open', target, 'w');
      await call(d.sftp, 'write', h, randomBytes(256 * 1024), 0, 256 * 1024, 0);
      await call(d.sftp, 'write', h, randomBytes(256 * 1024), 0, 256 * 1024, 256 * 1024);
      d.client.end();
      await waitFor(async () => (await adminPartials()).some((r) => r.path === target && r.received === 512 * 1024), 20_000);
      expect(existsSync(tmpDir) ? readdirSync(tmpDir) : []).toEqual([]);
    }
    for (const r of await adminPartials()) await s.core.uploads.partials.drop(r);
    expect(existsSync(path.join(root, 'dropped.bin'))).toBe(false);
    expect(readFileSync(path.join(root, 'hello.txt'), 'utf8')).toBe('hello world');
  });

  it('writes at any offset: out of order, overlapping rewrites, appends and updates of existing files', async () => {
    const write = (h: Buffer, data: Buffer, at: number) => call(a.sftp, 'write', h, data, 0, data.length, at);
    // out of order from the start, then a rewrite overlapping both halves
    const body = randomBytes(300_000);
    const h = await call<Buffer>(a.sftp, 'open', '/s/ooo.bin', 'w');
    await write(h, body.subarray(100_000), 100_000);
    expect((await adminPartials()).length).toBe(1);
    await write(h, body.subarray(0, 100_000), 0);
    const patch = randomBytes(50_000);
    await write(h, patch, 80_000);
    patch.copy(body, 80_000);
    expect((await call<Stats>(a.sftp, 'fstat', h)).size).toBe(300_000);
    expect(existsSync(path.join(root, 'ooo.bin'))).toBe(false);
    await call(a.sftp, 'close', h);
    expect(readFileSync(path.join(root, 'ooo.bin')).equals(body)).toBe(true);
    expect(await adminPartials()).toEqual([]);

    // in order first, then a gap filled later and a rewrite
    const h2 = await call<Buffer>(a.sftp, 'open', '/s/gap.bin', 'w');
    const parts = [randomBytes(1000), randomBytes(1000), randomBytes(500)];
    await write(h2, parts[0]!, 0);
    await write(h2, parts[2]!, 2000);
    await write(h2, parts[1]!, 1000);
    const fix = randomBytes(10);
    await write(h2, fix, 500);
    await call(a.sftp, 'close', h2);
    const gapped = Buffer.concat(parts);
    fix.copy(gapped, 500);
    expect(readFileSync(path.join(root, 'gap.bin')).equals(gapped)).toBe(true);
    // a rewrite anywhere, also beyond the first MiB (the bytes wait in the partial until close)
    const big = randomBytes(1536 * 1024);
    const h6 = await call<Buffer>(a.sftp, 'open', '/s/big.bin', 'w');
    await write(h6, big, 0);
    const early = randomBytes(10);
    await write(h6, early, 500);
    early.copy(big, 500);
    await write(h6, Buffer.from('tail'), big.length + 10);
    await call(a.sftp, 'close', h6);
    expect(readFileSync(path.join(root, 'big.bin')).equals(Buffer.concat([big, Buffer.alloc(10), Buffer.from('tail')]))).toBe(true);

    // APPEND adds at the end whatever the offset; an open without TRUNC updates in place
    writeFileSync(path.join(root, 'app.txt'), 'abc');
    const h3 = await call<Buffer>(a.sftp, 'open', '/s/app.txt', 'a');
    await write(h3, Buffer.from('def'), 0);
    await write(h3, Buffer.from('ghi'), 0);
    await call(a.sftp, 'close', h3);
    expect(readFileSync(path.join(root, 'app.txt'), 'utf8')).toBe('abcdefghi');
    writeFileSync(path.join(root, 'upd.txt'), '0123456789');
    const h4 = await call<Buffer>(a.sftp, 'open', '/s/upd.txt', 'r+');
    await write(h4, Buffer.from('XY'), 3);
    await write(h4, Buffer.from('END'), 12);
    expect((await call<Stats>(a.sftp, 'fstat', h4)).size).toBe(15);
    await call(a.sftp, 'close', h4);
    expect(readFileSync(path.join(root, 'upd.txt'))).toEqual(Buffer.from('012XY56789\0\0END'));
    const h5 = await call<Buffer>(a.sftp, 'open', '/s/upd.txt', 'r+');
    await call(a.sftp, 'fsetstat', h5, { size: 4 });
    await call(a.sftp, 'close', h5);
    expect(readFileSync(path.join(root, 'upd.txt'), 'utf8')).toBe('012X');
    expect(await adminPartials()).toEqual([]);
    for (const f of ['ooo.bin', 'gap.bin', 'big.bin', 'app.txt', 'upd.txt']) rmSync(path.join(root, f));
  });

  it('a dropped upload written out of order leaves no file and no temporary file; its partial holds both writes', async () => {
    const tmpDir = path.join(root, '.atrium-tmp');
    const d = await connectSftp(srv.port, { username: 'admin', password: 'admin-pass-1' });
    const h = await call<Buffer>(d.sftp, 'open', '/s/spooled.bin', 'w');
    await call(d.sftp, 'write', h, randomBytes(256 * 1024), 0, 256 * 1024, 256 * 1024);
    await call(d.sftp, 'write', h, randomBytes(256 * 1024), 0, 256 * 1024, 0);
    d.client.end();
    await waitFor(async () => (await adminPartials()).some((r) => r.path === '/s/spooled.bin' && r.received === 512 * 1024), 20_000);
    expect(existsSync(tmpDir) ? readdirSync(tmpDir) : []).toEqual([]);
    expect(existsSync(path.join(root, 'spooled.bin'))).toBe(false);
    for (const r of await adminPartials()) await s.core.uploads.partials.drop(r);
  });

  it('statvfs and fstatvfs answer the storage\'s usage (a Local storage: its file system) in blocks of 4 KiB', async () => {
    type Vfs = { f_bsize: number; f_frsize: number; f_blocks: number; f_bfree: number; f_flag: number; f_namemax: number };
    const real = statfsSync(root);
    const blocks = Math.floor((real.blocks * real.bsize) / 4096);
    const st = await call<Vfs>(a.sftp, 'ext_openssh_statvfs', '/s/dir');
    expect(st).toMatchObject({ f_bsize: 4096, f_frsize: 4096, f_blocks: blocks, f_namemax: 255 });
    expect(st.f_bfree).toBeGreaterThan(0);
    const h = await call<Buffer>(a.sftp, 'open', '/s/hello.txt', 'r');
    expect(await call<Vfs>(a.sftp, 'ext_openssh_fstatvfs', h)).toMatchObject({ f_blocks: blocks });
    await call(a.sftp, 'close', h);
    // a user without the write bit sees a read-only file system; hidden paths are not found
    const r = await open('reader', 'r-pass');
    await expect(call(r.sftp, 'ext_openssh_statvfs', '/s/secret.txt')).rejects.toMatchObject({ code: NO_SUCH_FILE });
    expect((await call<Vfs>(r.sftp, 'ext_openssh_statvfs', '/s')).f_flag & 1).toBe(1);
    expect(st.f_flag & 1).toBe(0);
  });

  it('public-key login with a key registered through /api/me/sshkey/add updates last_used_time', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sftp-key-'));
    const keyFile = path.join(dir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const token = await s.login('writer', 'w-pass');
    const added = await s.api('POST', '/api/me/sshkey/add', { token, body: { title: 'laptop', key: readFileSync(`${keyFile}.pub`, 'utf8') } });
    expect(added.code).toBe(200);
    const before = (await s.api('GET', '/api/me/sshkey/list', { token })).data.content[0].last_used_time;
    await new Promise((r) => setTimeout(r, 20));
    await expect(connectSftp(srv.port, { username: 'writer' })).rejects.toThrow(/authentication/i); // no password, no key
    const sess = await connectSftp(srv.port, { username: 'writer', privateKey: readFileSync(keyFile) });
    sessions.push(sess);
    expect(names(await call<FileEntry[]>(sess.sftp, 'readdir', '/s/dir'))).toEqual(['inner.txt']);
    const after = (await s.api('GET', '/api/me/sshkey/list', { token })).data.content[0].last_used_time;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
    // the key is the writer's only: another user can not log in with it
    await expect(connectSftp(srv.port, { username: 'reader', privateKey: readFileSync(keyFile) })).rejects.toThrow(/authentication/i);
    rmSync(dir, { recursive: true, force: true });
  });
});
