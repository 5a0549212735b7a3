// GET /api/admin/backup/export, POST /api/admin/backup/import (the CLI's export and import over
// HTTP, src/backup/routes.ts) and GET /api/admin/about (src/server/routes/admin-about.ts).
import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { serverForSuite, type TestServer } from '../helpers/server.js';
import type { OpEvent } from '../../src/audit/events.js';
import { VERSION } from '../../src/version.js';

describe.each([BACKENDS[0]!])('backup and about routes on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let user: string;
  serverForSuite(backend, (started, token) => {
    s = started;
    admin = token;
  });

  const exportFile = async (token: string) => s.inject({ method: 'GET', url: '/api/admin/backup/export', headers: { authorization: token } });
  const importFile = (token: string | undefined, body: unknown) =>
    s.api('POST', '/api/admin/backup/import', { token, body });

  it('refuses everyone but the admin: guests, users without a token, general users', async () => {
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bea', password: 'bea-pass', permission: 0x3ff } })).code).toBe(200);
    user = await s.login('bea', 'bea-pass');
    for (const [token, code] of [[user, 403], ['', 401], ['not-a-token', 401]] as const) {
      const out = await exportFile(token);
      expect(out.headers['content-disposition']).toBeUndefined();
      expect(out.json().code).toBe(code);
      expect((await importFile(token, { settings: [] })).code).toBe(code);
      expect((await s.api('GET', '/api/admin/about', { token })).code).toBe(code);
    }
  });

  it('exports the file `atrium export` writes, as an attachment', async () => {
    const root = makeTree({ 'a.txt': 'a' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/files', root) })).code).toBe(200);
    const res = await exportFile(admin);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="atrium-backup-\d{4}-\d{2}-\d{2}\.json"$/);
    const file = res.json();
    expect(file.atrium).toMatchObject({ version: VERSION.atrium, format: 1 });
    expect(file.users.map((u: any) => u.username).sort()).toEqual(['admin', 'bea', 'guest']);
    expect(file.users.find((u: any) => u.username === 'bea').pwd_hash).toMatch(/.+/);
    expect(file.storages.map((x: any) => x.mount_path)).toEqual(['/', '/files']);
    expect(file.settings.find((x: any) => x.key === 'site_title').value).toBe('Atrium');
  });

  it('imports a changed export: entries updated or added, with the report per section, live at once', async () => {
    const file = (await exportFile(admin)).json();
    file.settings.find((x: any) => x.key === 'site_title').value = 'Restored Atrium';
    const files = file.storages.find((x: any) => x.mount_path === '/files');
    files.remark = 'from the backup';
    file.storages.push({ ...files, id: 999, mount_path: '/more', remark: '' });
    file.metas.push({ path: '/files', password: '', p_sub: false, write: false, w_sub: false, hide: 'secret', h_sub: false, readme: '', r_sub: false, header: '', header_sub: false });
    file.settings.push({ key: 'no_such_setting_here', value: 'x' });
    file.users.push({ username: 'nohash', base_path: '/', role: 0 });
    const r = await importFile(admin, file);
    expect(r.code).toBe(200);
    expect(r.data).toMatchObject({
      settings: 1,
      users: { added: 0, updated: 3, skipped: ['nohash'] },
      storages: { added: 1, updated: 2 },
      metas: { added: 1, updated: 0 },
      unknown_settings: ['no_such_setting_here'],
    });
    expect((await s.api('GET', '/api/public/settings')).data.site_title).toBe('Restored Atrium');
    const list = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content;
    expect(list.find((x: any) => x.mount_path === '/files').remark).toBe('from the backup');
    // the added storage is mounted: its files list
    const more = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/more' } });
    expect(more.data.content.map((o: any) => o.name)).toEqual(['a.txt']);
    // the admin's session holds: its password hash is the one it had
    expect((await s.api('GET', '/api/me', { token: admin })).data.username).toBe('admin');
  });

  it('refuses a JSON that is not a backup, and a broken one, with a clear error, writing nothing', async () => {
    const before = s.core.settings.get('site_title');
    const cases: Array<[unknown, RegExp]> = [
      [{ hello: 'world' }, /^not a backup file: it has none of settings, users/],
      [[1, 2, 3], /^not a backup file/],
      [{ settings: 'everything' }, /^not a backup file: settings: /],
      [{ settings: [{ key: 'site_title', value: 'Never' }], storages: [{ mount_path: '/x', driver: 'Local', addition: '[1]' }] }, /^storages\[0\] \(\/x\): addition: addition is not a JSON object/],
      [{ encrypted: 'abc', settings: [] }, /encrypted/],
    ];
    for (const [body, message] of cases) {
      const r = await importFile(admin, body);
      expect(r.code, JSON.stringify(body)).toBe(400);
      expect(r.message).toMatch(message);
    }
    const bad = await s.inject({ method: 'POST', url: '/api/admin/backup/import', headers: { authorization: admin, 'content-type': 'application/json' }, payload: '{"settings": [' });
    expect(bad.json()).toMatchObject({ code: 400, message: expect.stringMatching(/^invalid JSON body/) });
    expect(s.core.settings.get('site_title')).toBe(before);
  });

  it('takes files above the JSON limit of other routes, up to its own bound', async () => {
    const file = (await exportFile(admin)).json();
    // 2 MiB of remark: over the app's 1 MiB JSON limit, under the import's 16 MiB
    file.padding = 'r'.repeat(2 * 1024 * 1024);
    const ok = await importFile(admin, file);
    expect(ok.code).toBe(200);
    expect(ok.data.storages).toEqual({ added: 0, updated: 3 });
    const big = JSON.stringify({ settings: [], padding: 'p'.repeat(17 * 1024 * 1024) });
    const res = await s.inject({ method: 'POST', url: '/api/admin/backup/import', headers: { authorization: admin, 'content-type': 'application/json' }, payload: big });
    expect(res.json()).toEqual({ code: 400, message: 'request body is too large', data: null });
  });

  it('records both in the audit log with the acting admin and the file name; a refused import as its error kind', async () => {
    const seen: OpEvent[] = [];
    s.core.events.on((e) => seen.push(e));
    const res = await exportFile(admin);
    const name = /filename="([^"]+)"/.exec(String(res.headers['content-disposition']))![1]!;
    expect((await s.api('POST', '/api/admin/backup/import?name=mine.json', { token: admin, body: res.json() })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/backup/import', { token: admin, body: { nothing: 1 } })).code).toBe(400);
    expect((await exportFile(user)).json().code).toBe(403);
    const mine = seen.filter((e) => e.op.startsWith('backup_')).map((e) => [e.op, e.path, e.user, e.result, e.front]);
    expect(mine).toEqual([
      ['backup_export', name, 'admin', 'ok', 'api'],
      ['backup_import', 'mine.json', 'admin', 'ok', 'api'],
      ['backup_import', '', 'admin', 'BadRequest', 'api'],
    ]);
  });

  it('about: the version, build, Node.js, database engine and uptime, and no paths', async () => {
    const r = await s.api('GET', '/api/admin/about', { token: admin });
    expect(r.code).toBe(200);
    expect(r.data).toMatchObject({ version: VERSION.atrium, api_version: VERSION.apiVersion, node: process.version, database: s.core.db.type, cluster: false });
    expect(r.data.build).toBe('source');
    expect(r.data.uptime).toBeGreaterThanOrEqual(0);
    expect(Date.parse(r.data.started_at)).toBeLessThanOrEqual(Date.now());
    const text = JSON.stringify(r.data);
    expect(text).not.toContain(s.dataDir);
    expect(text).not.toContain(s.core.settings.get('token'));
  });
});
