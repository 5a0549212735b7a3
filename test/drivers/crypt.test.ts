import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decryptedSize, encryptedSize } from '../../src/drivers/crypt/content.js';
import { Eme } from '../../src/drivers/crypt/eme.js';
import { NameCipher } from '../../src/drivers/crypt/names.js';
import { BACKENDS } from '../helpers/backends.js';
import { hasProgram } from '../helpers/daemons.js';
import { startFileServer } from '../helpers/file-server.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { download, mount, names } from './mount.js';
import { writeTree } from './peer-files.js';
import { mountLocalsOnNextStart } from './server-hook.js';

// The suite's own server gets the Local storage the crypt storage writes into (see server-hook.ts).
vi.mock('../helpers/server.js', async (importOriginal) => (await import('./server-hook.js')).withStartHook(await importOriginal()));

const run = promisify(execFile);
const HAS_RCLONE = hasProgram('rclone');
if (!HAS_RCLONE) {
  if (process.env.CI) throw new Error('CI needs rclone (.ci/packages.sh installs it)');
  console.warn('\n*** SKIPPING Crypt tests against rclone: rclone is not installed ***\n');
}

describe('crypt primitives', () => {
  it('sizes follow the 32-byte header and 16 bytes per 64 KiB block', () => {
    for (const n of [0, 1, 65535, 65536, 65537, 3 * 65536, 200_000]) expect(decryptedSize(encryptedSize(n))).toBe(n);
    expect(encryptedSize(0)).toBe(32);
    expect(encryptedSize(65536)).toBe(32 + 65552);
    expect(decryptedSize(31)).toBe(-1);
    expect(decryptedSize(32 + 10)).toBe(-1);
  });

  it('EME round-trips and changes every block when one input byte changes', () => {
    const eme = new Eme(randomBytes(32));
    const tweak = randomBytes(16);
    const data = randomBytes(64);
    const c = eme.encrypt(tweak, data);
    expect(eme.decrypt(tweak, c).equals(data)).toBe(true);
    const changed = Buffer.from(data);
    changed[63] = changed[63]! ^ 1;
    const c2 = eme.encrypt(tweak, changed);
    for (let i = 0; i < 4; i++) expect(c.subarray(i * 16, i * 16 + 16).equals(c2.subarray(i * 16, i * 16 + 16))).toBe(false);
  });

  it('refuses names it did not make', () => {
    const n = new NameCipher('standard', randomBytes(32), randomBytes(16), 'base32', '.bin');
    expect(n.decryptSegment(n.encryptSegment('a name'))).toBe('a name');
    expect(() => n.decryptSegment('plainname')).toThrow();
    const off = new NameCipher('off', randomBytes(32), randomBytes(16), 'base32', '.bin');
    expect(off.encryptFileName('x.txt')).toBe('x.txt.bin');
    expect(() => off.decryptFileName('x.txt')).toThrow();
  });
});

/** One rclone crypt configuration and the matching Crypt storage options. */
interface Mode {
  label: string;
  rclone: Record<string, string>;
  addition: Record<string, unknown>;
}

const MODES: Mode[] = [
  {
    label: 'standard names, base32, encrypted folders, second password',
    rclone: { FILENAME_ENCRYPTION: 'standard', DIRECTORY_NAME_ENCRYPTION: 'true', FILENAME_ENCODING: 'base32', PASSWORD2: 'pepper' },
    addition: { filename_encryption: 'standard', directory_name_encryption: 'true', filename_encoding: 'base32', salt: 'pepper' },
  },
  {
    label: 'standard names, base64, plain folders, default salt',
    rclone: { FILENAME_ENCRYPTION: 'standard', DIRECTORY_NAME_ENCRYPTION: 'false', FILENAME_ENCODING: 'base64' },
    addition: { filename_encryption: 'standard', directory_name_encryption: 'false', filename_encoding: 'base64' },
  },
  {
    label: 'obfuscated names',
    rclone: { FILENAME_ENCRYPTION: 'obfuscate', DIRECTORY_NAME_ENCRYPTION: 'true' },
    addition: { filename_encryption: 'obfuscate', directory_name_encryption: 'true' },
  },
  {
    label: 'names off (.bin suffix)',
    rclone: { FILENAME_ENCRYPTION: 'off' },
    addition: { filename_encryption: 'off', directory_name_encryption: 'false', encrypted_suffix: '.bin' },
  },
];

