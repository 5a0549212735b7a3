import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsTreeSource } from '../../src/search/tree.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hits, waitIdle } from './helpers.js';

const FOLDERS = 40;
const FILES = 60;
/** `/r` and `/t` (mount folders of `/`), the folders of `/r` and their files. */
const TOTAL = 2 + FOLDERS + FOLDERS * FILES;

const pad = (n: number) => String(n).padStart(2, '0');

/** The live tree, each listing slowed down so a test can act while a build runs. */
function slowSource(s: TestServer, ms: number) {
  const live = new FsTreeSource(s.core.fs);
  return {
    list: async (dir: string) => {
      await new Promise((r) => setTimeout(r, ms));
      return live.list(dir);
    },
    stat: (p: string) => live.stat(p),
  };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(BACKENDS)('index build lifecycle on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let other: string;

  const progress = async () => (await s.api('GET', '/api/admin/index/progress', { token: admin })).data;
  const post = (url: string, body?: unknown) => s.api('POST', url, { token: admin, body });

  beforeAll(async () => {
    const tree: Record<string, string> = {};
    for (let d = 0; d < FOLDERS; d++) for (let f = 0; f < FILES; f++) tree[`d${pad(d)}/file-${pad(d)}-${pad(f)}.txt`] = 'x';
    root = makeTree(tree);
    other = makeTree({});
    s = await startServer(backend);
    admin = await s.login();
    expect((await post('/api/admin/storage/create', localStorage('/r', root))).code).toBe(200);
    expect((await post('/api/admin/storage/create', localStorage('/t', other))).code).toBe(200);
    expect((await post('/api/admin/setting/save', [{ key: 'search_index', value: 'database' }, { key: 'auto_update_index', value: 'true' }])).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });

  it('stop ends a running build, keeps what it wrote and records the stop', async () => {
    s.core.search.useSource(slowSource(s, 40));
    expect((await post('/api/admin/index/build')).code).toBe(200);
    expect(await post('/api/admin/index/build')).toEqual({ code: 400, message: 'index is running', data: null });
    expect(await post('/api/admin/index/clear')).toEqual({ code: 400, message: 'index is running', data: null });
    await until('a first batch', async () => (await s.core.repos.searchNodes.count()) > 0);
    const during = await progress();
    expect(during.is_done).toBe(false);
    expect(during.last_done_time).toBeNull();
    expect(await post('/api/admin/index/stop')).toEqual({ code: 200, message: 'success', data: null });
    await waitIdle(s);
    const after = await progress();
    expect(after).toMatchObject({ is_done: true, error: 'index build stopped' });
    const count = await s.core.repos.searchNodes.count();
    expect(count).toBe(after.obj_count);
    expect(count).toBeLessThan(TOTAL);
    expect(await s.core.repos.searchNodes.getState('build')).toBeUndefined();
    s.core.search.useSource(undefined);
  });

  it('a build interrupted by a restart resumes where it was, without duplicates', async () => {
    expect((await post('/api/admin/index/clear')).code).toBe(200);
    s.core.search.useSource(slowSource(s, 40));
    expect((await post('/api/admin/index/build')).code).toBe(200);
    await until('a first batch', async () => (await s.core.repos.searchNodes.count()) >= 1000);
    const early = await s.core.repos.searchNodes.find('/r/d00', 'file-00-00.txt');
    expect(early).toBeDefined();
    expect(await s.core.repos.searchNodes.getState('build')).toBeDefined();
    s = await s.restart();
    admin = await s.login();
    await until('the resumed build to finish', async () => (await progress()).is_done === true);
    await waitIdle(s);
    const done = await progress();
    expect(done).toMatchObject({ obj_count: TOTAL, is_done: true, error: '' });
    expect(await s.core.repos.searchNodes.count()).toBe(TOTAL);
    // rows written before the restart were kept (same id), not rebuilt
    expect((await s.core.repos.searchNodes.find('/r/d00', 'file-00-00.txt'))?.id).toBe(early!.id);
    const last = `file-${pad(FOLDERS - 1)}-${pad(FILES - 1)}.txt`;
    expect(hits(await s.api('POST', '/api/fs/search', { token: admin, body: { keywords: last, page: 1, per_page: 10 } }))).toEqual([`/r/d${pad(FOLDERS - 1)}/${last}`]);
    expect(await s.core.repos.searchNodes.getState('build')).toBeUndefined();
  });

  it('follows cross-storage copy and move tasks', async () => {
    const copied = await post('/api/fs/copy', { src_dir: '/r', dst_dir: '/t', names: ['d03'] });
    expect(copied.code).toBe(200);
    await s.core.tasks.get(copied.data.tasks[0].id)!.done;
    await waitIdle(s);
    const search = async (keywords: string) =>
      hits(await s.api('POST', '/api/fs/search', { token: admin, body: { keywords, page: 1, per_page: 100 } })).sort();
    expect(await search('file-03-07')).toEqual(['/r/d03/file-03-07.txt', '/t/d03/file-03-07.txt']);
    const moved = await post('/api/fs/move', { src_dir: '/r', dst_dir: '/t', names: ['d04'] });
    await s.core.tasks.get(moved.data.tasks[0].id)!.done;
    await waitIdle(s);
    expect(await search('file-04-01')).toEqual(['/t/d04/file-04-01.txt']);
    expect(await s.core.repos.searchNodes.count()).toBe(TOTAL + 1 + FILES);
  });
});
