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
    expect(info.data.additional.map((i: any) => [i.name, i.type, i.default])).toEqual([
      ['paths', 'text', ''],
      ['protect_same_name', 'bool', 'true'],
    ]);
    expect(info.data.config).toMatchObject({ name: 'Alias', local_sort: true, no_cache: true });
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