const BIG = randomBytes(3 * 65536 + 12345);
const PLAIN: Record<string, Buffer> = {
  'big.bin': BIG,
  'empty.txt': Buffer.alloc(0),
  'exact block.dat': randomBytes(65536),
  'Sub Dir/ünïcödé file!.txt': Buffer.from('unicode content'),
  'Sub Dir/deeper/9 lives [x] (y).md': Buffer.from('odd names'),
};

describe.skipIf(!HAS_RCLONE)('Crypt driver against rclone crypt', () => {
  let s: TestServer;
  let admin: string;
  let work: string;
  let password: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    work = mkdtempSync(path.join(os.tmpdir(), 'atrium-crypt-'));
    const plain = path.join(work, 'plain');
    for (const [rel, data] of Object.entries(PLAIN)) {
      mkdirSync(path.dirname(path.join(plain, rel)), { recursive: true });
      writeFileSync(path.join(plain, rel), data);
    }
    password = (await run('rclone', ['obscure', 'correct horse'])).stdout.trim();
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const obscuredCache = new Map<string, string>();
  const obscured = async (plain: string) => {
    if (!obscuredCache.has(plain)) obscuredCache.set(plain, (await run('rclone', ['obscure', plain])).stdout.trim());
    return obscuredCache.get(plain)!;
  };

  /** rclone with an env-var crypt remote `C:` over `dir`. */
  const rclone = async (mode: Mode, dir: string, ...args: string[]) => {
    const env: Record<string, string> = { ...process.env, RCLONE_CONFIG_C_TYPE: 'crypt', RCLONE_CONFIG_C_REMOTE: dir, RCLONE_CONFIG_C_PASSWORD: password };
    for (const [k, v] of Object.entries(mode.rclone)) env[`RCLONE_CONFIG_C_${k}`] = k === 'PASSWORD2' ? await obscured(v) : v;
    const out = await run('rclone', ['--config', '/dev/null', ...args], { env, encoding: 'buffer', maxBuffer: 64 << 20 });
    return out.stdout as Buffer;
  };

  describe.each(MODES.map((m, i) => ({ ...m, i })))('$label', (mode) => {
    let enc: string;
    const sec = `/sec${mode.i}`;

    beforeAll(async () => {
      enc = path.join(work, `enc${mode.i}`);
      mkdirSync(enc);
      await rclone(mode, enc, 'copy', path.join(work, 'plain'), 'C:');
      const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage(`/enc${mode.i}`, enc) });
      expect(r.code, r.message).toBe(200);
      // The password is given plain here; the second one (when any) obscured, as the original stores it.
      const addition: Record<string, unknown> = { ...mode.addition, remote_path: `/enc${mode.i}`, password: 'correct horse' };
      if (typeof addition.salt === 'string') addition.salt = `___Obfuscated___${await obscured(addition.salt)}`;
      await mount(s, admin, sec, 'Crypt', addition);
    }, 60_000);

    it('lists what rclone encrypted under the plain names and sizes', async () => {
      expect(readdirSync(enc)).not.toContain('big.bin');
      const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: sec, refresh: true } });
      expect(listed.code, listed.message).toBe(200);
      const byName = Object.fromEntries(listed.data.content.map((o: any) => [o.name, o]));
      expect(Object.keys(byName).sort()).toEqual(['Sub Dir', 'big.bin', 'empty.txt', 'exact block.dat']);
      expect(byName['big.bin'].size).toBe(BIG.length);
      expect(byName['Sub Dir'].is_dir).toBe(true);
      expect(await names(s, admin, `${sec}/Sub Dir`)).toEqual(['deeper', 'ünïcödé file!.txt']);
      expect(await names(s, admin, `${sec}/Sub Dir/deeper`)).toEqual(['9 lives [x] (y).md']);
    });

    it('reads rclone-encrypted files byte-exact, ranges across block boundaries included', async () => {
      expect((await download(s, `${sec}/big.bin`)).body.equals(BIG)).toBe(true);
      expect((await download(s, `${sec}/empty.txt`)).body.length).toBe(0);
      expect((await download(s, `${sec}/exact block.dat`)).body.equals(PLAIN['exact block.dat']!)).toBe(true);
      expect((await download(s, `${sec}/Sub Dir/ünïcödé file!.txt`)).body.toString()).toBe('unicode content');
      for (const [a, b] of [[65530, 65545], [0, 0], [65536, 65536], [100_000, 3 * 65536 + 5], [BIG.length - 7, BIG.length - 1], [65535, 2 * 65536]] as const) {
        const r = await download(s, `${sec}/big.bin`, `bytes=${a}-${b}`);
        expect(r.status).toBe(206);
        expect(r.body.equals(BIG.subarray(a, b + 1)), `range ${a}-${b}`).toBe(true);
      }
      const tail = await download(s, `${sec}/big.bin`, 'bytes=-100');
      expect(tail.body.equals(BIG.subarray(BIG.length - 100))).toBe(true);
    });

    it('writes files that rclone decrypts byte-exact, names included', async () => {
      const data = randomBytes(2 * 65536 + 77);
      const put = await s.inject({
        method: 'PUT',
        url: '/api/fs/put',
        payload: data,
        headers: { authorization: admin, 'file-path': encodeURIComponent(`${sec}/from atrium/ünï 名前.bin`), 'content-type': 'application/octet-stream' },
      });
      expect(put.json().code, put.json().message).toBe(200);
      expect((await rclone(mode, enc, 'cat', 'C:from atrium/ünï 名前.bin')).equals(data)).toBe(true);
      const ls = (await rclone(mode, enc, 'ls', 'C:from atrium')).toString();
      expect(ls).toContain(`${data.length} ünï 名前.bin`);
      expect((await download(s, `${sec}/from atrium/ünï 名前.bin`, 'bytes=65000-140000')).body.equals(data.subarray(65000, 140001))).toBe(true);

      // An empty file and one of unknown size (chunked body).
      const empty = await s.inject({
        method: 'PUT',
        url: '/api/fs/put',
        payload: '',
        headers: { authorization: admin, 'file-path': encodeURIComponent(`${sec}/from atrium/empty`), 'content-type': 'application/octet-stream', 'content-length': '0' },
      });
      expect(empty.json().code, empty.json().message).toBe(200);
      expect((await rclone(mode, enc, 'cat', 'C:from atrium/empty')).length).toBe(0);
      // A stream of unknown size (as WebDAV and SFTP uploads are).
      const chunked = randomBytes(65536 + 3);
      await s.core.writer.put(`${sec}/from atrium/chunked`, { name: 'chunked', size: -1, stream: Readable.from([chunked.subarray(0, 1000), chunked.subarray(1000)]) }, { overwrite: true });
      expect((await rclone(mode, enc, 'cat', 'C:from atrium/chunked')).equals(chunked)).toBe(true);
    });

    it('mkdir, rename, move, copy and remove show in rclone', async () => {
      const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
      expect((await post('/api/fs/mkdir', { path: `${sec}/made/inner` })).code).toBe(200);
      expect((await post('/api/fs/rename', { path: `${sec}/empty.txt`, name: 'renamed.txt' })).code).toBe(200);
      expect((await post('/api/fs/move', { src_dir: `${sec}/Sub Dir/deeper`, dst_dir: `${sec}/made`, names: ['9 lives [x] (y).md'] })).code).toBe(200);
      expect((await post('/api/fs/copy', { src_dir: sec, dst_dir: `${sec}/made/inner`, names: ['exact block.dat'] })).code).toBe(200);
      expect((await post('/api/fs/rename', { path: `${sec}/made/inner`, name: 'inner2' })).code).toBe(200);
      expect((await post('/api/fs/remove', { dir: `${sec}/Sub Dir`, names: ['deeper'] })).code).toBe(200);
      const lsf = (await rclone(mode, enc, 'lsf', '-R', 'C:')).toString().split('\n').filter(Boolean).sort();
      expect(lsf).toContain('renamed.txt');
      expect(lsf).not.toContain('empty.txt');
      expect(lsf).toContain('made/9 lives [x] (y).md');
      expect(lsf).toContain('made/inner2/exact block.dat');
      expect(lsf).not.toContain('Sub Dir/deeper/');
      expect((await rclone(mode, enc, 'cat', 'C:made/inner2/exact block.dat')).equals(PLAIN['exact block.dat']!)).toBe(true);
      const missing = await post('/api/fs/get', { path: `${sec}/nope.txt` });
      expect(missing.message).toMatch(/object not found/);
    });
  });

  it('over a remote of URLs, a range fetches the header and only the blocks it covers', async () => {
    const encFile = path.join(work, 'enc3', 'big.bin.bin');
    const files = await startFileServer({ files: { '/big.bin.bin': { file: encFile } } });
    try {
      const size = statSync(encFile).size;
      // The URLs are on loopback: the SSRF guard refuses them unless the admin allows it.
      expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'url_fetch_allow_private', value: 'true' }] })).code).toBe(200);
      await mount(s, admin, '/urltree', 'UrlTree', { url_structure: `big.bin.bin:${size}:${files.base}/big.bin.bin` });
      await mount(s, admin, '/overurl', 'Crypt', { ...MODES[3]!.addition, remote_path: '/urltree', password: 'correct horse' });
      expect(await names(s, admin, '/overurl')).toEqual(['big.bin']);
      const r = await download(s, '/overurl/big.bin', 'bytes=140000-140010');
      expect(r.status).toBe(206);
      expect(r.body.equals(BIG.subarray(140000, 140011))).toBe(true);
      const block = 65536 + 16;
      expect(files.ranges.get('/big.bin.bin')).toEqual(['bytes=0-31', `bytes=${32 + 2 * block}-${32 + 3 * block - 1}`]);
    } finally {
      await files.close();
    }
  });

  it('serves pre-generated thumbnails from .thumbnails and hides that folder', async () => {
    const enc = path.join(work, 'thumbs');
    mkdirSync(enc);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/thumbenc', enc) })).code).toBe(200);
    await mount(s, admin, '/thumbs', 'Crypt', { filename_encryption: 'standard', directory_name_encryption: 'true', remote_path: '/thumbenc', password: 'pw', thumbnail: true });
    const webp = randomBytes(500);
    for (const [p, body] of [['/thumbs/pic.jpg', randomBytes(100)], ['/thumbs/.thumbnails/pic.jpg.webp', webp]] as const) {
      const r = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: body, headers: { authorization: admin, 'file-path': encodeURIComponent(p), 'content-type': 'application/octet-stream' } });
      expect(r.json().code).toBe(200);
    }
    const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/thumbs', refresh: true } });
    expect(listed.data.content.map((o: any) => o.name)).toEqual(['pic.jpg']);
    const thumb = new URL(listed.data.content[0].thumb, 'http://x');
    expect(thumb.pathname).toBe('/d/thumbs/pic.jpg');
    const res = await s.inject({ method: 'GET', url: `${thumb.pathname}${thumb.search}` });
    expect(res.statusCode, res.body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').slice(-300)).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    expect(res.rawPayload.equals(webp)).toBe(true);
  });

  it('stores the passwords obscured and refuses a wrong password byte by byte', async () => {
    const list = await s.api('GET', '/api/admin/storage/list', { token: admin });
    const crypt = list.data.content.find((r: any) => r.mount_path === '/sec0');
    const addition = JSON.parse(crypt.addition);
    expect(addition.password).toMatch(/^___Obfuscated___/);
    expect(addition.password).not.toContain('correct horse');
    await mount(s, admin, '/wrong', 'Crypt', { ...MODES[3]!.addition, remote_path: '/enc3', password: 'wrong' });
    expect(await names(s, admin, '/wrong')).toContain('big.bin');
    const r = await download(s, '/wrong/big.bin');
    expect(r.body.equals(BIG)).toBe(false);
    expect(r.body.length).toBeLessThan(BIG.length);
  });
});

