import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { download, mount, storageRow } from './mount.js';

// The conformance suite needs a driver that holds its fixture; Virtual generates its tree, so it
// is tested here on what it promises: counts, size bounds, and listings, lookups and bytes that
// agree with each other.
describe('Virtual driver', () => {
  let s: TestServer;
  let admin: string;
  const list = async (p: string) => {
    const r = await s.api('POST', '/api/fs/list', { token: admin, body: { path: p, refresh: true } });
    expect(r.code, r.message).toBe(200);
    return r.data.content as Array<{ name: string; size: number; is_dir: boolean; modified: string }>;
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    await mount(s, admin, '/v', 'Virtual', { num_file: 7, num_folder: 3, min_file_size: 1000, max_file_size: 300_000 });
    await mount(s, admin, '/v2', 'Virtual', { num_file: 7, num_folder: 3, min_file_size: 1000, max_file_size: 300_000, root_folder_path: 'other seed' });
    await mount(s, admin, '/fixed', 'Virtual', { num_file: 2, num_folder: 0, min_file_size: 4096, max_file_size: 4096 });
  });
  afterAll(async () => {
    await s?.destroy();
  });

  it('lists num_file files within the size bounds and num_folder folders, the same every time', async () => {
    const root = await list('/v');
    expect(root.filter((o) => o.is_dir)).toHaveLength(3);
    const files = root.filter((o) => !o.is_dir);
    expect(files).toHaveLength(7);
    for (const f of files) {
      expect(f.name).toMatch(/^[A-Za-z0-9]{10}/);
      expect(f.size).toBeGreaterThanOrEqual(1000);
      expect(f.size).toBeLessThanOrEqual(300_000);
    }
    expect(new Set(files.map((f) => f.size)).size).toBeGreaterThan(1);
    expect(await list('/v')).toEqual(root);
    expect((await list('/v2')).map((o) => o.name)).not.toEqual(root.map((o) => o.name));
    expect((await list('/fixed')).map((o) => o.size)).toEqual([4096, 4096]);
  });

  it('folders nest without end and every listed entry can be looked up and read', async () => {
    const root = await list('/v');
    const dir = root.find((o) => o.is_dir)!;
    const inner = await list(`/v/${dir.name}`);
    expect(inner).toHaveLength(10);
    expect(inner.map((o) => o.name)).not.toEqual(root.map((o) => o.name));
    const deeper = inner.find((o) => o.is_dir)!;
    const deepest = await list(`/v/${dir.name}/${deeper.name}`);
    const file = deepest.filter((o) => !o.is_dir).sort((a, b) => b.size - a.size)[0]!;
    const p = `/v/${dir.name}/${deeper.name}/${file.name}`;
    const got = await s.api('POST', '/api/fs/get', { token: admin, body: { path: p } });
    expect(got.data).toMatchObject({ name: file.name, size: file.size, is_dir: false });
    const whole = await download(s, p);
    expect(whole.body.length).toBe(file.size);
    expect((await download(s, p)).body.equals(whole.body)).toBe(true);
    const [a, b] = [Math.floor(file.size / 3), Math.floor(file.size / 2)];
    const part = await download(s, p, `bytes=${a}-${b}`);
    expect(part.status).toBe(206);
    expect(part.body.equals(whole.body.subarray(a, b + 1))).toBe(true);
  });

  it('names that were not listed do not exist; writes are refused', async () => {
    expect((await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/v/notlisted' } })).message).toMatch(/object not found/);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/v/notlisted' } })).message).toMatch(/object not found/);
    const file = (await list('/v')).find((o) => !o.is_dir)!;
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: `/v/${file.name}` } })).code).toBe(500);
    expect((await s.api('POST', '/api/fs/mkdir', { token: admin, body: { path: '/v/new' } })).message).toBe('not implement');
    const put = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'x', headers: { authorization: admin, 'file-path': '/v/x.txt', 'content-type': 'text/plain' } });
    expect(put.json()).toMatchObject({ code: 500, message: 'upload not supported' });
  });

  it('checks its numbers at init and is listed by the driver endpoints', async () => {
    const bad = await s.api('POST', '/api/admin/storage/create', { token: admin, body: storageRow('/bad', 'Virtual', { num_file: 1, num_folder: 1, min_file_size: 10, max_file_size: 5 }) });
    expect(bad.message).toMatch(/min_file_size <= max_file_size/);
    const info = await s.api('GET', '/api/admin/driver/info?driver=Virtual', { token: admin });
    expect(info.data.additional.map((i: any) => [i.name, i.default, i.required])).toEqual([
      ['root_folder_path', '', false],
      ['num_file', '30', true],
      ['num_folder', '30', true],
      ['max_file_size', '1073741824', true],
      ['min_file_size', '1048576', true],
    ]);
    expect(info.data.config).toMatchObject({ name: 'Virtual', local_sort: true, only_local: true, need_ms: true });
  });

  it('the driver endpoints show the other drivers of this area with their items', async () => {
    const namesList = (await s.api('GET', '/api/admin/driver/names', { token: admin })).data as string[];
    for (const n of ['Alias', 'Crypt', 'AList V3', 'UrlTree', 'Virtual']) expect(namesList).toContain(n);
    const all = (await s.api('GET', '/api/admin/driver/list', { token: admin })).data;
    const crypt = all.Crypt;
    expect(crypt.additional.map((i: any) => [i.name, i.type, i.default, i.options])).toEqual([
      ['filename_encryption', 'select', 'off', 'off,standard,obfuscate'],
      ['directory_name_encryption', 'select', 'false', 'false,true'],
      ['remote_path', 'string', '', ''],
      ['password', 'string', '', ''],
      ['salt', 'string', '', ''],
      ['encrypted_suffix', 'string', '.bin', ''],
      ['filename_encoding', 'select', 'base64', 'base64,base32,base32768'],
      ['thumbnail', 'bool', 'false', ''],
      ['show_hidden', 'bool', 'true', ''],
    ]);
    expect(crypt.config).toMatchObject({ name: 'Crypt', local_sort: true, only_proxy: true, no_cache: true, default_root: '/' });
    expect(all['AList V3'].config).toMatchObject({ local_sort: true, default_root: '/' });
  });
});
