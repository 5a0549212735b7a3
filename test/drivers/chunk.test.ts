import { randomBytes, createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { localOnNextStart } from './server-hook.js';

// The suite's own server gets the Local storage the chunks are stored in (see server-hook.ts).
vi.mock('../helpers/server.js', async (importOriginal) => (await import('./server-hook.js')).withStartHook(await importOriginal()));

const PREFIX = '[openlist_chunk]';

/** The bytes of a file as the chunk layout holds it on disk: a plain file, or its parts joined. */
function readChunked(root: string, rel: string, ext = ''): Buffer | undefined {
  const full = path.join(root, rel);
  if (existsSync(full) && statSync(full).isFile()) return readFileSync(full);
  const folder = path.join(path.dirname(full), PREFIX + path.basename(full));
  if (!existsSync(folder)) return undefined;
  const parts: Buffer[] = [];
  for (let i = 0; existsSync(path.join(folder, `${i}${ext}`)); i++) parts.push(readFileSync(path.join(folder, `${i}${ext}`)));
  return Buffer.concat(parts);
}

driverConformance('Chunk over a Local folder (1 MiB parts)', async () => {
  const { base, served } = localOnNextStart('chunk', '/parts');
  return {
    storage: { driver: 'Chunk', addition: { remote_path: '/parts', part_size: 1024 * 1024 } },
    peerRead: async (rel) => readChunked(served, rel),
    outsideMarker: 'outside-marker.txt',
    teardown: async () => rmSync(base, { recursive: true, force: true }),
  };
});

describe('Chunk driver', () => {
  let s: TestServer;
  let admin: string;
  let disk: string;
  const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
  const put = async (p: string, body: Buffer, headers: Record<string, string> = {}) => {
    const res = await s.inject({
      method: 'PUT',
      url: '/api/fs/put',
      payload: body,
      headers: { authorization: admin, 'file-path': encodeURIComponent(p), 'content-type': 'application/octet-stream', ...headers },
    });
    return res.json() as { code: number; message: string };
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    disk = mkdtempSync(path.join(os.tmpdir(), 'atrium-chunk-'));
    expect((await post('/api/admin/storage/create', localStorage('/disk', disk))).code).toBe(200);
    await mount(s, admin, '/ck', 'Chunk', { remote_path: '/disk', part_size: 1000, custom_ext: '.part' });
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(disk, { recursive: true, force: true });
  });

  const data = randomBytes(4500);

  it('stores a file as OpenList lays it out: numbered parts with custom_ext and hash markers', async () => {
    const sha1 = createHash('sha1').update(data).digest('hex');
    expect((await put('/ck/dir/big.bin', data, { 'x-file-sha1': sha1 })).code).toBe(200);
    const folder = path.join(disk, 'dir', `${PREFIX}big.bin`);
    const md5 = createHash('md5').update(data).digest('hex');
    expect(readdirSync(folder).sort()).toEqual(['0.part', '1.part', '2.part', '3.part', '4.part', `hash_md5_${md5}.part`, `hash_sha1_${sha1}.part`].sort());
    expect(readdirSync(folder).filter((n) => /^\d/.test(n)).map((n) => statSync(path.join(folder, n)).size)).toEqual([1000, 1000, 1000, 1000, 500]);
    expect(readChunked(disk, 'dir/big.bin', '.part')!.equals(data)).toBe(true);
    const got = await post('/api/fs/get', { path: '/ck/dir/big.bin' });
    expect(got.data).toMatchObject({ name: 'big.bin', size: 4500, is_dir: false });
    expect(JSON.parse(got.data.hashinfo)).toMatchObject({ md5, sha1 });
    expect(await names(s, admin, '/ck/dir')).toEqual(['big.bin']);
  });

  it('serves ranges that span parts', async () => {
    for (const [a, b] of [[0, 0], [999, 1000], [10, 3990], [2000, 2999], [4499, 4499], [1500, 4499]] as const) {
      const r = await download(s, '/ck/dir/big.bin', `bytes=${a}-${b}`);
      expect(r.status).toBe(206);
      expect(r.body.equals(data.subarray(a, b + 1)), `${a}-${b}`).toBe(true);
    }
    expect((await download(s, '/ck/dir/big.bin')).body.equals(data)).toBe(true);
  });

  it('reads layouts written by others: a file of exactly one part, an empty file, plain files', async () => {
    makeTree({ [`${PREFIX}one.txt/0.part`]: 'x'.repeat(1000), [`${PREFIX}empty.txt/0.part`]: '', 'plain.txt': 'plain' }, disk);
    expect(await names(s, admin, '/ck')).toEqual(['dir', 'empty.txt', 'one.txt', 'plain.txt']);
    expect((await download(s, '/ck/one.txt')).body.toString()).toBe('x'.repeat(1000));
    expect((await download(s, '/ck/empty.txt')).body.length).toBe(0);
    expect((await download(s, '/ck/plain.txt')).body.toString()).toBe('plain');
  });

  it('refuses to read a file with a missing part', async () => {
    makeTree({ [`${PREFIX}holey.bin/0.part`]: 'a'.repeat(1000), [`${PREFIX}holey.bin/2.part`]: 'c' }, disk);
    const r = await download(s, '/ck/holey.bin');
    expect(r.body.toString()).toMatch(/chunk part\[1\] are missing/);
  });

  it('renames, moves, copies and removes every part', async () => {
    expect((await post('/api/fs/rename', { path: '/ck/dir/big.bin', name: 'renamed.bin' })).code).toBe(200);
    expect(existsSync(path.join(disk, 'dir', `${PREFIX}big.bin`))).toBe(false);
    expect(readChunked(disk, 'dir/renamed.bin', '.part')!.equals(data)).toBe(true);
    expect((await post('/api/fs/mkdir', { path: '/ck/other' })).code).toBe(200);
    expect((await post('/api/fs/move', { src_dir: '/ck/dir', dst_dir: '/ck/other', names: ['renamed.bin'] })).code).toBe(200);
    expect(readChunked(disk, 'other/renamed.bin', '.part')!.equals(data)).toBe(true);
    expect(readdirSync(path.join(disk, 'dir'))).toEqual([]);
    const c = await post('/api/fs/copy', { src_dir: '/ck/other', dst_dir: '/ck/dir', names: ['renamed.bin'] });
    expect(c.code, c.message).toBe(200);
    for (let i = 0; i < 100 && !readChunked(disk, 'dir/renamed.bin', '.part')?.equals(data); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readChunked(disk, 'dir/renamed.bin', '.part')!.equals(data)).toBe(true);
    expect((await post('/api/fs/remove', { dir: '/ck/other', names: ['renamed.bin'] })).code).toBe(200);
    expect(readdirSync(path.join(disk, 'other'))).toEqual([]);
  });

  it('replaces a chunked file only once the new one is whole; a short body leaves the old parts', async () => {
    const short = await s.inject({
      method: 'PUT',
      url: '/api/fs/put',
      payload: Readable.from([randomBytes(2500)]),
      headers: { authorization: admin, 'file-path': encodeURIComponent('/ck/dir/renamed.bin'), 'x-file-size': '3000', 'content-type': 'application/octet-stream' },
    });
    expect(short.json().code).not.toBe(200);
    expect(readChunked(disk, 'dir/renamed.bin', '.part')!.equals(data)).toBe(true);
    expect(readdirSync(path.join(disk, 'dir'))).toEqual([`${PREFIX}renamed.bin`]);
    const next = randomBytes(1200);
    expect((await put('/ck/dir/renamed.bin', next)).code).toBe(200);
    expect(readChunked(disk, 'dir/renamed.bin', '.part')!.equals(next)).toBe(true);
  });

  it('keeps small files whole with chunk_large_file_only', async () => {
    await mount(s, admin, '/ck2', 'Chunk', { remote_path: '/disk', part_size: 1000, chunk_large_file_only: true, chunk_prefix: '[c]' });
    expect((await put('/ck2/small.txt', Buffer.from('small'))).code).toBe(200);
    expect(readFileSync(path.join(disk, 'small.txt'), 'utf8')).toBe('small');
    expect((await put('/ck2/large.bin', data)).code).toBe(200);
    expect(readdirSync(path.join(disk, '[c]large.bin')).filter((n) => /^\d+$/.test(n)).sort()).toEqual(['0', '1', '2', '3', '4']);
    expect((await download(s, '/ck2/large.bin', 'bytes=900-2100')).body.equals(data.subarray(900, 2101))).toBe(true);
  });

  it('refuses a bad part size and a remote path inside itself', async () => {
    const zero = await post('/api/admin/storage/create', storageRow('/bad', 'Chunk', { remote_path: '/disk', part_size: 0 }));
    expect(zero.message).toMatch(/part size must be positive/);
    const self = await post('/api/admin/storage/create', storageRow('/self', 'Chunk', { remote_path: '/self/x', part_size: 10 }));
    expect(self.message).toMatch(/must lie outside/);
    mkdirSync(path.join(disk, 'unused'), { recursive: true });
  });

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=Chunk', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual([
      'remote_path', 'part_size', 'chunk_large_file_only', 'chunk_prefix', 'custom_ext', 'store_hash', 'num_list_workers', 'thumbnail', 'show_hidden',
    ]);
    const byName = Object.fromEntries(info.data.additional.map((i: { name: string }) => [i.name, i]));
    expect(byName.chunk_prefix.default).toBe(PREFIX);
    expect(byName.num_list_workers).toMatchObject({ type: 'number', default: '5' });
    expect(info.data.config).toMatchObject({ name: 'Chunk', only_proxy: true });
  });
});
