import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinSettings, FLAG } from '../../src/settings/defaults.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe.each(BACKENDS)('settings store on $name', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(backend);
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('holds the whole built-in table with its metadata, in order', () => {
    const list = s.core.settings.list();
    const seed = builtinSettings();
    expect(list.map((i) => i.key)).toEqual(seed.map((i) => i.key));
    const byKey = new Map(list.map((i) => [i.key, i]));
    expect(byKey.get('sign_all')).toMatchObject({ value: 'true', type: 'bool', group: 4, flag: FLAG.PRIVATE });
    expect(byKey.get('pagination_type')).toMatchObject({ type: 'select', options: 'all,pagination,load_more,auto_load_more', group: 1, flag: FLAG.PUBLIC });
    expect(byKey.get('search_index')).toMatchObject({ value: 'none', group: 6 });
    expect(byKey.get('version')?.flag).toBe(FLAG.READONLY);
    expect(byKey.get('token')?.value).toMatch(/^alist-[0-9a-f-]{36}[A-Za-z0-9]{64}$/);
  });

  it('reconciles on boot: values kept, metadata and version forced, unknown keys deprecated', async () => {
    const repo = s.core.repos.settings;
    await s.core.settings.set('site_title', 'My Files');
    const token = s.core.settings.get('token');
    const version = s.core.settings.item('version')!;
    await repo.update({ ...version, value: 'v0.0.1-old' });
    const sign = s.core.settings.item('sign_all')!;
    await repo.update({ ...sign, help: 'tampered', group: 9 });
    await repo.insert({ key: 'gone_feature', value: 'x', help: '', type: 'string', options: '', group: 1, flag: FLAG.PUBLIC, index: 999 });

    const again = await s.restart();
    s = again;
    expect(s.core.settings.get('site_title')).toBe('My Files');
    expect(s.core.settings.get('token')).toBe(token);
    expect(s.core.settings.get('version')).toMatch(/^v3\..*Atrium/);
    expect(s.core.settings.item('sign_all')).toMatchObject({ help: '', group: 4 });
    expect(s.core.settings.item('gone_feature')?.flag).toBe(FLAG.DEPRECATED);
    const pub = await s.api('GET', '/api/public/settings');
    expect(pub.data.site_title).toBe('My Files');
    expect(pub.data.gone_feature).toBeUndefined();
  });
});
