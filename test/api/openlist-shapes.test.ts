import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Where OpenList v4 answers differently from AList v3, Atrium answers as OpenList
 * (openlist-v4-gap.md §5): one test per shape difference, each on the real outputs.
 */
describe('OpenList v4 shapes', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let plainId: number;
  let plain: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({ 'a.txt': 'hello', 'docs/b.md': '# b', 'docs/deep/c.txt': 'c', 'drop/': '' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/local', root, { cache_expiration: 30 }) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'plain', password: 'plain-pass-1', base_path: '/', permission: 0 } })).code).toBe(200);
    plainId = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.username === 'plain').id;
    plain = await s.login('plain', 'plain-pass-1');
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  const setting = async (key: string, value: string) => expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key, value }] })).code).toBe(200);
  const list = (p: string, token = admin) => s.api('POST', '/api/fs/list', { token, body: { path: p, password: '', page: 1, per_page: 0, refresh: false } });

  it('archive_extensions answers a list of extensions in OpenList shape, for any method', async () => {
    for (const method of ['GET', 'POST']) {
      const r = await s.api(method, '/api/public/archive_extensions');
      expect(r.code).toBe(200);
      expect(Array.isArray(r.data) && r.data.every((e: unknown) => typeof e === 'string' && e.startsWith('.'))).toBe(true);
    }
  });

  it('fs/list carries write_content_bypass (true only under a write rule) and no direct_upload_tools', async () => {
    const before = await list('/local', plain);
    expect(before.data.write_content_bypass).toBe(false);
    expect(before.data.write).toBe(false);
    expect('direct_upload_tools' in before.data).toBe(false);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/local/drop', write: true, w_sub: false } })).code).toBe(200);
    const drop = await list('/local/drop', plain);
    expect([drop.data.write_content_bypass, drop.data.write]).toEqual([true, true]);
    expect((await list('/local/docs', plain)).data.write_content_bypass).toBe(false);
  });

  it('mount_details: on mount points in fs/list and fs/get only when hide_storage_details is off', async () => {
    const hidden = await list('/');
    expect(hidden.data.content.map((o: any) => o.name)).toContain('local');
    expect(hidden.data.content.every((o: any) => !('mount_details' in o))).toBe(true);
    await setting('hide_storage_details', 'false');
    try {
      const shown = (await list('/')).data.content.find((o: any) => o.name === 'local');
      const d = shown.mount_details;
      expect(d.driver_name).toBe('Local');
      expect(d.total_space).toBeGreaterThan(0);
      expect(d.free_space).toBeGreaterThan(0);
      expect(d.free_space).toBeLessThanOrEqual(d.total_space);
      expect(d.used_space).toBe(d.total_space - d.free_space);
      // ordinary folders never carry it, nor files
      expect((await list('/local')).data.content.every((o: any) => !('mount_details' in o))).toBe(true);
      const got = await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/local', password: '' } });
      expect(got.data.mount_details).toMatchObject({ driver_name: 'Local', total_space: d.total_space });
      const sub = await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/local/docs', password: '' } });
      expect('mount_details' in sub.data).toBe(false);
    } finally {
      await setting('hide_storage_details', 'true');
    }
  });

  it('mount_details on admin/storage/list|get only when hide_storage_details_in_manage_page is off', async () => {
    const listed = () => s.api('GET', '/api/admin/storage/list', { token: admin });
    const st = (await listed()).data.content.find((x: any) => x.mount_path === '/local');
    expect('mount_details' in st).toBe(false);
    await setting('hide_storage_details_in_manage_page', 'false');
    try {
      const shown = (await listed()).data.content.find((x: any) => x.mount_path === '/local');
      expect(shown.mount_details.total_space).toBeGreaterThan(0);
      const one = await s.api('GET', `/api/admin/storage/get?id=${st.id}`, { token: admin });
      expect(one.data.mount_details.free_space).toBeGreaterThan(0);
    } finally {
      await setting('hide_storage_details_in_manage_page', 'true');
    }
  });

  it('search and index routes answer code 404 "search not available" with the index off', async () => {
    const off = { code: 404, message: 'search not available', data: null };
    expect(await s.api('POST', '/api/fs/search', { token: admin, body: { parent: '/', keywords: 'a', scope: 0, page: 1, per_page: 100, password: '' } })).toEqual(off);
    expect(await s.api('GET', '/api/admin/index/progress', { token: admin })).toEqual(off);
    for (const verb of ['build', 'stop', 'clear']) expect(await s.api('POST', `/api/admin/index/${verb}`, { token: admin })).toEqual(off);
    expect(await s.api('POST', '/api/admin/index/update', { token: admin, body: { paths: ['/'], max_depth: -1 } })).toEqual(off);
  });

  it('deleting a missing user answers as OpenList (code 500, its lookup error)', async () => {
    expect(await s.api('POST', '/api/admin/user/delete?id=9999', { token: admin })).toEqual({ code: 500, message: 'failed get old user: record not found', data: null });
  });

  it('an empty body under a JSON content type is ignored on ?id= routes', async () => {
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'gone', password: 'gone-pass-1', base_path: '/', permission: 0 } });
    const id = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.username === 'gone').id;
    const res = await s.inject({ method: 'POST', url: `/api/admin/user/delete?id=${id}`, headers: { authorization: admin, 'content-type': 'application/json' }, payload: '' });
    expect(res.json()).toEqual({ code: 200, message: 'success', data: null });
    expect((await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.map((u: any) => u.username)).not.toContain('gone');
    // a body that is there but broken is still refused
    const bad = await s.inject({ method: 'POST', url: `/api/admin/user/delete?id=${plainId}`, headers: { authorization: admin, 'content-type': 'application/json' }, payload: '{' });
    expect(bad.json()).toMatchObject({ code: 400, message: expect.stringMatching(/^invalid JSON body/) });
  });

  it('a trailing slash redirects as gin: 301 for GET, 307 for other methods including HEAD', async () => {
    const get = await s.inject({ method: 'GET', url: '/api/me/', headers: { authorization: admin } });
    expect([get.statusCode, get.headers.location]).toEqual([301, '/api/me']);
    const head = await s.inject({ method: 'HEAD', url: '/api/me/' });
    expect([head.statusCode, head.headers.location]).toEqual([307, '/api/me']);
    const post = await s.inject({ method: 'POST', url: '/api/fs/list/?x=1', headers: { authorization: admin } });
    expect([post.statusCode, post.headers.location]).toEqual([307, '/api/fs/list?x=1']);
    // following it lands on the route
    expect((await s.api('GET', get.headers.location as string, { token: admin })).data.username).toBe('admin');
    // no route behind the bare path: the usual 404 envelope
    const none = await s.inject({ method: 'GET', url: '/api/nothing/' });
    expect([none.statusCode, none.json().code]).toEqual([200, 404]);
  });

  it('get_direct_upload_info: null on a Local folder (no direct upload there) after OpenList checks', async () => {
    const info = (token: string, body: object, headers: Record<string, string> = {}) => s.api('POST', '/api/fs/get_direct_upload_info', { token, body, headers });
    expect(await info(admin, { path: '/local', file_name: 'new.bin', file_size: 10, tool: 'HttpDirect' })).toEqual({ code: 200, message: 'success', data: null });
    expect(await info(admin, { path: '/local', file_name: 'a.txt', file_size: 5, tool: 'HttpDirect' }, { overwrite: 'false' })).toEqual({ code: 403, message: 'file exists', data: null });
    expect((await info(plain, { path: '/local/docs', file_name: 'x.bin', file_size: 1, tool: 'HttpDirect' })).code).toBe(403);
    expect((await info(admin, { path: '/local', file_name: '../../etc/x', file_size: 1, tool: 'HttpDirect' })).code).toBe(403);
  });

  it('manual scan lists everything below a path again, counting objects, one scan at a time', async () => {
    // fill the listing cache, then change a file behind it (the folder's own mtime stays, so
    // only a real new listing sees the new size)
    const sizeOfB = async () => (await list('/local/docs')).data.content.find((o: any) => o.name === 'b.md').size;
    expect(await sizeOfB()).toBe(3);
    writeFileSync(path.join(root, 'docs', 'b.md'), '# b, longer now');
    expect(await sizeOfB()).toBe(3);
    expect(await s.api('POST', '/api/admin/scan/stop', { token: admin })).toEqual({ code: 400, message: 'manual scan is not running', data: null });
    expect((await s.api('POST', '/api/admin/scan/start', { token: admin, body: { path: '/local', limit: 0 } })).code).toBe(200);
    const done = await waitFor(async () => {
      const p = await s.api('GET', '/api/admin/scan/progress', { token: admin });
      return p.data.is_done ? p.data : undefined;
    }, 10_000);
    // /local: a.txt docs drop; docs: b.md deep; deep: c.txt; drop: nothing
    expect(done).toEqual({ obj_count: 6, is_done: true });
    expect(await sizeOfB()).toBe(15);
  });

  it('a second scan while one runs is refused; stop ends it', async () => {
    // a rate limit of 1 folder/s keeps this scan running long enough to be seen
    expect((await s.api('POST', '/api/admin/scan/start', { token: admin, body: { path: '/', limit: 1 } })).code).toBe(200);
    expect(await s.api('POST', '/api/admin/scan/start', { token: admin, body: { path: '/', limit: 0 } })).toEqual({ code: 400, message: 'manual scan is running, please try later', data: null });
    expect((await s.api('GET', '/api/admin/scan/progress', { token: admin })).data.is_done).toBe(false);
    expect((await s.api('POST', '/api/admin/scan/stop', { token: admin })).code).toBe(200);
    expect((await s.api('GET', '/api/admin/scan/progress', { token: admin })).data.is_done).toBe(true);
    expect((await s.api('POST', '/api/admin/scan/start', { token: admin, body: { path: '/', limit: -1 } })).code).toBe(400);
    expect((await s.api('GET', '/api/admin/scan/progress', { token: plain })).code).toBe(403);
  });
});