// The suite through a Crypt storage; its peer is rclone itself: seeds are encrypted by
// `rclone copy` and every byte the suite checks "on the peer" is decrypted by `rclone cat`.
driverConformance(
  'Crypt (checked with rclone)',
  async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'atrium-conf-crypt-'));
    const enc = path.join(base, 'enc');
    mkdirSync(enc);
    const env = {
      ...process.env,
      RCLONE_CONFIG_C_TYPE: 'crypt',
      RCLONE_CONFIG_C_REMOTE: enc,
      RCLONE_CONFIG_C_PASSWORD: (await run('rclone', ['obscure', 'conformance pw'])).stdout.trim(),
      RCLONE_CONFIG_C_FILENAME_ENCRYPTION: 'standard',
      RCLONE_CONFIG_C_DIRECTORY_NAME_ENCRYPTION: 'true',
      RCLONE_CONFIG_C_FILENAME_ENCODING: 'base64',
    };
    const rclone = (...args: string[]) => run('rclone', ['--config', '/dev/null', ...args], { env, encoding: 'buffer', maxBuffer: 64 << 20 });
    mountLocalsOnNextStart({ '/vault': enc });
    let seeds = 0;
    return {
      storage: {
        driver: 'Crypt',
        addition: { remote_path: '/vault', password: 'conformance pw', filename_encryption: 'standard', directory_name_encryption: 'true', filename_encoding: 'base64' },
      },
      seed: async (tree) => {
        const plain = path.join(base, `plain${seeds++}`);
        writeTree(plain, tree);
        await rclone('copy', plain, 'C:');
      },
      peerRead: async (rel) => rclone('cat', `C:${rel}`).then((r) => r.stdout as Buffer, () => undefined),
      teardown: async () => rmSync(base, { recursive: true, force: true }),
    };
  },
  HAS_RCLONE ? undefined : 'rclone is not installed',
);
