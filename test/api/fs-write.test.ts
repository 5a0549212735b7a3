import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { chunkedPut, interruptedPut, listenLoopback } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor as poll } from '../helpers/wait.js';

const waitFor = (cond: () => boolean | Promise<boolean>, ms = 10_000) => poll(cond, ms, 25);

describe.each(BACKENDS)('writing API on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let a: string; // storage /a
  let b: string; // storage /b
  let base: string;
  const post = (url: string, body: unknown, token = admin) => s.api('POST', url, { token, body });
  const put = (filePath: string, body: string | Buffer, headers: Record<string, string> = {}, token = admin) =>
    s.inject({ method: 'PUT', url: '/api/fs/put', payload: body, headers: { authorization: token, 'file-path': encodeURIComponent(filePath), 'content-type': 'application/octet-stream', ...headers } });

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    a = makeTree({ 'x.txt': 'xx', 'dir/in.txt': 'in', 'dir/sub/deep.txt': 'deep' });
    b = makeTree({});
    for (const [mp, root] of [['/a', a], ['/b', b]] as const) {
      const r = await post('/api/admin/storage/create', localStorage(mp, root, { cache_expiration: 30 }));
      expect(r.code, r.message).toBe(200);
    }
    base = await listenLoopback(s.app);
  });
  afterAll(async () => {
    await s.destroy();
    for (const d of [a, b]) rmSync(d, { recursive: true, force: true });
  });

  describe('uploads', () => {
    it('PUT /api/fs/put streams the body to the file, creating parents, with Last-Modified', async () => {
      const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256));
      const res = await put('/a/up/nested/ünï code.bin', body, { 'last-modified': '1700000000000' });
      expect(res.json()).toEqual({ code: 200, message: 'success', data: null });
      const file = path.join(a, 'up/nested/ünï code.bin');
      expect(readFileSync(file).equals(body)).toBe(true);
      expect(statSync(file).mtimeMs).toBe(1700000000000);
      // the temporary folder is gone with the last upload: nothing left in the storage
      expect(existsSync(path.join(a, '.atrium-tmp'))).toBe(false);
      const listed = await post('/api/fs/list', { path: '/a/up/nested' });
      expect(listed.data.content.map((o: any) => o.name)).toEqual(['ünï code.bin']);
    });

    it('an upload drops only the listing of its own folder: the cached listings of other folders stay', async () => {
      const cache = (s.core.fs as unknown as { cache: { get(id: number, p: string): unknown } }).cache;
      const storageId = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: { mount_path: string }) => x.mount_path === '/a').id as number;
      for (const p of ['/a', '/a/dir', '/a/dir/sub']) expect((await post('/api/fs/list', { path: p })).code).toBe(200);
      for (const p of ['/', '/dir', '/dir/sub']) expect(cache.get(storageId, p), p).toBeDefined();
      // Into the storage's root (whose parent is itself) and into an existing folder: neither makes a folder.
      expect((await put('/a/sibling.txt', 'one')).json().code).toBe(200);
      expect((await put('/a/dir/sub/next.txt', 'two')).json().code).toBe(200);
      expect(cache.get(storageId, '/dir'), 'a sibling folder').toBeDefined();
      expect(cache.get(storageId, '/'), 'the folder written to').toBeUndefined();
      expect(cache.get(storageId, '/dir/sub'), 'the folder written to').toBeUndefined();
      const listed = await post('/api/fs/list', { path: '/a/dir/sub' });
      expect(listed.data.content.map((o: { name: string }) => o.name)).toContain('next.txt');
      // A new folder drops the listing that gains it.
      expect((await post('/api/fs/list', { path: '/a/dir' })).code).toBe(200);
      expect((await put('/a/dir/made/deeper/file.txt', 'three')).json().code).toBe(200);
      expect(cache.get(storageId, '/dir')).toBeUndefined();
      expect((await post('/api/fs/list', { path: '/a/dir' })).data.content.map((o: { name: string }) => o.name)).toContain('made');
    });

    it('replaces an existing file by default, refuses with Overwrite: false, and listings show the change at once', async () => {
      expect((await put('/a/over.txt', 'one')).json().code).toBe(200);
      expect((await post('/api/fs/list', { path: '/a' })).data.content.find((o: any) => o.name === 'over.txt').size).toBe(3);
      expect((await put('/a/over.txt', 'three')).json().code).toBe(200);
      expect((await post('/api/fs/list', { path: '/a' })).data.content.find((o: any) => o.name === 'over.txt').size).toBe(5);
      expect((await put('/a/over.txt', 'zz', { overwrite: 'false' })).json()).toEqual({ code: 403, message: 'file exists', data: null });
      expect(readFileSync(path.join(a, 'over.txt'), 'utf8')).toBe('three');
    });

    it('PUT /api/fs/form takes the multipart part named file', async () => {
      const form = new FormData();
      form.append('file', new Blob(['form body']), 'ignored.txt');
      const res = await fetch(`${base}/api/fs/form`, { method: 'PUT', headers: { authorization: admin, 'file-path': encodeURIComponent('/a/form.txt') }, body: form });
      expect(await res.json()).toEqual({ code: 200, message: 'success', data: null });
      expect(readFileSync(path.join(a, 'form.txt'), 'utf8')).toBe('form body');
      const wrong = new FormData();
      wrong.append('other', new Blob(['x']), 'x.txt');
      const bad = await fetch(`${base}/api/fs/form`, { method: 'PUT', headers: { authorization: admin, 'file-path': encodeURIComponent('/a/wrong.txt') }, body: wrong });
      expect((await bad.json()).message).toBe('the multipart body has no part named file');
      expect(existsSync(path.join(a, 'wrong.txt'))).toBe(false);
    });

    it('As-Task answers the queued task and stores the file when the task ends', async () => {
      const res = (await put('/b/task/t.txt', 'tasked', { 'as-task': 'true' })).json();
      expect(res.code).toBe(200);
      expect(res.data.task).toMatchObject({ state: 0, status: 'uploading', name: 'upload t.txt to [/b](/task)', creator: 'admin', error: '' });
      const task = s.core.tasks.get(res.data.task.id)!;
      await task.done;
      expect(task.state).toBe(2);
      expect(readFileSync(path.join(b, 'task/t.txt'), 'utf8')).toBe('tasked');
      await waitFor(() => readdirSync(path.join(s.core.config.temp_dir, 'uploads')).length === 0);
    });

    it('checks declared hashes: a mismatch stores nothing', async () => {
      const good = createHash('md5').update('hashed').digest('hex');
      expect((await put('/a/h1.txt', 'hashed', { 'x-file-md5': good })).json().code).toBe(200);
      const bad = await put('/a/h2.txt', 'hashed', { 'x-file-sha256': 'ab'.repeat(32) });
      expect(bad.json().code).toBe(400);
      expect(bad.json().message).toMatch(/^sha256 mismatch/);
      expect(existsSync(path.join(a, 'h2.txt'))).toBe(false);
    });

    it('refuses bad upload headers with clear errors', async () => {
      const noPath = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'x', headers: { authorization: admin } });
      expect(noPath.json()).toEqual({ code: 400, message: 'File-Path is required', data: null });
      expect((await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'x', headers: { authorization: admin, 'file-path': '/a/%E0%A4%A' } })).json().message).toBe(
        'File-Path is not a valid URL-encoded path',
      );
      expect((await put('/a/../../etc/x', 'x')).json()).toMatchObject({ code: 403, message: 'access using relative path is not allowed' });
      expect((await put('/a/dir', 'x')).json()).toMatchObject({ code: 403, message: 'file [dir] exists' });
      expect((await put(`/a/${'n'.repeat(256)}`, 'x')).json().message).toBe('name is longer than 255 bytes');
      const chunked = await chunkedPut(base, '/api/fs/put', { authorization: admin, 'file-path': encodeURIComponent('/a/chunked.txt') }, Buffer.from('abc'));
      expect(chunked.json).toEqual({ code: 400, message: 'Content-Length is required', data: null });
      const sized = await chunkedPut(base, '/api/fs/put', { authorization: admin, 'file-path': encodeURIComponent('/a/sized.txt'), 'x-file-size': '10' }, Buffer.from('abc'));
      expect(sized.json.message).toBe('body is shorter than the declared size: got 3 of 10 bytes');
      const longer = await chunkedPut(base, '/api/fs/put', { authorization: admin, 'file-path': encodeURIComponent('/a/longer.txt'), 'x-file-size': '2' }, Buffer.from('abcdef'));
      expect(longer.json.message).toBe('body is longer than the declared size 2');
      for (const n of ['chunked.txt', 'sized.txt', 'longer.txt']) expect(existsSync(path.join(a, n))).toBe(false);
    });

    it('an interrupted upload leaves no file under the real name, and its temporary file is removed', async () => {
      writeFileSync(path.join(a, 'keep.bin'), 'original');
      await interruptedPut(base, '/api/fs/put', { authorization: admin, 'file-path': encodeURIComponent('/a/keep.bin') }, 1_000_000, 100_000);
      await interruptedPut(base, '/api/fs/put', { authorization: admin, 'file-path': encodeURIComponent('/a/new.bin') }, 1_000_000, 100_000);
      await waitFor(() => !existsSync(path.join(a, '.atrium-tmp')));
      expect(readFileSync(path.join(a, 'keep.bin'), 'utf8')).toBe('original');
      expect(existsSync(path.join(a, 'new.bin'))).toBe(false);
    });

    it('temporary files of a killed server are removed when the storage mounts again', async () => {
      mkdirSync(path.join(a, '.atrium-tmp'), { recursive: true });
      writeFileSync(path.join(a, '.atrium-tmp', '999999999-deadbeef'), 'partial');
      await s.core.storages.loadAll();
      expect(existsSync(path.join(a, '.atrium-tmp'))).toBe(false);
      expect((await post('/api/fs/list', { path: '/a' })).data.content.map((o: any) => o.name)).not.toContain('.atrium-tmp');
    });

    it('users need the write bit (guest and general users alike)', async () => {
      await post('/api/admin/user/create', { username: 'reader', password: 'p', permission: 0 });
      const t = await s.login('reader', 'p');
      expect((await put('/a/no.txt', 'x', {}, t)).json()).toEqual({ code: 403, message: 'permission denied', data: null });
      expect(existsSync(path.join(a, 'no.txt'))).toBe(false);
      for (const [url, body] of [
        ['/api/fs/mkdir', { path: '/a/nope' }],
        ['/api/fs/rename', { path: '/a/x.txt', name: 'y.txt' }],
        ['/api/fs/move', { src_dir: '/a', dst_dir: '/b', names: ['x.txt'] }],
        ['/api/fs/copy', { src_dir: '/a', dst_dir: '/b', names: ['x.txt'] }],
        ['/api/fs/remove', { dir: '/a', names: ['x.txt'] }],
        ['/api/fs/remove_empty_directory', { src_dir: '/a' }],
        ['/api/fs/batch_rename', { src_dir: '/a', rename_objects: [] }],
        ['/api/fs/regex_rename', { src_dir: '/a', src_name_regex: 'x', new_name_regex: 'y' }],
        ['/api/fs/recursive_move', { src_dir: '/a/dir', dst_dir: '/b' }],
      ] as const) {
        expect(await post(url, body, t), url).toEqual({ code: 403, message: 'permission denied', data: null });
      }
      expect(existsSync(path.join(a, 'x.txt'))).toBe(true);
    });
  });

  describe('mkdir, rename, remove', () => {
    it('mkdir creates missing parents; an existing folder is fine; a file in the way is not', async () => {
      expect((await post('/api/fs/mkdir', { path: '/a/m1/m2/m3' })).code).toBe(200);
      expect(statSync(path.join(a, 'm1/m2/m3')).isDirectory()).toBe(true);
      expect((await post('/api/fs/mkdir', { path: '/a/m1/m2' })).code).toBe(200);
      expect(await post('/api/fs/mkdir', { path: '/a/x.txt/sub' })).toEqual({ code: 500, message: 'file exists', data: null });
      expect((await post('/api/fs/list', { path: '/a/m1' })).data.content.map((o: any) => o.name)).toEqual(['m2']);
    });

    it('rename checks the new name and refuses to clobber', async () => {
      writeFileSync(path.join(a, 'r1.txt'), 'r1');
      writeFileSync(path.join(a, 'r2.txt'), 'r2');
      for (const name of ['a/b', 'a\\b', '', '..', '.', 'x'.repeat(256)]) {
        const r = await post('/api/fs/rename', { path: '/a/r1.txt', name });
        expect(r.code, name).toBe(400);
      }
      expect(await post('/api/fs/rename', { path: '/a/r1.txt', name: 'r2.txt' })).toEqual({ code: 403, message: 'file [r2.txt] exists', data: null });
      expect((await post('/api/fs/rename', { path: '/a/r1.txt', name: 'r3.txt' })).code).toBe(200);
      expect(readFileSync(path.join(a, 'r3.txt'), 'utf8')).toBe('r1');
      expect(readFileSync(path.join(a, 'r2.txt'), 'utf8')).toBe('r2');
      expect((await post('/api/fs/rename', { path: '/a', name: 'z' })).code).toBe(400);
      expect((await post('/api/fs/rename', { path: '/a/none.txt', name: 'z' })).message).toBe('object not found');
    });

    it('batch_rename and regex_rename (Go syntax, bounded in time)', async () => {
      mkdirSync(path.join(a, 'rx'));
      for (const n of ['img_001.jpg', 'img_002.jpg', 'other.txt']) writeFileSync(path.join(a, 'rx', n), n);
      expect((await post('/api/fs/batch_rename', { src_dir: '/a/rx', rename_objects: [{ src_name: 'other.txt', new_name: 'renamed.txt' }, { src_name: '', new_name: 'skip' }] })).code).toBe(200);
      expect((await post('/api/fs/regex_rename', { src_dir: '/a/rx', src_name_regex: '^img_(?P<n>\\d+)\\.jpg$', new_name_regex: 'photo-${n}.jpg' })).code).toBe(200);
      expect(readdirSync(path.join(a, 'rx')).sort()).toEqual(['photo-001.jpg', 'photo-002.jpg', 'renamed.txt']);
      // The single-pair form: src_name and new_name beside the (absent) list.
      expect((await post('/api/fs/batch_rename', { src_dir: '/a/rx', src_name: 'renamed.txt', new_name: 'single.txt' })).code).toBe(200);
      expect(readdirSync(path.join(a, 'rx')).sort()).toEqual(['photo-001.jpg', 'photo-002.jpg', 'single.txt']);
      await post('/api/fs/batch_rename', { src_dir: '/a/rx', src_name: 'single.txt', new_name: 'renamed.txt' });
      expect((await post('/api/fs/regex_rename', { src_dir: '/a/rx', src_name_regex: '(', new_name_regex: 'x' })).message).toMatch(/^invalid regular expression/);
      writeFileSync(path.join(a, 'rx', `${'a'.repeat(40)}!`), 'x');
      // Matching this pattern against 41 characters takes about 2^40 steps: the answer says the
      // matcher was stopped at its time limit (an unbounded one would outlast the test's timeout).
      const evil = await post('/api/fs/regex_rename', { src_dir: '/a/rx', src_name_regex: '^(a+)+$', new_name_regex: 'x' });
      expect(evil).toEqual({ code: 400, message: 'regular expression took longer than 2000 ms', data: null });
      expect(readdirSync(path.join(a, 'rx'))).toHaveLength(4);
    });

    it('remove deletes files and folders, ignores missing ones, and never a storage root', async () => {
      mkdirSync(path.join(a, 'gone/sub'), { recursive: true });
      writeFileSync(path.join(a, 'gone.txt'), 'g');
      expect((await post('/api/fs/remove', { dir: '/a', names: ['gone', 'gone.txt', 'missing'] })).code).toBe(200);
      expect(existsSync(path.join(a, 'gone'))).toBe(false);
      expect(existsSync(path.join(a, 'gone.txt'))).toBe(false);
      expect(await post('/api/fs/remove', { dir: '/', names: ['a'] })).toEqual({
        code: 500,
        message: 'delete root folder is not allowed, please goto the manage page to delete the storage instead',
        data: null,
      });
      expect(await post('/api/fs/remove', { dir: '/a', names: [] })).toEqual({ code: 400, message: 'Empty file names', data: null });
      expect((await post('/api/fs/remove', { dir: '/a', names: ['../b'] })).code).toBe(400);
      expect(existsSync(a)).toBe(true);
    });

    it('remove moves into the recycle bin when one is set', async () => {
      const root = makeTree({ 'trash-me.txt': 't' });
      const bin = mkdtempSync(path.join(os.tmpdir(), 'atrium-bin-'));
      const r = await post('/api/admin/storage/create', localStorage('/rb', root, {}, { recycle_bin_path: bin }));
      expect(r.code).toBe(200);
      expect((await post('/api/fs/remove', { dir: '/rb', names: ['trash-me.txt'] })).code).toBe(200);
      expect(existsSync(path.join(root, 'trash-me.txt'))).toBe(false);
      const binned = readdirSync(bin);
      expect(binned).toHaveLength(1);
      expect(binned[0]).toMatch(/^trash-me\.txt\./);
      expect(readFileSync(path.join(bin, binned[0]!), 'utf8')).toBe('t');
      rmSync(root, { recursive: true });
      rmSync(bin, { recursive: true });
    });

    it('remove_empty_directory removes only folders that hold nothing', async () => {
      mkdirSync(path.join(a, 'red/e1/e2'), { recursive: true });
      mkdirSync(path.join(a, 'red/full'), { recursive: true });
      writeFileSync(path.join(a, 'red/full/f.txt'), 'f');
      expect((await post('/api/fs/remove_empty_directory', { src_dir: '/a/red' })).code).toBe(200);
      expect(readdirSync(path.join(a, 'red'))).toEqual(['full']);
    });
  });

  describe('move and copy', () => {
    it('within a storage: the driver moves and copies; folders never into themselves', async () => {
      mkdirSync(path.join(a, 'mv/src/inner'), { recursive: true });
      writeFileSync(path.join(a, 'mv/src/inner/f.txt'), 'f');
      mkdirSync(path.join(a, 'mv/dst'));
      expect((await post('/api/fs/copy', { src_dir: '/a/mv', dst_dir: '/a/mv/dst', names: ['src'] })).data).toEqual({ tasks: [] });
      expect(readFileSync(path.join(a, 'mv/dst/src/inner/f.txt'), 'utf8')).toBe('f');
      expect((await post('/api/fs/copy', { src_dir: '/a/mv', dst_dir: '/a/mv', names: ['src'] })).code).toBe(403);
      expect((await post('/api/fs/move', { src_dir: '/a/mv', dst_dir: '/a/mv/src/inner', names: ['src'] })).message).toBe('can not move src into itself');
      expect((await post('/api/fs/move', { src_dir: '/a/mv', dst_dir: '/a/mv/dst', names: ['src'] })).message).toBe('file [src] exists');
      rmSync(path.join(a, 'mv/dst/src'), { recursive: true });
      expect((await post('/api/fs/move', { src_dir: '/a/mv', dst_dir: '/a/mv/dst', names: ['src'] })).code).toBe(200);
      expect(existsSync(path.join(a, 'mv/src'))).toBe(false);
      expect(readFileSync(path.join(a, 'mv/dst/src/inner/f.txt'), 'utf8')).toBe('f');
      expect(await post('/api/fs/move', { src_dir: '/a/mv', dst_dir: '/a/mv/dst', names: [] })).toEqual({ code: 400, message: 'Empty file names', data: null });
      expect((await post('/api/fs/move', { src_dir: '/a/mv', dst_dir: '/a/nowhere', names: ['dst'] })).code).toBe(500);
      expect(existsSync(path.join(a, 'mv/dst'))).toBe(true);
    });

    it('across storages: copy and move run as tasks and carry every byte', async () => {
      mkdirSync(path.join(a, 'tree/d1/d2'), { recursive: true });
      const big = Buffer.alloc(3 * 1024 * 1024, 9);
      writeFileSync(path.join(a, 'tree/big.bin'), big);
      writeFileSync(path.join(a, 'tree/d1/d2/small.txt'), 'small');
      writeFileSync(path.join(a, 'tree/empty.txt'), '');
      const copied = await post('/api/fs/copy', { src_dir: '/a', dst_dir: '/b', names: ['tree'] });
      expect(copied.code).toBe(200);
      expect(copied.data.tasks).toHaveLength(1);
      expect(copied.data.tasks[0]).toMatchObject({ name: 'copy [/a](/tree) to [/b](/)', state: 0 });
      const task = s.core.tasks.get(copied.data.tasks[0].id)!;
      await task.done;
      expect(task.error).toBe('');
      expect(task.state).toBe(2);
      expect(task.progress).toBe(100);
      expect(readFileSync(path.join(b, 'tree/big.bin')).equals(big)).toBe(true);
      expect(readFileSync(path.join(b, 'tree/d1/d2/small.txt'), 'utf8')).toBe('small');
      expect(readFileSync(path.join(b, 'tree/empty.txt'), 'utf8')).toBe('');
      expect(existsSync(path.join(a, 'tree/big.bin'))).toBe(true);

      const moved = await post('/api/fs/move', { src_dir: '/a/tree', dst_dir: '/b', names: ['big.bin'], overwrite: true });
      const mt = s.core.tasks.get(moved.data.tasks[0].id)!;
      await mt.done;
      expect(mt.state).toBe(2);
      expect(existsSync(path.join(a, 'tree/big.bin'))).toBe(false);
      expect(readFileSync(path.join(b, 'big.bin')).equals(big)).toBe(true);
      // the listing of /b shows the new entries without a refresh
      expect((await post('/api/fs/list', { path: '/b' })).data.content.map((o: any) => o.name)).toEqual(expect.arrayContaining(['tree', 'big.bin']));
    });

    it('recursive_move flattens every file of a tree into the destination', async () => {
      mkdirSync(path.join(a, 'rm/x/y'), { recursive: true });
      writeFileSync(path.join(a, 'rm/1.txt'), '1');
      writeFileSync(path.join(a, 'rm/x/2.txt'), '2');
      writeFileSync(path.join(a, 'rm/x/y/3.txt'), '3');
      mkdirSync(path.join(a, 'flat'));
      const r = await post('/api/fs/recursive_move', { src_dir: '/a/rm', dst_dir: '/a/flat' });
      expect(r).toMatchObject({ code: 200, message: 'Successfully moved 3 file(s)' });
      expect(readdirSync(path.join(a, 'flat')).sort()).toEqual(['1.txt', '2.txt', '3.txt']);
      expect((await post('/api/fs/recursive_move', { src_dir: '/a/flat', dst_dir: '/a/flat/sub' })).code).toBe(400);
    });

    it("honours the OpenList dialog's conflict choices: skip_existing and merge on copy, skip_existing on move, conflict_policy on recursive_move", async () => {
      const tree = (dir: string, files: Record<string, string>) => {
        for (const [name, body] of Object.entries(files)) {
          mkdirSync(path.dirname(path.join(a, dir, name)), { recursive: true });
          writeFileSync(path.join(a, dir, name), body);
        }
      };
      const read = (p: string) => readFileSync(path.join(a, p), 'utf8');
      tree('cf/src', { 'one.txt': 'new one', 'two.txt': 'new two', 'dir/in.txt': 'new in', 'dir/deep/more.txt': 'new more' });
      tree('cf/dst', { 'one.txt': 'old one', 'dir/in.txt': 'old in' });
      // Without a choice the batch is refused and nothing is copied.
      expect((await post('/api/fs/copy', { src_dir: '/a/cf/src', dst_dir: '/a/cf/dst', names: ['one.txt', 'two.txt'] })).message).toBe('file [one.txt] exists');
      expect(existsSync(path.join(a, 'cf/dst/two.txt'))).toBe(false);
      // skip_existing: the names already there stay as they were, the others are copied.
      expect((await post('/api/fs/copy', { src_dir: '/a/cf/src', dst_dir: '/a/cf/dst', names: ['one.txt', 'two.txt'], skip_existing: true })).code).toBe(200);
      expect([read('cf/dst/one.txt'), read('cf/dst/two.txt')]).toEqual(['old one', 'new two']);
      // merge: into the folder on both sides, copying only what it lacks, by a copy task that walks
      // both trees as it runs (a file in the way of a source folder stays; a name beside is copied).
      tree('cf/src', { 'dir/blocked/x.txt': 'new x', 'dir/deep/again/y.txt': 'new y' });
      tree('cf/dst', { 'dir/blocked': 'a file' });
      const merged = await post('/api/fs/copy', { src_dir: '/a/cf/src', dst_dir: '/a/cf/dst', names: ['dir', 'one.txt'], merge: true });
      expect(merged.code).toBe(200);
      expect(merged.data.tasks).toHaveLength(1);
      const mergeTask = s.core.tasks.get(merged.data.tasks[0].id)!;
      await mergeTask.done;
      expect(mergeTask.state, mergeTask.error).toBe(2);
      expect([read('cf/dst/dir/in.txt'), read('cf/dst/dir/deep/more.txt'), read('cf/dst/dir/deep/again/y.txt'), read('cf/dst/dir/blocked'), read('cf/dst/one.txt')]).toEqual(['old in', 'new more', 'new y', 'a file', 'old one']);
      // overwrite wins over the others.
      expect((await post('/api/fs/copy', { src_dir: '/a/cf/src', dst_dir: '/a/cf/dst', names: ['one.txt'], overwrite: true, skip_existing: true })).code).toBe(200);
      expect(read('cf/dst/one.txt')).toBe('new one');
      // move with skip_existing leaves the clashing source where it is.
      tree('cf/mv', { 'one.txt': 'mv one', 'three.txt': 'mv three' });
      expect((await post('/api/fs/move', { src_dir: '/a/cf/mv', dst_dir: '/a/cf/dst', names: ['one.txt', 'three.txt'], skip_existing: true })).code).toBe(200);
      expect(readdirSync(path.join(a, 'cf/mv'))).toEqual(['one.txt']);
      expect([read('cf/dst/one.txt'), read('cf/dst/three.txt')]).toEqual(['new one', 'mv three']);

      // recursive_move: cancel (the default) refuses before anything moves; skip leaves; overwrite replaces.
      tree('cf/rm', { 'a.txt': 'rm a', 'x/one.txt': 'rm one', 'x/y/b.txt': 'rm b' });
      expect((await post('/api/fs/recursive_move', { src_dir: '/a/cf/rm', dst_dir: '/a/cf/dst' })).message).toBe('file [one.txt] exists');
      expect([existsSync(path.join(a, 'cf/dst/a.txt')), existsSync(path.join(a, 'cf/rm/a.txt'))]).toEqual([false, true]);
      expect(await post('/api/fs/recursive_move', { src_dir: '/a/cf/rm', dst_dir: '/a/cf/dst', conflict_policy: 'skip' })).toMatchObject({ code: 200, message: 'Successfully moved 2 file(s)' });
      expect([read('cf/dst/one.txt'), read('cf/dst/a.txt'), read('cf/dst/b.txt'), read('cf/rm/x/one.txt')]).toEqual(['new one', 'rm a', 'rm b', 'rm one']);
      expect(await post('/api/fs/recursive_move', { src_dir: '/a/cf/rm', dst_dir: '/a/cf/dst', conflict_policy: 'overwrite' })).toMatchObject({ code: 200, message: 'Successfully moved 1 file(s)' });
      expect(read('cf/dst/one.txt')).toBe('rm one');
      expect((await post('/api/fs/recursive_move', { src_dir: '/a/cf/rm', dst_dir: '/a/cf/dst', conflict_policy: 'replace' })).code).toBe(400);
    });
  });
});

