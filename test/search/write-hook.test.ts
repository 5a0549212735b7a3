import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { buildIndex, hits, waitIdle } from './helpers.js';

/** OpenList's `handle_hook_after_writing` and `handle_hook_rate_limit`: whether and how fast the index follows writes. */
describe('the index hook after writing', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  const save = async (key: string, value: string) => expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key, value }] })).code).toBe(200);
  const search = async (keywords: string) => hits(await s.api('POST', '/api/fs/search', { token: admin, body: { parent: '/', keywords, page: 1, per_page: 100 } }));
  const mkdir = async (p: string) => expect((await s.api('POST', '/api/fs/mkdir', { token: admin, body: { path: p } })).code).toBe(200);

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({ 'base.txt': 'b', 'tree/t1/t2/t3/leaf.txt': 'leaf', 'dst/': '' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    await save('search_index', 'database');
    await save('auto_update_index', 'true');
    await buildIndex(s, admin);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('is on by default: a new folder is indexed after the write', async () => {
    expect(s.core.settings.get('handle_hook_after_writing')).toBe('true');
    await mkdir('/s/alpha');
    await waitIdle(s);
    expect(await search('alpha')).toEqual(['/s/alpha']);
  });

  it('off, writes leave the index alone (a build still sees them)', async () => {
    await save('handle_hook_after_writing', 'false');
    try {
      await mkdir('/s/beta');
      await waitIdle(s);
      await new Promise((r) => setTimeout(r, 300));
      await waitIdle(s);
      expect(await search('beta')).toEqual([]);
      await buildIndex(s, admin);
      expect(await search('beta')).toEqual(['/s/beta']);
    } finally {
      await save('handle_hook_after_writing', 'true');
    }
  });

  it('handle_hook_rate_limit caps the folders listed per second while following a write', async () => {
    await save('handle_hook_rate_limit', '2');
    try {
      const started = Date.now();
      const r = await s.api('POST', '/api/fs/copy', { token: admin, body: { src_dir: '/s', dst_dir: '/s/dst', names: ['tree'] } });
      expect(r.code).toBe(200);
      await waitIdle(s);
      // the copy lands in /s/dst: dst, tree, t1, t2 and t3 are listed at 2 per second, so at least two seconds
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect((await search('leaf')).sort()).toEqual(['/s/dst/tree/t1/t2/t3/leaf.txt', '/s/tree/t1/t2/t3/leaf.txt']);
    } finally {
      await save('handle_hook_rate_limit', '0');
    }
  });
});
