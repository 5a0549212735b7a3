import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAliasPaths } from '../../src/drivers/alias/index.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { readHostFile, writeTree } from './peer-files.js';
import { mountLocalsOnNextStart } from './server-hook.js';

// The suite's own server gets the storages the alias points at (see server-hook.ts).
vi.mock('../helpers/server.js', async (importOriginal) => (await import('./server-hook.js')).withStartHook(await importOriginal()));

describe('Alias paths text', () => {
  it('names entries by base name or name: prefix and merges same names in order', () => {
    const m = parseAliasPaths('/a/movies\n  tv:/b/shows \n\nmovies:/c/films\n/x/y:z\n');
    expect([...m.entries()]).toEqual([
      ['movies', ['/a/movies', '/c/films']],
      ['tv', ['/b/shows']],
      ['y:z', ['/x/y:z']],
    ]);
  });
});

describe('Alias driver', () => {
  let s: TestServer;
  let admin: string;
  let a: string;
  let b: string;
  const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    a = makeTree({ 'both.txt': 'from A', 'onlyA.txt': 'aaa', 'shared/a1.txt': 'a1', 'solo/s.txt': 'solo' });
    b = makeTree({ 'both.txt': 'from B', 'onlyB.txt': 'b'.repeat(1000), 'shared/b1.txt': 'b1', 'bdir/x.txt': 'x' });
    for (const [mp, root] of [['/la', a], ['/lb', b]] as const) {
      expect((await post('/api/admin/storage/create', localStorage(mp, root))).code).toBe(200);
    }
    await mount(s, admin, '/al', 'Alias', { paths: 'm:/la\nm:/lb\n/la/solo' });
    await mount(s, admin, '/open', 'Alias', { paths: 'm:/la\nm:/lb', protect_same_name: false });
    await mount(s, admin, '/flat', 'Alias', { paths: '/lb' });
  });
  afterAll(async () => {
    await s.destroy();
    for (const d of [a, b]) rmSync(d, { recursive: true, force: true });
  });

  it('lists its names at the root and the union of the targets below, first target winning', async () => {
    expect(await names(s, admin, '/al')).toEqual(['m', 'solo']);
    expect(await names(s, admin, '/al/m')).toEqual(['bdir', 'shared', 'solo', 'both.txt', 'onlyA.txt', 'onlyB.txt']);
    expect(await names(s, admin, '/al/m/shared')).toEqual(['a1.txt', 'b1.txt']);
    expect(await names(s, admin, '/al/solo')).toEqual(['s.txt']);
    const both = (await post('/api/fs/list', { path: '/al/m', refresh: true })).data.content.find((o: any) => o.name === 'both.txt');
    expect(both.size).toBe(6);
  });

  it('reads from the first target holding the file, with ranges', async () => {
    expect((await download(s, '/al/m/both.txt')).body.toString()).toBe('from A');
    expect((await download(s, '/al/m/onlyB.txt')).body.toString()).toBe('b'.repeat(1000));
    const r = await download(s, '/al/m/onlyB.txt', 'bytes=10-19');
    expect(r.status).toBe(206);
    expect(r.body.toString()).toBe('b'.repeat(10));
    const got = await post('/api/fs/get', { path: '/al/m/onlyB.txt' });
    expect(got.code).toBe(200);
    expect(got.data.size).toBe(1000);
    expect((await post('/api/fs/get', { path: '/al/m/missing.txt' })).message).toMatch(/object not found/);
    expect((await post('/api/fs/list', { path: '/al/nope' })).message).toMatch(/object not found/);
  });

  it('writes into the one target that holds the path', async () => {
    expect((await post('/api/fs/rename', { path: '/al/m/onlyB.txt', name: 'renamedB.txt' })).code).toBe(200);
    expect(existsSync(path.join(b, 'renamedB.txt'))).toBe(true);
    expect((await post('/api/fs/mkdir', { path: '/al/m/bdir/newdir' })).code).toBe(200);
    expect(existsSync(path.join(b, 'bdir/newdir'))).toBe(true);
    const res = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'uploaded', headers: { authorization: admin, 'file-path': encodeURIComponent('/al/m/bdir/up.txt') } });
    expect(res.json().code).toBe(200);
    expect(readFileSync(path.join(b, 'bdir/up.txt'), 'utf8')).toBe('uploaded');
    expect((await post('/api/fs/move', { src_dir: '/al/m/bdir', dst_dir: '/al/m/shared', names: ['up.txt'] })).code).not.toBe(200);
    expect((await post('/api/fs/copy', { src_dir: '/al/m', dst_dir: '/al/m/bdir', names: ['onlyA.txt'] })).code).toBe(200);
    expect(readFileSync(path.join(b, 'bdir/onlyA.txt'), 'utf8')).toBe('aaa');
    expect((await post('/api/fs/remove', { dir: '/al/m', names: ['onlyA.txt'] })).code).toBe(200);
    expect(existsSync(path.join(a, 'onlyA.txt'))).toBe(false);
  });

  it('protect_same_name refuses to change an object several targets hold; without it the first target is changed (one name: flat)', async () => {
    const r = await post('/api/fs/rename', { path: '/al/m/both.txt', name: 'x.txt' });
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/several alias paths/);
    expect((await post('/api/fs/remove', { dir: '/al/m', names: ['both.txt'] })).message).toMatch(/several alias paths/);
    expect((await post('/api/fs/mkdir', { path: '/al/m/new' })).message).toMatch(/several alias paths/);
    expect(readFileSync(path.join(a, 'both.txt'), 'utf8')).toBe('from A');
    expect(readFileSync(path.join(b, 'both.txt'), 'utf8')).toBe('from B');

    const renamed = await post('/api/fs/rename', { path: '/open/both.txt', name: 'both-a.txt' });
    expect(renamed.code, renamed.message).toBe(200);
    expect(existsSync(path.join(a, 'both-a.txt'))).toBe(true);
    expect(readFileSync(path.join(b, 'both.txt'), 'utf8')).toBe('from B');
    expect((await download(s, '/open/both.txt')).body.toString()).toBe('from B');
  });

  it('protect_same_name alone (an AList v3 client) keeps the policies unset: a copy of an object several targets hold is refused, as before', async () => {
    // shared/ is in both targets (both.txt is in B only since the rename through /open).
    const r = await post('/api/fs/copy', { src_dir: '/al/m', dst_dir: '/al/m/bdir', names: ['shared'] });
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/path conflict: shared exists in several alias paths/);
    expect(existsSync(path.join(b, 'bdir/shared'))).toBe(false);
    expect((await post('/api/fs/copy', { src_dir: '/al/m', dst_dir: '/al/m/bdir', names: ['both.txt'] })).code).toBe(200);
    expect(readFileSync(path.join(b, 'bdir/both.txt'), 'utf8')).toBe('from B');
    const list = await s.api('GET', '/api/admin/storage/list', { token: admin });
    const row = list.data.content.find((x: any) => x.mount_path === '/al');
    expect(JSON.parse(row.addition)).toMatchObject({ protect_same_name: true, write_conflict_policy: '', put_conflict_policy: '', read_conflict_policy: 'first' });
  });

  it('a single path is shown flat at the mount and takes uploads', async () => {
    expect(await names(s, admin, '/flat')).toContain('shared');
    const res = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'flat!', headers: { authorization: admin, 'file-path': encodeURIComponent('/flat/f ü.txt') } });
    expect(res.json().code).toBe(200);
    expect(readFileSync(path.join(b, 'f ü.txt'), 'utf8')).toBe('flat!');
    expect((await download(s, '/flat/f ü.txt')).body.toString()).toBe('flat!');
  });

  it('refuses a path inside the alias itself, and the root of the alias can not be renamed', async () => {
    const r = await post('/api/admin/storage/create', storageRow('/loop', 'Alias', { paths: '/loop/x' }));
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/inside the alias itself/);
    expect((await post('/api/fs/rename', { path: '/al/m', name: 'q' })).code).toBe(500);
  });

  it('is listed by the driver endpoints with its items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=Alias', { token: admin });
    expect(info.data.additional.map((i: any) => [i.name, i.type, i.default, i.options])).toEqual([
      ['paths', 'text', '', ''],
      ['protect_same_name', 'bool', 'true', ''],
      ['read_conflict_policy', 'select', 'first', 'first,random,all'],
      ['write_conflict_policy', 'select', 'disabled', 'disabled,first,deterministic,deterministic_or_all,all,all_strict'],
      ['put_conflict_policy', 'select', 'disabled', 'disabled,first,deterministic,deterministic_or_all,all,all_strict,random,quota,quota_strict'],
      ['file_consistency_check', 'bool', 'false', ''],
    ]);
    expect(info.data.config).toMatchObject({ name: 'Alias', local_sort: true, no_cache: true });
  });
});