describe('a full disk', () => {
  let mounted = false;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    if (process.env.CI) throw new Error('CI needs to mount a small tmpfs for the disk-full test');
    console.warn('\n*** SKIPPING disk-full test: cannot mount a tmpfs here ***\n');
  }
  afterAll(() => {
    if (mounted) execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!mounted)('fails the upload cleanly, keeps the old file and leaves no partial file', async () => {
    const s = await startServer(BACKENDS[0]!);
    try {
      const admin = await s.login();
      writeFileSync(path.join(dir, 'old.bin'), 'old content');
      expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/full', dir) })).code).toBe(200);
      const res = await s.inject({
        method: 'PUT',
        url: '/api/fs/put',
        payload: Buffer.alloc(1024 * 1024, 1),
        headers: { authorization: admin, 'file-path': encodeURIComponent('/full/old.bin') },
      });
      expect(res.json()).toEqual({ code: 500, message: 'no space left on the storage', data: null });
      expect(readFileSync(path.join(dir, 'old.bin'), 'utf8')).toBe('old content');
      expect(existsSync(path.join(dir, '.atrium-tmp'))).toBe(false);
      expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/full' } })).data.content.map((o: any) => o.name)).toEqual(['old.bin']);
    } finally {
      await s.destroy();
    }
  });
});
