import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportInstallation, importInstallation } from '../../src/backup/installation.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { basic } from '../webdav/dav-helpers.js';

const BITS = { davRead: 256, davManage: 512, ftpRead: 1024, ftpWrite: 2048, share: 1 << 14 };
const PASS = 'pass word 1';
const ALL_NAMES = ['docs', 'drop', 'report.txt', 'secret-plan.txt'];

/**
 * Group path rules (issue #41): a meta with a `group_id` applies to that group's members only,
 * on every front (API, WebDAV, SFTP, shares of a member), in the place of everyone's rule at
 * its path; leaving the group ends its effect at the next operation of an open session; the
 * admin's meta API carries `group_id`, and a rule created without it (an OpenList client) is
 * everyone's; a deleted group takes its rules with it; a backup names the rule's group.
 */
describe.each(BACKENDS)('group path rules ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let ann: string; // member of "editors"
  let ben: string; // member of no group
  let annId: number;
  let editors: number;
  let sftpSrv: ProtocolListener;
  const open: SftpSession[] = [];
  const post = (url: string, body: unknown, token = admin) => s.api('POST', url, { token, body });
  const names = async (token: string, p = '/') => {
    const r = await post('/api/fs/list', { path: p, refresh: false }, token);
    expect(r.code, r.message).toBe(200);
    return (r.data.content ?? []).map((o: { name: string }) => o.name).sort();
  };
  const davNames = async (user: string, p = '/') => {
    const res = await s.inject({ method: 'PROPFIND' as 'GET', url: `/dav${p}`, headers: { authorization: basic(user, PASS), depth: '1' } });
    expect(res.statusCode).toBe(207);
    return [...res.body.matchAll(/<D:href>([^<]+)<\/D:href>/gi)].map((m) => decodeURIComponent(m[1]!)).sort();
  };
  const sftp = async (user: string) => {
    const x = await connectSftp(sftpSrv.port, { username: user, password: PASS });
    open.push(x);
    return x.sftp;
  };
  const put = (token: string, p: string, body: string) =>
    s.inject({ method: 'PUT', url: '/api/fs/put', payload: body, headers: { authorization: token, 'file-path': encodeURIComponent(p), 'content-type': 'application/octet-stream' } }).then((r) => r.json());
  const metas = async () => (await s.api('GET', '/api/admin/meta/list', { token: admin })).data.content as Array<{ id: number; path: string; group_id: number; hide: string; write: boolean }>;

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({
      'pub/report.txt': 'report',
      'pub/secret-plan.txt': 'plan',
      'pub/drop/.keep': '',
      'pub/docs/x.txt': 'x',
      'pub/docs/y.txt': 'y',
    });
    admin = await s.login();
    expect((await post('/api/admin/storage/create', localStorage('/disk', root))).code).toBe(200);
    editors = (await post('/api/admin/group/create', { name: 'editors', permission: 0 })).data.id;
    const perms = BITS.davRead | BITS.davManage | BITS.ftpRead | BITS.ftpWrite | BITS.share;
    for (const [username, group_ids] of [['ann', [editors]], ['ben', []]] as const) {
      const made = await post('/api/admin/user/create', { username, password: PASS, base_path: '/disk/pub', permission: perms, group_ids });
      expect(made.code, made.message).toBe(200);
    }
    annId = (await s.core.repos.users.byUsername('ann'))!.id;
    ann = await s.login('ann', PASS);
    ben = await s.login('ben', PASS);
    // The group's rules: hide the plans from its members, let them write in /drop.
    expect((await post('/api/admin/meta/create', { path: '/disk/pub', hide: '^secret-', h_sub: true, group_id: editors })).code).toBe(200);
    expect((await post('/api/admin/meta/create', { path: '/disk/pub/drop', write: true, group_id: editors })).code).toBe(200);
    // An OpenList client's rule: no group_id, for everyone.
    expect((await post('/api/admin/meta/create', { path: '/disk/pub/docs', hide: '^x\\.txt$' })).code).toBe(200);
    expect((await post('/api/admin/setting/save', [{ key: 'search_index', value: 'database' }])).code).toBe(200);
    expect((await post('/api/admin/index/build', {})).code).toBe(200);
    await s.core.search.indexer.idle();
    await s.core.search.indexer.idle();
    sftpSrv = await startSftp(s);
  });
  afterAll(async () => {
    for (const x of open) x.end();
    await sftpSrv?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the meta API carries group_id; a rule created without one is everyone\'s', async () => {
    const all = await metas();
    const byPath = (p: string) => all.find((m) => m.path === p)!;
    expect(byPath('/disk/pub')).toMatchObject({ group_id: editors, hide: '^secret-' });
    expect(byPath('/disk/pub/drop')).toMatchObject({ group_id: editors, write: true });
    expect(byPath('/disk/pub/docs')).toMatchObject({ group_id: 0 });
    const one = await s.api('GET', `/api/admin/meta/get?id=${byPath('/disk/pub').id}`, { token: admin });
    expect(one.data.group_id).toBe(editors);
    // The everyone rule holds for the member and the non-member alike.
    expect(await names(ann, '/docs')).toEqual(['y.txt']);
    expect(await names(ben, '/docs')).toEqual(['y.txt']);
    // An update without group_id (an OpenList client's) keeps the rule's group.
    const drop = byPath('/disk/pub/drop');
    expect((await post('/api/admin/meta/update', { id: drop.id, path: '/disk/pub/drop', write: true })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/meta/get?id=${drop.id}`, { token: admin })).data.group_id).toBe(editors);
    // One rule per path and group: the same path for another audience is another rule.
    expect(await post('/api/admin/meta/create', { path: '/disk/pub/drop', group_id: editors })).toMatchObject({ code: 500, message: `meta of path /disk/pub/drop for group ${editors} already exists` });
    expect(await post('/api/admin/meta/create', { path: '/disk/pub/docs' })).toMatchObject({ code: 500, message: 'meta of path /disk/pub/docs already exists' });
    expect(await post('/api/admin/meta/create', { path: '/disk/pub/docs', group_id: 99_999 })).toMatchObject({ code: 400, message: 'group_id: no group 99999' });
  });

  it('a group hide rule hides from members on the API, WebDAV and SFTP, not from others', async () => {
    expect(await names(ann)).toEqual(['docs', 'drop', 'report.txt']);
    expect(await names(ben)).toEqual(ALL_NAMES);
    expect((await post('/api/fs/get', { path: '/secret-plan.txt' }, ann)).code).toBe(403);
    expect((await post('/api/fs/get', { path: '/secret-plan.txt' }, ben)).code).toBe(200);

    expect(await davNames('ann')).toEqual(['/dav/', '/dav/docs/', '/dav/drop/', '/dav/report.txt']);
    expect(await davNames('ben')).toEqual(['/dav/', '/dav/docs/', '/dav/drop/', '/dav/report.txt', '/dav/secret-plan.txt']);
    const davGet = (user: string) => s.inject({ method: 'GET', url: '/dav/secret-plan.txt', headers: { authorization: basic(user, PASS) } });
    expect((await davGet('ann')).statusCode).toBe(404);
    expect((await davGet('ben')).body).toBe('plan');

    const a = await sftp('ann');
    const b = await sftp('ben');
    const readdir = async (c: typeof a, p: string) => (await call<Array<{ filename: string }>>(c, 'readdir', p)).map((e) => e.filename).sort();
    expect(await readdir(a, '/')).toEqual(['docs', 'drop', 'report.txt']);
    expect(await readdir(b, '/')).toEqual(ALL_NAMES);

    const search = async (token: string) => {
      const r = await post('/api/fs/search', { parent: '/', keywords: 'plan', page: 1, per_page: 50 }, token);
      expect(r.code, r.message).toBe(200);
      return r.data.content.map((h: { name: string }) => h.name);
    };
    expect(await search(ann)).toEqual([]);
    expect(await search(ben)).toEqual(['secret-plan.txt']);
  });

  it('a group write rule lets members upload where others cannot', async () => {
    expect(await put(ann, '/drop/from-ann.txt', 'ann bytes')).toMatchObject({ code: 200 });
    expect(readFileSync(path.join(root, 'pub/drop/from-ann.txt'), 'utf8')).toBe('ann bytes');
    expect(await put(ben, '/drop/from-ben.txt', 'ben bytes')).toMatchObject({ code: 403 });
    expect(existsSync(path.join(root, 'pub/drop/from-ben.txt'))).toBe(false);
    // Outside the rule's folder the member has no write either.
    expect(await put(ann, '/report2.txt', 'no')).toMatchObject({ code: 403 });
    expect(existsSync(path.join(root, 'pub/report2.txt'))).toBe(false);

    const a = await sftp('ann');
    const h = await call<Buffer>(a, 'open', '/drop/from-sftp.txt', 'w');
    await call(a, 'write', h, Buffer.from('sftp bytes'), 0, 10, 0);
    await call(a, 'close', h);
    expect(readFileSync(path.join(root, 'pub/drop/from-sftp.txt'), 'utf8')).toBe('sftp bytes');
    const b = await sftp('ben');
    await expect(call<Buffer>(b, 'open', '/drop/ben-sftp.txt', 'w')).rejects.toBeTruthy();
    expect(existsSync(path.join(root, 'pub/drop/ben-sftp.txt'))).toBe(false);
  });

  it('a share of a member shows its visitors what the member sees', async () => {
    const create = async (token: string) => {
      const made = await post('/api/share/create', { files: ['/disk/pub'], pwd: '', remark: '', max_accessed: 0, expires: null }, token);
      expect(made.code, made.message).toBe(200);
      return made.data.id as string;
    };
    const visit = async (id: string, p = '') => {
      const r = (await s.inject({ method: 'POST', url: '/api/fs/list', payload: { path: `/@s/${id}${p}`, password: '' } })).json();
      expect(r.code, r.message).toBe(200);
      return (r.data.content ?? []).map((o: { name: string }) => o.name).sort();
    };
    const annShare = await create(ann);
    const benShare = await create(ben);
    expect(await visit(annShare)).toEqual(['docs', 'drop', 'report.txt']);
    expect(await visit(benShare)).toEqual(ALL_NAMES);
    const hidden = (await s.inject({ method: 'POST', url: '/api/fs/get', payload: { path: `/@s/${annShare}/secret-plan.txt`, password: '' } })).json();
    expect(hidden.code).not.toBe(200);
    expect(await visit(annShare, '/docs')).toEqual(['y.txt']);
  });

  it('at the same path a member\'s group rule takes the place of everyone\'s rule', async () => {
    const made = await post('/api/admin/meta/create', { path: '/disk/pub/docs', hide: '^y\\.txt$', group_id: editors });
    expect(made.code, made.message).toBe(200);
    expect(await names(ann, '/docs')).toEqual(['x.txt']);
    expect(await names(ben, '/docs')).toEqual(['y.txt']);
    const rule = (await metas()).find((m) => m.path === '/disk/pub/docs' && m.group_id === editors)!;
    expect((await post(`/api/admin/meta/delete?id=${rule.id}`, {})).code).toBe(200);
    expect(await names(ann, '/docs')).toEqual(['y.txt']);
  });

  it('a backup names the rule\'s group and an import restores it', async () => {
    const file = (await exportInstallation(s.core)) as { metas: Array<Record<string, unknown>> };
    const ofGroup = file.metas.filter((m) => m.group !== undefined);
    expect(ofGroup.map((m) => [m.path, m.group]).sort()).toEqual([['/disk/pub', 'editors'], ['/disk/pub/drop', 'editors']]);
    expect(file.metas.find((m) => m.path === '/disk/pub/docs')).not.toHaveProperty('group');
    // The group's hide rule removed, then brought back by an import of the rules alone.
    const hideRule = (await metas()).find((m) => m.path === '/disk/pub' && m.group_id === editors)!;
    expect((await post(`/api/admin/meta/delete?id=${hideRule.id}`, {})).code).toBe(200);
    expect(await names(ann)).toEqual(ALL_NAMES);
    const report = await importInstallation(s.core, { metas: file.metas });
    expect(report.metas).toEqual({ added: 1, updated: 2 });
    expect((await metas()).find((m) => m.path === '/disk/pub' && m.group_id === editors)).toMatchObject({ hide: '^secret-' });
    expect(await names(ann)).toEqual(['docs', 'drop', 'report.txt']);
    await expect(importInstallation(s.core, { metas: [{ path: '/x', group: 'nobody here' }] })).rejects.toThrow('metas[0] (/x): no group nobody here');
  });

  it('leaving the group on an open SFTP session ends the rules\' effect at the next operation', async () => {
    const c = await sftp('ann');
    const readdir = async (p: string) => (await call<Array<{ filename: string }>>(c, 'readdir', p)).map((e) => e.filename).sort();
    expect(await readdir('/')).not.toContain('secret-plan.txt');
    const h = await call<Buffer>(c, 'open', '/drop/before.txt', 'w');
    await call(c, 'write', h, Buffer.from('before'), 0, 6, 0);
    await call(c, 'close', h);
    expect(readFileSync(path.join(root, 'pub/drop/before.txt'), 'utf8')).toBe('before');

    const upd = await post('/api/admin/user/update', { id: annId, username: 'ann', group_ids: [] });
    expect(upd.code, upd.message).toBe(200);
    expect(await readdir('/')).toEqual(ALL_NAMES);
    await expect(call<Buffer>(c, 'open', '/drop/after.txt', 'w')).rejects.toBeTruthy();
    expect(existsSync(path.join(root, 'pub/drop/after.txt'))).toBe(false);

    // Joining again brings them back on the same session.
    expect((await post('/api/admin/user/update', { id: annId, username: 'ann', group_ids: [editors] })).code).toBe(200);
    expect(await readdir('/')).not.toContain('secret-plan.txt');
  });

  it('a deleted group takes its rules with it', async () => {
    const temp = (await post('/api/admin/group/create', { name: 'temporary', permission: 0 })).data.id as number;
    expect((await post('/api/admin/meta/create', { path: '/disk/pub/report.txt', password: 'pw', group_id: temp })).code).toBe(200);
    expect((await metas()).some((m) => m.group_id === temp)).toBe(true);
    expect((await post(`/api/admin/group/delete?id=${temp}`, {})).code).toBe(200);
    expect((await metas()).some((m) => m.group_id === temp)).toBe(false);
    expect((await s.core.repos.metas.all()).some((m) => m.group_id === temp)).toBe(false);
    expect([...s.core.metas.all()].some((l) => l.meta.group_id === temp)).toBe(false);
  });
});
