import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { serverForSuite, type TestServer } from '../helpers/server.js';

describe.each(BACKENDS)('settings admin on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  serverForSuite(backend, (started, token) => {
    s = started;
    admin = token;
  });

  it('lists all items (token included) or by group, ordered by index; gets by key or keys', async () => {
    const all = (await s.api('GET', '/api/admin/setting/list', { token: admin })).data;
    expect(all.find((i: any) => i.key === 'token').value).toBe(s.core.settings.get('token'));
    expect(all.map((i: any) => i.index)).toEqual([...all.map((i: any) => i.index)].sort((a: number, b: number) => a - b));
    const site = (await s.api('GET', '/api/admin/setting/list?group=1', { token: admin })).data;
    expect(site.every((i: any) => i.group === 1)).toBe(true);
    expect(site[0].key).toBe('version');
    const two = (await s.api('GET', '/api/admin/setting/list?groups=1,2', { token: admin })).data;
    expect(new Set(two.map((i: any) => i.group))).toEqual(new Set([1, 2]));
    expect((await s.api('GET', '/api/admin/setting/get?key=site_title', { token: admin })).data).toMatchObject({ key: 'site_title', value: 'Atrium', type: 'string', group: 1, flag: 0 });
    const many = (await s.api('GET', '/api/admin/setting/get?keys=site_title,sign_all', { token: admin })).data;
    expect(many.map((i: any) => i.key)).toEqual(['site_title', 'sign_all']);
    expect((await s.api('GET', '/api/admin/setting/get?key=nope', { token: admin })).code).toBe(404);
  });

  it('save type-checks, saves all or nothing, and public settings change at once', async () => {
    const ok = await s.api('POST', '/api/admin/setting/save', {
      token: admin,
      body: [
        { key: 'site_title', value: 'My Atrium' },
        { key: 'default_page_size', value: '50' },
        { key: 'pagination_type', value: 'load_more' },
        { key: 'allow_indexed', value: 'true' },
      ],
    });
    expect(ok.code).toBe(200);
    const pub = (await s.api('GET', '/api/public/settings')).data;
    expect(pub).toMatchObject({ site_title: 'My Atrium', default_page_size: '50', pagination_type: 'load_more', allow_indexed: 'true' });
    const cases: Array<[Array<{ key: string; value: string }>, RegExp]> = [
      [[{ key: 'default_page_size', value: 'lots' }], /must be a number/],
      [[{ key: 'sign_all', value: 'yes' }], /must be true or false/],
      [[{ key: 'pagination_type', value: 'infinite' }], /must be one of all,pagination,load_more,auto_load_more/],
      [[{ key: 'privacy_regs', value: '(' }], /invalid regular expression/],
      [[{ key: 'filename_char_mapping', value: '[1]' }], /must be a JSON object/],
      [[{ key: 'version', value: 'v9' }], /is read-only/],
      [[{ key: 'no_such_key', value: 'x' }], /not found/],
      [[{ key: 'site_title', value: 'Never saved' }, { key: 'default_page_size', value: 'x' }], /must be a number/],
    ];
    for (const [body, message] of cases) {
      const r = await s.api('POST', '/api/admin/setting/save', { token: admin, body });
      expect(r.code).toBeGreaterThanOrEqual(400);
      expect(r.message).toMatch(message);
    }
    expect(s.core.settings.get('site_title')).toBe('My Atrium');
  });

  it('saved settings take effect: type lists, name mapping, sign_all', async () => {
    const root = makeTree({ 'a.weird': 'x', 'b:c.txt': 'y' });
    await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/st', root) });
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'video_types', value: 'mp4,weird' }, { key: 'filename_char_mapping', value: '{":":"_"}' }] });
    const l = (await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/st' } })).data.content;
    expect(l.find((o: any) => o.name === 'a.weird').type).toBe(2);
    expect(l.map((o: any) => o.name)).toContain('b_c.txt');
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'filename_char_mapping', value: '{}' }] });
  });

  it('reset_token answers a new token; old signs and the old token stop working', async () => {
    const root = makeTree({ 'f.txt': 'f' });
    await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/rt', root) });
    const old = s.core.settings.get('token');
    const sign = s.core.signer.sign('/rt/f.txt');
    expect((await s.inject({ method: 'GET', url: `/d/rt/f.txt?sign=${encodeURIComponent(sign)}` })).body).toBe('f');
    const r = await s.api('POST', '/api/admin/setting/reset_token', { token: admin });
    expect(r.data).toMatch(/^alist-/);
    expect(r.data).not.toBe(old);
    const refused = await s.inject({ method: 'GET', url: `/d/rt/f.txt?sign=${encodeURIComponent(sign)}`, headers: { accept: 'application/json' } });
    expect([refused.statusCode, refused.json().message]).toEqual([401, 'sign invalid']);
    expect((await s.api('GET', '/api/me', { token: old })).code).toBe(401);
    expect((await s.api('GET', '/api/me', { token: r.data })).data.username).toBe('admin');
  });

  it('delete only removes deprecated settings, answering {}', async () => {
    expect((await s.api('POST', '/api/admin/setting/delete?key=site_title', { token: admin })).message).toBe('setting [site_title] is not deprecated');
    await s.core.repos.settings.insert({ key: 'old_one', value: '1', help: '', type: 'string', options: '', group: 1, flag: 3, index: 999 });
    await s.core.settings.reload();
    expect(await s.api('POST', '/api/admin/setting/delete?key=old_one', { token: admin })).toEqual({ code: 200, message: 'success', data: {} });
    expect(s.core.settings.item('old_one')).toBeUndefined();
  });

  it('default answers the built-in values; every route is admin only', async () => {
    const d = (await s.api('POST', '/api/admin/setting/default?group=1', { token: admin })).data;
    expect(d.find((i: any) => i.key === 'site_title').value).toBe('Atrium');
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'u', password: 'p', permission: 0xffff } });
    const u = await s.login('u', 'p');
    for (const [m, url] of [['GET', '/api/admin/setting/list'], ['GET', '/api/admin/setting/get?key=token'], ['POST', '/api/admin/setting/save'], ['POST', '/api/admin/setting/delete?key=x'], ['POST', '/api/admin/setting/reset_token'], ['POST', '/api/admin/setting/default']]) {
      expect((await s.api(m!, url!, { token: u, body: m === 'POST' ? [] : undefined })).code, url).toBe(403);
    }
  });
});
