import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe.each(BACKENDS)('storages and drivers admin on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({ 'a.txt': 'A', 'sub/b.txt': 'B' });
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('lists drivers with common, additional and config as the original describes', async () => {
    expect((await s.api('GET', '/api/admin/driver/names', { token: admin })).data).toContain('Local');
    const info = (await s.api('GET', '/api/admin/driver/info?driver=Local', { token: admin })).data;
    expect(info.common.map((i: any) => i.name)).toEqual([
      'mount_path', 'order', 'remark', 'cache_expiration', 'webdav_policy', 'down_proxy_url', 'order_by', 'order_direction', 'extract_folder', 'enable_sign',
    ]);
    expect(info.common[4]).toMatchObject({ type: 'select', options: 'use_proxy_url,native_proxy', default: 'native_proxy', required: true });
    expect(info.additional.map((i: any) => i.name)).toEqual([
      'root_folder_path', 'directory_size', 'thumbnail', 'thumb_cache_folder', 'thumb_concurrency', 'video_thumb_pos', 'show_hidden', 'mkdir_perm', 'recycle_bin_path', 'follow_symlinks',
    ]);
    expect(info.additional[0]).toMatchObject({ name: 'root_folder_path', type: 'string', default: '/', required: true });
    expect(info.config).toMatchObject({ name: 'Local', local_sort: true, only_local: true, no_upload: false, default_root: '/' });
    const list = (await s.api('GET', '/api/admin/driver/list', { token: admin })).data;
    expect(list.Local).toEqual(info);
    expect(await s.api('GET', '/api/admin/driver/info?driver=Nope', { token: admin })).toEqual({ code: 404, message: 'driver [Nope] not found', data: null });
  });

  it('creates, reads, updates, disables, enables and deletes a storage', async () => {
    const created = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/mnt//one/', root, { remark: 'r1' }) });
    expect(created.code).toBe(200);
    const id = created.data.id;
    expect(id).toBeGreaterThan(0);
    const got = (await s.api('GET', `/api/admin/storage/get?id=${id}`, { token: admin })).data;
    expect(got).toMatchObject({ id, mount_path: '/mnt/one', driver: 'Local', status: 'work', remark: 'r1', disabled: false });
    expect(typeof got.addition).toBe('string');
    expect(JSON.parse(got.addition).root_folder_path).toBe(root);
    expect(got.modified).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/mnt/one' } })).data.total).toBe(2);

    expect((await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...got, mount_path: '/mnt/two' } })).code).toBe(200);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/mnt/two' } })).data.total).toBe(2);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/mnt/one' } })).code).toBe(500);
    expect((await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...got, driver: 'S3' } })).message).toBe('driver cannot be changed');

    expect((await s.api('POST', `/api/admin/storage/disable?id=${id}`, { token: admin })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/storage/get?id=${id}`, { token: admin })).data).toMatchObject({ disabled: true, status: 'disabled' });
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/mnt/two' } })).code).toBe(500);
    expect((await s.api('POST', `/api/admin/storage/disable?id=${id}`, { token: admin })).message).toBe('this storage have disabled');
    expect((await s.api('POST', `/api/admin/storage/enable?id=${id}`, { token: admin })).code).toBe(200);
    expect((await s.api('POST', `/api/admin/storage/enable?id=${id}`, { token: admin })).message).toBe('this storage have enabled');
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/mnt/two' } })).data.total).toBe(2);

    expect((await s.api('POST', `/api/admin/storage/delete?id=${id}`, { token: admin })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/storage/get?id=${id}`, { token: admin })).code).toBe(404);
  });

  it('keeps a storage whose driver fails to start, with its error as status; the server goes on', async () => {
    const bad = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/broken', '/nonexistent/atrium/root') });
    expect(bad.code).toBe(500);
    expect(bad.message).toMatch(/^failed init storage but storage is already created: failed init storage: root folder .* is not accessible/);
    expect(bad.data.id).toBeGreaterThan(0);
    const row = (await s.api('GET', `/api/admin/storage/get?id=${bad.data.id}`, { token: admin })).data;
    expect(row.status).toMatch(/not accessible/);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/broken' } })).message).toMatch(/^storage not init: failed init storage/);
    // a restart mounts the others and keeps this one's error
    const again = await s.restart();
    s = again;
    admin = await s.login();
    await s.core.storages.ready();
    expect((await s.api('GET', `/api/admin/storage/get?id=${bad.data.id}`, { token: admin })).data.status).toMatch(/not accessible/);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/' } })).code).toBe(200);
    await s.api('POST', `/api/admin/storage/delete?id=${bad.data.id}`, { token: admin });
  });

  it('refuses bad storage input with clear errors', async () => {
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/x', root, { driver: 'NoSuch' }) })).message).toBe('no driver named: NoSuch');
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: { ...localStorage('/x', root), addition: '{not json' } })).message).toMatch(/addition is not a JSON object/);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: { driver: 'Local' } })).message).toBe('mount_path is required');
    const first = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/dup', root) });
    const dup = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/dup', root) });
    expect(dup.code).toBe(500);
    expect(dup.data).toEqual({ id: 0 });
    const rel = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/rel', 'relative/dir') });
    expect(rel.code).toBe(500);
    expect(rel.message).toMatch(/must be absolute/);
    await s.api('POST', `/api/admin/storage/delete?id=${rel.data.id}`, { token: admin });
    await s.api('POST', `/api/admin/storage/delete?id=${first.data.id}`, { token: admin });
    expect((await s.api('POST', '/api/admin/storage/delete?id=999999', { token: admin })).code).toBe(404);
  });

  it('lists storages ordered by order then id, paged, with load_all answering at once', async () => {
    const a = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/o2', root, { order: 2 }) });
    const b = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/o1', root, { order: 1 }) });
    const list = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data;
    const paths = list.content.map((x: any) => x.mount_path);
    expect(paths.indexOf('/o1')).toBeLessThan(paths.indexOf('/o2'));
    expect(list.total).toBe(list.content.length);
    expect((await s.api('GET', '/api/admin/storage/list?page=1&per_page=1', { token: admin })).data.content).toHaveLength(1);
    expect((await s.api('POST', '/api/admin/storage/load_all', { token: admin })).code).toBe(200);
    await s.core.storages.ready();
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/o1' } })).data.total).toBe(2);
    for (const r of [a, b]) await s.api('POST', `/api/admin/storage/delete?id=${r.data.id}`, { token: admin });
  });
});
