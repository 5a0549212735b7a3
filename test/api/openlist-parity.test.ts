import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticHash } from '../../src/auth/password.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Every route the OpenList 4.2.6 front end calls on boot, on its file pages and on its manage
 * pages, sent with the front end's own parameters (its axios calls: JSON bodies, `?id=`
 * queries with an empty JSON body, upload headers), each answering code 200. The routes of
 * the BT tab and the Messenger page are checked to exist at the end.
 */
describe('OpenList front-end routes with its own parameters', () => {
  let s: TestServer;
  let token: string;
  let root: string;
  let storageId: number;

  /** The front end's axios: JSON for bodies, `Content-Type: application/json` even with none. */
  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await s.inject({
      method: method as 'GET',
      url,
      headers: { authorization: token, 'content-type': 'application/json', ...headers },
      payload: body === undefined ? '' : JSON.stringify(body),
    });
    expect(res.statusCode, `${method} ${url}`).toBe(200);
    return res.json() as { code: number; message: string; data: any };
  }
  const ok = async (method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await call(method, url, body, headers);
    expect(r.code, `${method} ${url}: ${r.message}`).toBe(200);
    return r.data;
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'a.txt': 'aaa', 'dir/b.txt': 'bbb', 'dir/empty/': '', 'dst/': '' });
    token = '';
    token = (await ok('POST', '/api/auth/login/hash', { username: 'admin', password: staticHash(ADMIN_PASSWORD), otp_code: '' })).token;
    storageId = (await ok('POST', '/api/admin/storage/create', localStorage('/local', root))).id;
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('boot and file pages', async () => {
    const settings = await ok('GET', '/api/public/settings');
    expect(settings.site_title).toBe('Atrium');
    expect((await ok('GET', '/api/public/archive_extensions')).every((e: string) => e.startsWith('.'))).toBe(true);
    expect(await ok('GET', `/api/public/offline_download_tools?path=${encodeURIComponent('/local')}`)).toContain('SimpleHttp');
    expect((await ok('GET', '/api/me')).username).toBe('admin');
    expect((await ok('POST', '/api/fs/get', { path: '/local', password: '' })).is_dir).toBe(true);
    const listed = await ok('POST', '/api/fs/list', { path: '/local', password: '', page: 1, per_page: 0, refresh: false });
    expect(listed.content.map((o: { name: string }) => o.name)).toEqual(['dir', 'dst', 'a.txt']);
    expect(listed.write_content_bypass).toBe(false);
    expect(await ok('POST', '/api/fs/dirs', { path: '/local', password: '', force_root: false })).toHaveLength(2);
    await ok('POST', '/api/fs/mkdir', { path: '/local/new' });
    await ok('POST', '/api/fs/rename', { path: '/local/new', name: 'newer', overwrite: false });
    await ok('POST', '/api/fs/batch_rename', { src_dir: '/local', rename_objects: [{ src_name: 'newer', new_name: 'newest' }] });
    await ok('POST', '/api/fs/copy', { src_dir: '/local', dst_dir: '/local/dst', names: ['a.txt'], overwrite: false, skip_existing: false, merge: false });
    await ok('POST', '/api/fs/move', { src_dir: '/local/dir', dst_dir: '/local/dst', names: ['b.txt'], overwrite: false, skip_existing: false });
    await ok('POST', '/api/fs/recursive_move', { src_dir: '/local/newest', dst_dir: '/local/dst', conflict_policy: 'cancel' });
    await ok('POST', '/api/fs/remove_empty_directory', { src_dir: '/local/dir' });
    await waitFor(() => existsSync(path.join(root, 'dst', 'a.txt')), 5000);
    expect(readFileSync(path.join(root, 'dst', 'b.txt'), 'utf8')).toBe('bbb');
    expect(existsSync(path.join(root, 'dir', 'empty'))).toBe(false);
    // uploads: the stream uploader's headers, then the form uploader
    const put = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: token, 'file-path': encodeURIComponent('/local/up.txt'), 'as-task': 'false', overwrite: 'true', password: '', 'content-type': 'text/plain', 'last-modified': String(Date.now()) }, payload: 'uploaded' });
    expect(put.json().code).toBe(200);
    expect(readFileSync(path.join(root, 'up.txt'), 'utf8')).toBe('uploaded');
    expect(await ok('POST', '/api/fs/get_direct_upload_info', { path: '/local', file_name: 'x.bin', file_size: 3, tool: 'HttpDirect' })).toBeNull();
    await ok('POST', '/api/fs/remove', { dir: '/local', names: ['up.txt'] });
    expect(existsSync(path.join(root, 'up.txt'))).toBe(false);
    await ok('POST', '/api/me/update', { username: 'admin', password: '', sso_id: '' });
    expect(await ok('GET', '/api/me/sshkey/list')).toEqual({ content: [], total: 0 });
  });

  it('manage pages: settings, users, storages, metas, tasks', async () => {
    for (const group of [1, 2, 3, 4, 7, 8, 9, 10, 11]) expect((await ok('GET', `/api/admin/setting/list?group=${group}`)).length, `group ${group}`).toBeGreaterThan(0);
    expect((await ok('GET', '/api/admin/setting/list?groups=5,0')).length).toBeGreaterThan(0);
    expect((await ok('POST', '/api/admin/setting/default?group=1')).length).toBeGreaterThan(0);
    await ok('POST', '/api/admin/setting/save', [{ key: 'site_title', value: 'Parity' }]);
    // users
    expect((await ok('GET', '/api/admin/user/list')).total).toBe(2);
    await ok('POST', '/api/admin/user/create', { username: 'pat', password: 'pat-pass-1', base_path: '/', role: 0, permission: 0, disabled: false, sso_id: '' });
    const pat = (await ok('GET', '/api/admin/user/list')).content.find((u: { username: string }) => u.username === 'pat');
    expect((await ok('GET', `/api/admin/user/get?id=${pat.id}`)).username).toBe('pat');
    await ok('POST', '/api/admin/user/update', { ...pat, base_path: '/local' });
    await ok('POST', `/api/admin/user/cancel_2fa?id=${pat.id}`);
    expect(await ok('GET', `/api/admin/user/sshkey/list?uid=${pat.id}`)).toEqual({ content: [], total: 0 });
    await ok('POST', `/api/admin/user/delete?id=${pat.id}`);
    // storages and drivers
    expect((await ok('GET', '/api/admin/storage/list')).content.length).toBe(2);
    const st = await ok('GET', `/api/admin/storage/get?id=${storageId}`);
    await ok('POST', '/api/admin/storage/update', { ...st, remark: 'from the parity test' });
    await ok('POST', `/api/admin/storage/disable?id=${storageId}`);
    await ok('POST', `/api/admin/storage/enable?id=${storageId}`);
    await ok('POST', '/api/admin/storage/load_all');
    expect(await ok('GET', '/api/admin/driver/names')).toContain('Local');
    expect(Object.keys(await ok('GET', '/api/admin/driver/list'))).toContain('Local');
    expect((await ok('GET', '/api/admin/driver/info?driver=Local')).config.name).toBe('Local');
    // metas
    await ok('POST', '/api/admin/meta/create', { path: '/local/dst', password: '', p_sub: false, write: true, w_sub: false, hide: '', h_sub: false, readme: '', r_sub: false, header: '', header_sub: false });
    const meta = (await ok('GET', '/api/admin/meta/list')).content[0];
    expect((await ok('GET', `/api/admin/meta/get?id=${meta.id}`)).path).toBe('/local/dst');
    await ok('POST', '/api/admin/meta/update', { ...meta, readme: 'hello' });
    await ok('POST', `/api/admin/meta/delete?id=${meta.id}`);
    // tasks pages, every kind the front end shows
    for (const kind of ['upload', 'copy', 'move', 'offline_download', 'offline_download_transfer', 'decompress', 'decompress_upload']) {
      expect(Array.isArray(await ok('GET', `/api/task/${kind}/undone`)), kind).toBe(true);
      expect(Array.isArray(await ok('GET', `/api/task/${kind}/done`)), kind).toBe(true);
      await ok('POST', `/api/task/${kind}/clear_done`);
      await ok('POST', `/api/task/${kind}/clear_succeeded`);
      await ok('POST', `/api/task/${kind}/retry_failed`);
    }
  });

  it('indexes page: index settings, build, progress, search, manual scan', async () => {
    await ok('POST', '/api/admin/setting/save', [{ key: 'search_index', value: 'database' }]);
    await ok('POST', '/api/admin/index/build', { paths: ['/'], max_depth: -1 });
    await waitFor(async () => {
      const p = await ok('GET', '/api/admin/index/progress');
      return p.is_done && p.obj_count > 0;
    }, 10_000);
    const hits = await ok('POST', '/api/fs/search', { parent: '/', keywords: 'b', scope: 0, page: 1, per_page: 100, password: '' });
    expect(hits.content.map((h: { parent: string; name: string }) => `${h.parent}/${h.name}`)).toEqual(['/local/dst/b.txt']);
    await ok('POST', '/api/admin/index/update', { paths: ['/local'], max_depth: -1 });

    await ok('POST', '/api/admin/scan/start', { path: '/local', limit: 0 });
    const done = await waitFor(async () => {
      const p = await ok('GET', '/api/admin/scan/progress');
      return p.is_done ? p : undefined;
    }, 10_000);
    expect(done.obj_count).toBeGreaterThan(3);
  });

  it('the routes the 4.2.6 front end calls for the BT tab and the Messenger page exist (their behaviour: torrent-messages-cloud.test.ts)', async () => {
    const called: Array<[string, string, unknown?]> = [
      ['POST', '/api/admin/message/get'],
      ['POST', '/api/admin/message/send', { message: 'x' }],
      ['POST', '/api/fs/torrent/parse', { torrent_data: '' }],
      ['POST', '/api/fs/torrent/rapid_upload', { torrent_data: '', path: '/' }],
    ];
    for (const [method, url, body] of called) {
      const r = await call(method, url, body);
      expect(r.message, `${method} ${url}`).not.toBe(`route ${method} ${url} not found`);
      expect(r.code, `${method} ${url}: ${r.message}`).not.toBe(200); // each answers what it lacks (no message waiting, no torrent)
    }
  });
});
