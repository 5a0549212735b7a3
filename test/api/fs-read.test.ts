import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe.each(ONE_BACKEND)('reading API on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let outside: string;
  let deep: string;
  const ids: number[] = [];

  const list = (p: string, extra: Record<string, unknown> = {}, token = admin) => s.api('POST', '/api/fs/list', { token, body: { path: p, ...extra } });
  const get = (p: string, token = admin) => s.api('POST', '/api/fs/get', { token, body: { path: p } });
  const mount = async (body: Record<string, unknown>) => {
    const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body });
    expect(r.code, r.message).toBe(200);
    ids.push(r.data.id);
    return r.data.id as number;
  };

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    // The object JSON as a storage's listing gives it: the server's thumbnails (thumbs/) are tested in test/thumbs.
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'thumb_enabled', value: 'false' }] })).code).toBe(200);
    outside = makeTree({ 'secret.txt': 'top secret' });
    root = makeTree({
      'movie.mp4': 'v'.repeat(300),
      'movie.srt': 'subs',
      'movie.en.ass': 'subs2',
      'song.mp3': 'aa',
      'pic.png': 'p',
      'notes.md': 'n',
      'data.bin': 'bbbbbbbbbb',
      'folder a/inner.txt': 'i',
      'zeta/': '',
      'empty/': '',
      '.hidden': 'h',
      'résumé 报告.txt': 'unicode',
    });
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'escape.txt'));
    symlinkSync(outside, path.join(root, 'escape-dir'));
    symlinkSync(path.join(root, 'song.mp3'), path.join(root, 'inside-link.mp3'));
    deep = makeTree({ 'deep.txt': 'deep' });
    // The default storage is at `/`; add ours below it.
    await mount(localStorage('/loc', root));
    await mount(localStorage('/loc/folder a/mounted', deep));
    await mount(localStorage('/virt/x/y', deep));
  });
  afterAll(async () => {
    await s.destroy();
    for (const d of [root, outside, deep]) rmSync(d, { recursive: true, force: true });
  });

  it('lists a folder: object JSON, type codes, sign, provider, write, total', async () => {
    const r = await list('/loc');
    expect(r.code).toBe(200);
    const byName = Object.fromEntries(r.data.content.map((o: any) => [o.name, o]));
    expect(Object.keys(byName).sort()).toEqual(
      ['.hidden', 'data.bin', 'empty', 'folder a', 'inside-link.mp3', 'movie.en.ass', 'movie.mp4', 'movie.srt', 'notes.md', 'pic.png', 'résumé 报告.txt', 'song.mp3', 'zeta'].sort(),
    );
    expect(r.data.total).toBe(13);
    expect(r.data.provider).toBe('Local');
    expect(r.data.write).toBe(true);
    expect(r.data.readme).toBe('');
    expect(byName['movie.mp4']).toMatchObject({ size: 300, is_dir: false, type: 2, hashinfo: 'null', hash_info: null, thumb: '' });
    expect(byName['song.mp3'].type).toBe(3);
    expect(byName['notes.md'].type).toBe(4);
    expect(byName['pic.png'].type).toBe(5);
    expect(byName['data.bin'].type).toBe(0);
    expect(byName.zeta).toMatchObject({ is_dir: true, type: 1, size: 0, sign: '' });
    expect(byName['movie.mp4'].sign).toBe(s.core.signer.sign('/loc/movie.mp4'));
    expect(byName['movie.mp4'].sign).toMatch(/^[A-Za-z0-9_-]{43}=:0$/);
    expect(Date.parse(byName['movie.mp4'].modified)).toBeGreaterThan(0);
    // folders first (extract_folder front), then natural name order
    const names = r.data.content.map((o: any) => o.name);
    expect(names.slice(0, 3)).toEqual(['empty', 'folder a', 'zeta']);
  });

  it('never shows or serves what a symlink outside the root points to', async () => {
    const names = (await list('/loc')).data.content.map((o: any) => o.name);
    expect(names).not.toContain('escape.txt');
    expect(names).not.toContain('escape-dir');
    expect((await get('/loc/escape.txt')).code).toBe(500);
    expect((await list('/loc/escape-dir')).code).toBe(500);
    expect((await get('/loc/escape-dir/secret.txt')).message).toBe('failed get obj: object not found');
    expect((await get('/loc/inside-link.mp3')).data.size).toBe(2);
  });

  it('refuses relative paths and cleans paths once at the edge', async () => {
    for (const p of ['/loc/../..', '..', '../etc', '/loc/zeta/../../x', '\\..\\..']) {
      expect(await list(p)).toEqual({ code: 403, message: 'access using relative path is not allowed', data: null });
    }
    expect((await list('loc//zeta/./')).code).toBe(200);
    expect((await list('\\loc\\zeta')).code).toBe(200);
    expect((await list('/loc/zeta\u0000x')).code).toBe(403);
  });

  it('paginates in memory: per_page 0 = all, page < 1 = 1, total before paging; empty folder content null', async () => {
    const all = await list('/loc', { per_page: 0 });
    const p2 = await list('/loc', { page: 2, per_page: 5 });
    expect(p2.data.total).toBe(13);
    expect(p2.data.content.map((o: any) => o.name)).toEqual(all.data.content.slice(5, 10).map((o: any) => o.name));
    const p0 = await list('/loc', { page: 0, per_page: 3 });
    expect(p0.data.content.map((o: any) => o.name)).toEqual(all.data.content.slice(0, 3).map((o: any) => o.name));
    expect((await list('/loc', { page: 9, per_page: 5 })).data.content).toEqual([]);
    const empty = await list('/loc/empty');
    expect(empty.data).toMatchObject({ content: null, total: 0 });
    const viaGet = await s.api('GET', '/api/fs/list?path=%2Floc&page=1&per_page=2', { token: admin });
    expect(viaGet.data.content).toHaveLength(2);
  });

  it('sorts by the storage settings', async () => {
    const id = await mount(localStorage('/sorted', root, { order_by: 'size', order_direction: 'desc', extract_folder: 'back' }));
    const names = (await list('/sorted')).data.content.map((o: any) => o.name);
    expect(names[0]).toBe('movie.mp4');
    expect(names.slice(-4)).toEqual(expect.arrayContaining(['zeta', 'empty', 'folder a']));
    await s.api('POST', `/api/admin/storage/delete?id=${id}`, { token: admin });
    ids.splice(ids.indexOf(id), 1);
  });

  it('resolves the deepest mount and shows mount paths as virtual folders', async () => {
    // /loc/folder a/mounted is another storage, merged into the listing of /loc/folder a
    const inner = await list('/loc/folder a');
    expect(inner.data.content.map((o: any) => o.name).sort()).toEqual(['inner.txt', 'mounted']);
    expect((await list('/loc/folder a/mounted')).data.content.map((o: any) => o.name)).toEqual(['deep.txt']);
    // / lists the default storage's files plus folders for /loc and /virt
    const top = (await list('/')).data.content.map((o: any) => o.name);
    expect(top).toEqual(expect.arrayContaining(['loc', 'virt']));
    // /virt exists only as a path to a mount (owned by the default storage at /, which has no such folder)
    const virt = await list('/virt');
    expect(virt.data).toMatchObject({ total: 1, provider: 'Local' });
    expect(virt.data.content[0]).toMatchObject({ name: 'x', is_dir: true, type: 1 });
    expect((await get('/virt/x')).data).toMatchObject({ name: 'x', is_dir: true });
    expect((await list('/virt/x/y')).data.content[0].name).toBe('deep.txt');
  });

  it('balances replicas of one mount path round-robin', async () => {
    const r1 = makeTree({ 'one.txt': '1' });
    const r2 = makeTree({ 'two.txt': '2' });
    await mount(localStorage('/bal', r1));
    await mount(localStorage('/bal.balance1', r2));
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add((await list('/bal')).data.content[0].name);
    expect([...seen].sort()).toEqual(['one.txt', 'two.txt']);
    rmSync(r1, { recursive: true });
    rmSync(r2, { recursive: true });
  });

  it('joins the base path of a user and keeps them inside it', async () => {
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'based', password: 'p', base_path: '/loc/folder a' } });
    const t = await s.login('based', 'p');
    const r = await list('/', {}, t);
    expect(r.data.content.map((o: any) => o.name).sort()).toEqual(['inner.txt', 'mounted']);
    expect(r.data.write).toBe(false);
    expect((await get('/inner.txt', t)).data.sign).toBe(s.core.signer.sign('/loc/folder a/inner.txt'));
    expect((await list('/..', {}, t)).code).toBe(403);
    expect((await list('/', { refresh: true }, t))).toEqual({ code: 403, message: 'Refresh without permission', data: null });
    expect((await s.api('POST', '/api/fs/dirs', { token: t, body: { path: '/', force_root: true } })).message).toBe('Permission denied');
  });

  it('get: a file with raw_url, sign and related files; a folder typed by its name', async () => {
    const r = await get('/loc/movie.mp4');
    expect(r.data).toMatchObject({ name: 'movie.mp4', size: 300, is_dir: false, type: 2, provider: 'Local', readme: '', header: '' });
    expect(r.data.raw_url).toBe(`http://localhost:80/p/loc/movie.mp4?sign=${r.data.sign}`);
    expect(r.data.related.map((o: any) => o.name).sort()).toEqual(['movie.en.ass', 'movie.srt']);
    const folder = await get('/loc/zeta');
    expect(folder.data).toMatchObject({ is_dir: true, type: 0, raw_url: '', related: null, sign: '' });
    const root = await get('/');
    expect(root.data).toMatchObject({ name: 'root', is_dir: true });
    expect(await get('/loc/none.txt')).toEqual({ code: 500, message: 'failed get obj: object not found', data: null });
    const host = await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/loc/résumé 报告.txt' }, headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'files.example' } });
    expect(host.data.raw_url).toBe(`https://files.example/p/loc/r%C3%A9sum%C3%A9%20%E6%8A%A5%E5%91%8A.txt?sign=${host.data.sign}`);
  });

  it('dirs lists folders only (null when none); other answers not implement for Local', async () => {
    const d = await s.api('POST', '/api/fs/dirs', { token: admin, body: { path: '/loc' } });
    expect(d.data.map((x: any) => x.name)).toEqual(['empty', 'folder a', 'zeta']);
    expect((await s.api('POST', '/api/fs/dirs', { token: admin, body: { path: '/loc/zeta' } })).data).toBeNull();
    expect((await s.api('POST', '/api/fs/dirs', { token: admin, body: { path: '/', force_root: true } })).code).toBe(200);
    expect(await s.api('POST', '/api/fs/other', { token: admin, body: { path: '/loc/movie.mp4', method: 'video_preview' } })).toEqual({ code: 500, message: 'not implement', data: null });
  });

  it('errors for paths no storage owns', async () => {
    expect(await list('/nowhere')).toEqual({ code: 500, message: 'failed get objs: failed get dir: object not found', data: null });
    expect(await list('/loc/nowhere')).toEqual({ code: 500, message: 'failed get objs: failed get dir: object not found', data: null });
  });

  it('hides dot-files when show_hidden is off', async () => {
    await mount(localStorage('/nohidden', root, {}, { show_hidden: false }));
    const names = (await list('/nohidden')).data.content.map((o: any) => o.name);
    expect(names).not.toContain('.hidden');
    expect((await get('/nohidden/.hidden')).code).toBe(500);
  });

  it('caches listings for cache_expiration, sees outside changes through the folder stamp, refresh re-lists', async () => {
    const dir = makeTree({ 'a.txt': 'a' });
    await mount(localStorage('/cached', dir, { cache_expiration: 30 }));
    expect((await list('/cached')).data.total).toBe(1);
    // A changed file size inside an unchanged folder is served from the cache until refresh.
    writeFileSync(path.join(dir, 'a.txt'), 'aaaa');
    const stale = await list('/cached');
    expect(stale.data.content[0].size).toBe(1);
    expect((await list('/cached', { refresh: true })).data.content[0].size).toBe(4);
    // A file added outside the server changes the folder's mtime: the cache is not used.
    writeFileSync(path.join(dir, 'b.txt'), 'b');
    expect((await list('/cached')).data.total).toBe(2);
    mkdirSync(path.join(dir, 'c'));
    expect((await list('/cached')).data.total).toBe(3);
    rmSync(dir, { recursive: true });
  });
});