// Three Local folders merged under one name (shown flat): where each policy value sends reads,
// writes and uploads, checked on disk in every folder.
describe('Alias conflict policies', () => {
  let s: TestServer;
  let admin: string;
  let n = 0;
  const dirs: string[] = [];
  const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
  const upload = async (file: string, body: string) => (await s.inject({ method: 'PUT', url: '/api/fs/put', payload: body, headers: { authorization: admin, 'file-path': encodeURIComponent(file) } })).json();
  const read = (root: string, rel: string) => readHostFile(root, rel)?.toString();

  /** Three fresh Local storages with `trees`, and an Alias over them with `addition` (paths set here). */
  async function setup(addition: Record<string, unknown>, trees: Record<string, string>[] = LAYOUT): Promise<{ mp: string; x: string; y: string; z: string }> {
    n++;
    const roots = trees.map((t) => makeTree(t));
    dirs.push(...roots);
    const mounts = roots.map((_, i) => `/p${n}-${i}`);
    for (const [i, root] of roots.entries()) expect((await post('/api/admin/storage/create', localStorage(mounts[i]!, root))).code).toBe(200);
    const mp = `/pol${n}`;
    await mount(s, admin, mp, 'Alias', { paths: mounts.map((m) => `d:${m}`).join('\n'), ...addition });
    return { mp, x: roots[0]!, y: roots[1]!, z: roots[2]! };
  }
  // f.txt in x and y, u.txt only in y, a.txt in all three; xy/ in x and y, yonly/ in y.
  const LAYOUT: Record<string, string>[] = [
    { 'f.txt': 'fx', 'a.txt': 'ax', 'xy/k.txt': 'k' },
    { 'f.txt': 'fy', 'u.txt': 'uy', 'a.txt': 'ay', 'xy/k.txt': 'k', 'yonly/k.txt': 'k' },
    { 'a.txt': 'az' },
  ];

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
  });
  afterAll(async () => {
    await s.destroy();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('write_conflict_policy unset and protect_same_name off is first; disabled (OpenList\'s default) refuses rename, remove and mkdir', async () => {
    const legacy = await setup({ protect_same_name: false });
    expect((await post('/api/fs/rename', { path: `${legacy.mp}/f.txt`, name: 'g.txt' })).code).toBe(200);
    expect([read(legacy.x, 'g.txt'), read(legacy.y, 'f.txt'), read(legacy.y, 'g.txt')]).toEqual(['fx', 'fy', undefined]);

    const t = await setup({ write_conflict_policy: 'disabled', put_conflict_policy: 'all' });
    for (const r of [
      await post('/api/fs/rename', { path: `${t.mp}/u.txt`, name: 'v.txt' }),
      await post('/api/fs/remove', { dir: t.mp, names: ['u.txt'] }),
      await post('/api/fs/mkdir', { path: `${t.mp}/new` }),
    ]) {
      expect(r.code).toBe(500);
      expect(r.message).toMatch(/permission denied.*write_conflict_policy is disabled/);
    }
    expect(read(t.y, 'u.txt')).toBe('uy');
    for (const d of [t.x, t.y, t.z]) expect(existsSync(path.join(d, 'new'))).toBe(false);
  });

  it('write first changes the first target holding the object only', async () => {
    const t = await setup({ write_conflict_policy: 'first' });
    expect((await post('/api/fs/rename', { path: `${t.mp}/f.txt`, name: 'g.txt' })).code).toBe(200);
    expect([read(t.x, 'g.txt'), read(t.x, 'f.txt'), read(t.y, 'f.txt')]).toEqual(['fx', undefined, 'fy']);
    expect((await post('/api/fs/mkdir', { path: `${t.mp}/xy/sub` })).code).toBe(200);
    expect([existsSync(path.join(t.x, 'xy/sub')), existsSync(path.join(t.y, 'xy/sub'))]).toEqual([true, false]);
    expect((await post('/api/fs/remove', { dir: t.mp, names: ['a.txt'] })).code).toBe(200);
    expect([read(t.x, 'a.txt'), read(t.y, 'a.txt'), read(t.z, 'a.txt')]).toEqual([undefined, 'ay', 'az']);
    // The listing now shows the copy the second target holds.
    expect((await download(s, `${t.mp}/a.txt`)).body.toString()).toBe('ay');
  });

  it('write deterministic changes an object one target holds and refuses one several hold (path conflict)', async () => {
    const t = await setup({ write_conflict_policy: 'deterministic' });
    const r = await post('/api/fs/rename', { path: `${t.mp}/f.txt`, name: 'g.txt' });
    expect([r.code, r.message]).toEqual([500, 'path conflict: f.txt exists in several alias paths']);
    expect([read(t.x, 'f.txt'), read(t.y, 'f.txt')]).toEqual(['fx', 'fy']);
    expect((await post('/api/fs/remove', { dir: t.mp, names: ['u.txt'] })).code).toBe(200);
    expect(read(t.y, 'u.txt')).toBeUndefined();
    expect((await post('/api/fs/mkdir', { path: `${t.mp}/yonly/sub` })).code).toBe(200);
    expect(existsSync(path.join(t.y, 'yonly/sub'))).toBe(true);
    expect((await post('/api/fs/mkdir', { path: `${t.mp}/top` })).message).toMatch(/path conflict/);
  });

  it('write deterministic_or_all changes one holder or every target, and refuses some-but-not-all (leak)', async () => {
    const t = await setup({ write_conflict_policy: 'deterministic_or_all' });
    const r = await post('/api/fs/rename', { path: `${t.mp}/f.txt`, name: 'g.txt' });
    expect([r.code, r.message]).toEqual([500, 'leak some of same-name dirs: f.txt is missing from some alias paths']);
    expect((await post('/api/fs/rename', { path: `${t.mp}/a.txt`, name: 'b.txt' })).code).toBe(200);
    expect([read(t.x, 'b.txt'), read(t.y, 'b.txt'), read(t.z, 'b.txt'), read(t.x, 'a.txt')]).toEqual(['ax', 'ay', 'az', undefined]);
    expect((await post('/api/fs/rename', { path: `${t.mp}/u.txt`, name: 'v.txt' })).code).toBe(200);
    expect(read(t.y, 'v.txt')).toBe('uy');
    expect((await post('/api/fs/mkdir', { path: `${t.mp}/top` })).code).toBe(200);
    for (const d of [t.x, t.y, t.z]) expect(existsSync(path.join(d, 'top'))).toBe(true);
  });

  it('write all changes every target holding the object; all_strict refuses unless every target holds it', async () => {
    const t = await setup({ write_conflict_policy: 'all' });
    expect((await post('/api/fs/rename', { path: `${t.mp}/f.txt`, name: 'g.txt' })).code).toBe(200);
    expect([read(t.x, 'g.txt'), read(t.y, 'g.txt'), read(t.z, 'g.txt'), read(t.x, 'f.txt'), read(t.y, 'f.txt')]).toEqual(['fx', 'fy', undefined, undefined, undefined]);
    expect((await post('/api/fs/mkdir', { path: `${t.mp}/xy/sub` })).code).toBe(200);
    expect([existsSync(path.join(t.x, 'xy/sub')), existsSync(path.join(t.y, 'xy/sub')), existsSync(path.join(t.z, 'xy'))]).toEqual([true, true, false]);
    expect((await post('/api/fs/remove', { dir: t.mp, names: ['a.txt'] })).code).toBe(200);
    for (const d of [t.x, t.y, t.z]) expect(read(d, 'a.txt')).toBeUndefined();
    expect((await post('/api/fs/get', { path: `${t.mp}/a.txt` })).message).toMatch(/object not found/);

    const st = await setup({ write_conflict_policy: 'all_strict' });
    const r = await post('/api/fs/remove', { dir: st.mp, names: ['f.txt'] });
    expect([r.code, r.message]).toEqual([500, 'leak some of same-name dirs: f.txt is missing from some alias paths']);
    expect((await post('/api/fs/mkdir', { path: `${st.mp}/xy/sub` })).message).toMatch(/leak some of same-name dirs/);
    expect([read(st.x, 'f.txt'), read(st.y, 'f.txt')]).toEqual(['fx', 'fy']);
    expect((await post('/api/fs/rename', { path: `${st.mp}/a.txt`, name: 'b.txt' })).code).toBe(200);
    expect([read(st.x, 'b.txt'), read(st.y, 'b.txt'), read(st.z, 'b.txt')]).toEqual(['ax', 'ay', 'az']);
  });

  it('put first, deterministic, deterministic_or_all, all and all_strict: where an upload lands, and the refusals', async () => {
    const first = await setup({ put_conflict_policy: 'first' });
    expect((await upload(`${first.mp}/xy/n.txt`, 'N1')).code).toBe(200);
    expect([read(first.x, 'xy/n.txt'), read(first.y, 'xy/n.txt')]).toEqual(['N1', undefined]);

    const det = await setup({ put_conflict_policy: 'deterministic' });
    const refused = await upload(`${det.mp}/xy/n.txt`, 'N2');
    expect([refused.code, refused.message]).toEqual([500, 'path conflict: xy exists in several alias paths']);
    expect((await upload(`${det.mp}/yonly/n.txt`, 'N2')).code).toBe(200);
    expect(read(det.y, 'yonly/n.txt')).toBe('N2');

    const dora = await setup({ put_conflict_policy: 'deterministic_or_all' });
    expect((await upload(`${dora.mp}/xy/n.txt`, 'N3')).message).toMatch(/^leak some of same-name dirs: xy/);
    expect(read(dora.x, 'xy/n.txt')).toBeUndefined();
    expect((await upload(`${dora.mp}/n.txt`, 'N3')).code).toBe(200);
    expect([read(dora.x, 'n.txt'), read(dora.y, 'n.txt'), read(dora.z, 'n.txt')]).toEqual(['N3', 'N3', 'N3']);

    const all = await setup({ put_conflict_policy: 'all' });
    expect((await upload(`${all.mp}/xy/n.txt`, 'N4'.repeat(5000))).code).toBe(200);
    expect([read(all.x, 'xy/n.txt'), read(all.y, 'xy/n.txt'), read(all.z, 'xy/n.txt')]).toEqual(['N4'.repeat(5000), 'N4'.repeat(5000), undefined]);
    expect((await upload(`${all.mp}/n.txt`, 'root')).code).toBe(200);
    expect([read(all.x, 'n.txt'), read(all.y, 'n.txt'), read(all.z, 'n.txt')]).toEqual(['root', 'root', 'root']);

    const strict = await setup({ put_conflict_policy: 'all_strict' });
    expect((await upload(`${strict.mp}/xy/n.txt`, 'N5')).message).toMatch(/^leak some of same-name dirs/);
    expect((await upload(`${strict.mp}/n.txt`, 'N5')).code).toBe(200);
    expect([read(strict.x, 'n.txt'), read(strict.y, 'n.txt'), read(strict.z, 'n.txt')]).toEqual(['N5', 'N5', 'N5']);

    const off = await setup({ put_conflict_policy: 'disabled', write_conflict_policy: 'all' });
    const r = await upload(`${off.mp}/n.txt`, 'no');
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/permission denied.*put_conflict_policy is disabled/);
    for (const d of [off.x, off.y, off.z]) expect(read(d, 'n.txt')).toBeUndefined();
  });

  it('put random sends each upload to one target holding the folder, spread over all of them', async () => {
    const t = await setup({ put_conflict_policy: 'random' });
    const counts = [0, 0, 0];
    for (let i = 0; i < 36; i++) {
      expect((await upload(`${t.mp}/r${i}.txt`, `r${i}`)).code).toBe(200);
      const where = [t.x, t.y, t.z].map((d) => read(d, `r${i}.txt`) === `r${i}`);
      expect(where.filter(Boolean)).toHaveLength(1);
      counts[where.indexOf(true)]!++;
    }
    // Each target has a 1/3 chance per upload: all 36 missing one target is ~(2/3)^36 ≈ 5e-7.
    for (const c of counts) expect(c).toBeGreaterThan(0);
    expect(counts.reduce((a, b) => a + b)).toBe(36);
    // A folder only y holds takes every upload into y.
    for (let i = 0; i < 5; i++) expect((await upload(`${t.mp}/yonly/q${i}.txt`, 'q')).code).toBe(200);
    for (let i = 0; i < 5; i++) expect(read(t.y, `yonly/q${i}.txt`)).toBe('q');
  });

  it('put quota prefers targets whose storage reports enough free space; quota_strict refuses when none can tell', async () => {
    // /inner-* are Aliases: they report no usage. The Local storage reports its file system's.
    const local = makeTree({ 'keep.txt': 'k' });
    const hidden = [makeTree({ 'keep.txt': 'k' }), makeTree({ 'keep.txt': 'k' })];
    dirs.push(local, ...hidden);
    expect((await post('/api/admin/storage/create', localStorage('/qlocal', local))).code).toBe(200);
    for (const [i, d] of hidden.entries()) {
      expect((await post('/api/admin/storage/create', localStorage(`/qhidden${i}`, d))).code).toBe(200);
      await mount(s, admin, `/qinner${i}`, 'Alias', { paths: `/qhidden${i}`, put_conflict_policy: 'first', write_conflict_policy: 'first' });
    }
    await mount(s, admin, '/quota', 'Alias', { paths: 'd:/qinner0\nd:/qlocal\nd:/qinner1', put_conflict_policy: 'quota' });
    for (let i = 0; i < 8; i++) expect((await upload(`/quota/q${i}.txt`, `q${i}`)).code).toBe(200);
    for (let i = 0; i < 8; i++) expect([read(local, `q${i}.txt`), read(hidden[0]!, `q${i}.txt`), read(hidden[1]!, `q${i}.txt`)]).toEqual([`q${i}`, undefined, undefined]);

    await mount(s, admin, '/quota-strict', 'Alias', { paths: 'd:/qinner0\nd:/qinner1', put_conflict_policy: 'quota_strict' });
    const r = await upload('/quota-strict/s.txt', 'strict');
    expect([r.code, r.message]).toEqual([500, 'none of same-name dirs has enough space for /']);
    for (const d of hidden) expect(read(d, 's.txt')).toBeUndefined();

    // quota with no target able to tell its space: one at random of them, spread over both.
    await mount(s, admin, '/quota-blind', 'Alias', { paths: 'd:/qinner0\nd:/qinner1', put_conflict_policy: 'quota' });
    const counts = [0, 0];
    for (let i = 0; i < 24; i++) {
      expect((await upload(`/quota-blind/b${i}.txt`, 'b')).code).toBe(200);
      const where = hidden.map((d) => read(d, `b${i}.txt`) === 'b');
      expect(where.filter(Boolean)).toHaveLength(1);
      counts[where.indexOf(true)]!++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(0);
  });

  it('copy reads the copy the read policy serves and writes it into every folder the put policy picks; move takes the copies the write policy picks', async () => {
    const t = await setup({ put_conflict_policy: 'all', write_conflict_policy: 'all' });
    expect((await post('/api/fs/copy', { src_dir: t.mp, dst_dir: `${t.mp}/xy`, names: ['f.txt'] })).code).toBe(200);
    expect([read(t.x, 'xy/f.txt'), read(t.y, 'xy/f.txt'), read(t.x, 'f.txt'), read(t.y, 'f.txt')]).toEqual(['fx', 'fx', 'fx', 'fy']);

    // u.txt only in y: y's folder takes it by a move, x's by a copy; it leaves the source.
    expect((await post('/api/fs/move', { src_dir: t.mp, dst_dir: `${t.mp}/xy`, names: ['u.txt'] })).code).toBe(200);
    expect([read(t.x, 'xy/u.txt'), read(t.y, 'xy/u.txt'), read(t.y, 'u.txt')]).toEqual(['uy', 'uy', undefined]);
    // a.txt in all three, into xy/ (x and y): x's and y's copies move, z's is removed.
    expect((await post('/api/fs/move', { src_dir: t.mp, dst_dir: `${t.mp}/xy`, names: ['a.txt'] })).code).toBe(200);
    expect([read(t.x, 'xy/a.txt'), read(t.y, 'xy/a.txt'), read(t.x, 'a.txt'), read(t.y, 'a.txt'), read(t.z, 'a.txt')]).toEqual(['ax', 'ay', undefined, undefined, undefined]);
    expect(await names(s, admin, t.mp)).not.toContain('a.txt');

    const off = await setup({ put_conflict_policy: 'disabled', write_conflict_policy: 'all' });
    const r = await post('/api/fs/copy', { src_dir: off.mp, dst_dir: `${off.mp}/xy`, names: ['u.txt'] });
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/put_conflict_policy is disabled/);
    expect(read(off.y, 'xy/u.txt')).toBeUndefined();
  });

  it('read random and all serve every target holding the file; first only the first', async () => {
    const same = [{ 's.txt': 'AAAA' }, { 's.txt': 'BBBB' }, { 's.txt': 'CCCC' }];
    const seen = async (mp: string, range?: string) => {
      const got = new Set<string>();
      for (let i = 0; i < 30; i++) {
        const r = await download(s, `${mp}/s.txt`, range);
        expect(r.status).toBe(range ? 206 : 200);
        got.add(r.body.toString());
      }
      return [...got].sort();
    };
    expect(await seen((await setup({}, same)).mp)).toEqual(['AAAA']);
    expect(await seen((await setup({ read_conflict_policy: 'random' }, same)).mp)).toEqual(['AAAA', 'BBBB', 'CCCC']);
    const all = await setup({ read_conflict_policy: 'all' }, same);
    expect(await seen(all.mp, 'bytes=1-2')).toEqual(['AA', 'BB', 'CC']);
    expect(await seen(all.mp)).toEqual(['AAAA', 'BBBB', 'CCCC']);
    expect((await post('/api/fs/get', { path: `${all.mp}/s.txt` })).data.size).toBe(4);
  });

  it('file_consistency_check: a copy unlike the first target\'s is not the same file for reads and writes', async () => {
    const trees = [{ 'c.txt': 'same' }, { 'c.txt': 'other!' }, { 'c.txt': 'SAME' }];
    const seen = async (mp: string) => {
      const got = new Set<string>();
      for (let i = 0; i < 30; i++) got.add((await download(s, `${mp}/c.txt`)).body.toString());
      return [...got].sort();
    };
    // Without the check every copy is read; with it, y's copy of another size never is.
    expect(await seen((await setup({ read_conflict_policy: 'random' }, trees)).mp)).toEqual(['SAME', 'other!', 'same']);
    expect(await seen((await setup({ read_conflict_policy: 'random', file_consistency_check: true }, trees)).mp)).toEqual(['SAME', 'same']);
    expect(await seen((await setup({ read_conflict_policy: 'all', file_consistency_check: true }, trees)).mp)).toEqual(['SAME', 'same']);

    const all = await setup({ write_conflict_policy: 'all', file_consistency_check: true }, trees);
    expect((await post('/api/fs/rename', { path: `${all.mp}/c.txt`, name: 'd.txt' })).code).toBe(200);
    expect([read(all.x, 'd.txt'), read(all.y, 'c.txt'), read(all.z, 'd.txt')]).toEqual(['same', 'other!', 'SAME']);

    const strict = await setup({ write_conflict_policy: 'all_strict', file_consistency_check: true }, trees);
    const r = await post('/api/fs/remove', { dir: strict.mp, names: ['c.txt'] });
    expect([r.code, r.message]).toEqual([500, 'leak some of same-name dirs: c.txt is missing from some alias paths']);
    for (const [d, body] of [[strict.x, 'same'], [strict.y, 'other!'], [strict.z, 'SAME']] as const) expect(read(d, 'c.txt')).toBe(body);
    const unchecked = await setup({ write_conflict_policy: 'all_strict' }, trees);
    expect((await post('/api/fs/remove', { dir: unchecked.mp, names: ['c.txt'] })).code).toBe(200);
    for (const d of [unchecked.x, unchecked.y, unchecked.z]) expect(read(d, 'c.txt')).toBeUndefined();
  });
});

// Two Local folders merged under one name (so shown flat at the mount); writes go to the first
// target holding the parent folder, reads to the first holding the object.
driverConformance('Alias (two merged Local folders)', async () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'atrium-conf-alias-'));
  const first = path.join(base, 'first');
  mkdirSync(first);
  const second = makeTree({ 'only-in-second.txt': 'second' }, path.join(base, 'second'));
  mountLocalsOnNextStart({ '/target1': first, '/target2': second });
  return {
    storage: { driver: 'Alias', addition: { paths: 'd:/target1\nd:/target2', protect_same_name: false } },
    seed: async (tree) => writeTree(first, tree),
    peerRead: async (rel) => readHostFile(first, rel) ?? readHostFile(second, rel),
    teardown: async () => rmSync(base, { recursive: true, force: true }),
  };
});
