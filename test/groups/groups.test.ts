import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

const WRITE = 8;
const REMOVE = 128;
const SHARE = 1 << 14;

/**
 * Groups (issue #41): `/api/admin/group/*`, a user's `group_ids` and own `roots`, the effective
 * bits (the user's and every group's), the tree of several roots through the API, and a change
 * to a group applying at the member's next request.
 */
describe.each(BACKENDS)('groups and several roots ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  const api = (method: 'GET' | 'POST', url: string, body?: unknown, token = admin) => s.api(method, url, { token, body });
  const names = async (token: string, p = '/') => {
    const r = await api('POST', '/api/fs/list', { path: p, refresh: false }, token);
    expect(r.code, r.message).toBe(200);
    return (r.data.content ?? []).map((o: { name: string }) => o.name).sort();
  };

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({
      'home/ann/own.txt': 'own',
      'home/ann/team/shadowed.txt': 'shadowed',
      'teams/red/red.txt': 'red',
      'teams/blue/blue.txt': 'blue',
      'archive/old.txt': 'old',
      'elsewhere/x.txt': 'x',
    });
    admin = await s.login();
    expect((await api('POST', '/api/admin/storage/create', localStorage('/disk', root))).code).toBe(200);
  });
  afterAll(async () => {
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('creates, lists, reads, updates and deletes a group; refuses what does not hold', async () => {
    const made = await api('POST', '/api/admin/group/create', { name: 'crud', permission: WRITE, roots: [{ path: '/disk/teams/red/', name: 'red' }] });
    expect(made.code, made.message).toBe(200);
    const id = made.data.id as number;
    expect((await api('GET', `/api/admin/group/get?id=${id}`)).data).toEqual({ id, name: 'crud', permission: WRITE, roots: [{ path: '/disk/teams/red', name: 'red' }], quota_bytes: 0, quota_files: 0, upload_rate: 0, download_rate: 0, max_transfers: 0, max_sessions: 0 });
    const list = await api('GET', '/api/admin/group/list');
    expect(list.data.content.map((g: { name: string }) => g.name)).toContain('crud');
    expect(list.data.total).toBe(list.data.content.length);
    expect((await api('POST', '/api/admin/group/update', { id, name: 'crud2', permission: 0 })).code).toBe(200);
    // roots not sent: kept
    expect((await api('GET', `/api/admin/group/get?id=${id}`)).data).toMatchObject({ name: 'crud2', permission: 0, roots: [{ name: 'red' }] });

    expect(await api('POST', '/api/admin/group/create', { name: 'crud2' })).toMatchObject({ code: 400, message: 'group crud2 already exists' });
    expect(await api('POST', '/api/admin/group/create', { name: '  ' })).toMatchObject({ code: 400, message: 'name is required' });
    expect(await api('POST', '/api/admin/group/create', { name: 'bad', roots: [{ path: '/a', name: 'x/y' }] })).toMatchObject({ code: 400 });
    expect(await api('POST', '/api/admin/group/create', { name: 'bad', roots: [{ path: '/a', name: 'x' }, { path: '/b', name: 'x' }] })).toMatchObject({ code: 400, message: 'roots: the name x is used twice' });
    expect(await api('POST', '/api/admin/group/create', { name: 'bad', permission: 1 << 20 })).toMatchObject({ code: 400 });
    expect((await api('GET', '/api/admin/group/get?id=999999')).code).toBe(404);

    expect((await api('POST', `/api/admin/group/delete?id=${id}`)).code).toBe(200);
    expect((await api('GET', `/api/admin/group/get?id=${id}`)).code).toBe(404);
    expect((await api('POST', `/api/admin/group/delete?id=${id}`)).code).toBe(404);
    // not for other users
    expect((await api('POST', '/api/admin/user/create', { username: 'plain', password: 'pass word 1', base_path: '/disk/elsewhere' })).code).toBe(200);
    const plain = await s.login('plain', 'pass word 1');
    expect((await api('GET', '/api/admin/group/list', undefined, plain)).code).toBe(403);
  });

  it('a user in two groups sees their base path plus three named roots; bits are the union; group_ids and roots on the wire', async () => {
    const red = (await api('POST', '/api/admin/group/create', { name: 'red', permission: WRITE, roots: [{ path: '/disk/teams/red', name: 'team' }] })).data.id;
    const blue = (await api('POST', '/api/admin/group/create', { name: 'blue', permission: REMOVE, roots: [{ path: '/disk/teams/blue', name: 'blue' }] })).data.id;
    const created = await api('POST', '/api/admin/user/create', {
      username: 'ann', password: 'pass word 1', base_path: '/disk/home/ann', permission: 0, group_ids: [red, blue], roots: [{ path: '/disk/archive', name: 'old' }],
    });
    expect(created.code, created.message).toBe(200);
    const annUser = (await api('GET', '/api/admin/user/list')).data.content.find((u: { username: string }) => u.username === 'ann');
    expect(annUser).toMatchObject({ base_path: '/disk/home/ann', permission: 0, effective_permission: WRITE | REMOVE, group_ids: [red, blue], roots: [{ path: '/disk/archive', name: 'old' }] });
    const ann = await s.login('ann', 'pass word 1');
    // /api/me keeps `permission` the user's own bits
    expect((await api('GET', '/api/me', undefined, ann)).data).toMatchObject({ permission: 0, base_path: '/disk/home/ann' });

    // `team` stands in for the base path's own folder of that name
    expect(await names(ann)).toEqual(['blue', 'old', 'own.txt', 'team']);
    expect(await names(ann, '/team')).toEqual(['red.txt']);
    expect(await names(ann, '/old')).toEqual(['old.txt']);
    const got = await api('POST', '/api/fs/get', { path: '/team/red.txt' }, ann);
    expect(got.data).toMatchObject({ name: 'red.txt', size: 3 });
    expect((await api('POST', '/api/fs/get', { path: '/team' }, ann)).data).toMatchObject({ name: 'team', is_dir: true });
    // nothing above the roots
    expect((await api('POST', '/api/fs/list', { path: '/team/../../elsewhere' }, ann)).code).toBe(403);

    // the write bit from red, the remove bit from blue: effective everywhere in the tree
    expect((await api('POST', '/api/fs/mkdir', { path: '/team/made' }, ann)).code).toBe(200);
    expect(await names(ann, '/team')).toEqual(['made', 'red.txt']);
    expect((await api('POST', '/api/fs/remove', { dir: '/team', names: ['made'] }, ann)).code).toBe(200);
    // no share bit from anyone
    expect((await api('POST', '/api/share/create', { files: ['/team/red.txt'], expires: 0, pwd: '' }, ann)).code).toBe(403);

    // the root folders themselves are not renamed or removed, and the shadowed folder is out of reach
    expect((await api('POST', '/api/fs/remove', { dir: '/', names: ['team'] }, ann)).code).toBe(403);
    expect((await api('POST', '/api/fs/rename', { path: '/team', name: 'x' }, ann)).code).toBe(403);
    expect((await api('POST', '/api/fs/mkdir', { path: '/team/n' }, ann)).code).toBe(200);
    expect(existsSync(path.join(root, 'teams/red/n'))).toBe(true);
    expect(existsSync(path.join(root, 'home/ann/team/n'))).toBe(false);
    expect((await api('POST', '/api/fs/copy', { src_dir: '/', dst_dir: '/blue', names: ['team'] }, ann)).code).toBe(403);
    expect((await api('POST', '/api/fs/move', { src_dir: '/blue', dst_dir: '/', names: ['blue.txt'] }, ann)).code).toBe(403); // no move bit
    await api('POST', '/api/fs/remove', { dir: '/team', names: ['n'] }, ann);

    // the group's bits come off at the next request once the user leaves it
    expect((await api('POST', '/api/admin/user/update', { id: annUser.id, username: 'ann', group_ids: [blue] })).code).toBe(200);
    expect(await names(ann)).toEqual(['blue', 'old', 'own.txt', 'team']); // now the base path's own `team` folder
    expect(await names(ann, '/team')).toEqual(['shadowed.txt']);
    expect((await api('POST', '/api/fs/mkdir', { path: '/blue/x' }, ann)).code).toBe(403);

    // a group change applies at once to its members
    expect((await api('POST', '/api/admin/group/update', { id: blue, name: 'blue', permission: REMOVE | WRITE, roots: [{ path: '/disk/teams/blue', name: 'azure' }] })).code).toBe(200);
    expect(await names(ann)).toEqual(['azure', 'old', 'own.txt', 'team']);
    expect((await api('POST', '/api/fs/mkdir', { path: '/azure/x' }, ann)).code).toBe(200);
    expect((await api('POST', '/api/fs/remove', { dir: '/azure', names: ['x'] }, ann)).code).toBe(200);

    // deleting a group removes its root from every member
    expect((await api('POST', `/api/admin/group/delete?id=${blue}`)).code).toBe(200);
    expect(await names(ann)).toEqual(['old', 'own.txt', 'team']);
    expect((await api('GET', `/api/admin/user/get?id=${annUser.id}`)).data.group_ids).toEqual([]);
    void SHARE;
  });

  it('refuses a name clash in a user tree when the admin saves the user or the group', async () => {
    const g1 = (await api('POST', '/api/admin/group/create', { name: 'clash1', roots: [{ path: '/disk/teams/red', name: 'same' }] })).data.id;
    const g2 = (await api('POST', '/api/admin/group/create', { name: 'clash2', roots: [{ path: '/disk/teams/blue', name: 'other' }] })).data.id;
    expect(await api('POST', '/api/admin/user/create', { username: 'bob', password: 'pass word 1', base_path: '/disk/elsewhere', roots: [{ path: '/disk/archive', name: 'same' }], group_ids: [g1] }))
      .toMatchObject({ code: 400, message: "roots: the name same is in both the user's own roots and group clash1 of user bob" });
    expect(await api('POST', '/api/admin/user/create', { username: 'bob', password: 'pass word 1', group_ids: [g1, 424242] })).toMatchObject({ code: 400, message: 'group_ids: no group 424242' });
    expect((await api('POST', '/api/admin/user/create', { username: 'bob', password: 'pass word 1', base_path: '/disk/elsewhere', group_ids: [g1, g2] })).code).toBe(200);
    const bob = (await s.core.repos.users.byUsername('bob'))!;
    const upd = await api('POST', '/api/admin/group/update', { id: g2, name: 'clash2', roots: [{ path: '/disk/archive', name: 'same' }] });
    expect(upd).toMatchObject({ code: 400, message: 'roots: the name same is in both group clash1 and group clash2 of user bob' });
    // unchanged
    expect((await api('GET', `/api/admin/group/get?id=${g2}`)).data.roots).toEqual([{ path: '/disk/teams/blue', name: 'other' }]);
    expect((await api('POST', '/api/admin/user/update', { id: bob.id, username: 'bob', roots: [{ path: '/disk/archive', name: 'other' }] })).code).toBe(400);
  });

  it('a share inside a group root narrows when its creator leaves the group', async () => {
    const g = (await api('POST', '/api/admin/group/create', { name: 'sharers', permission: SHARE, roots: [{ path: '/disk/teams/red', name: 'red' }] })).data.id;
    expect((await api('POST', '/api/admin/user/create', { username: 'cat', password: 'pass word 1', base_path: '/disk/elsewhere', group_ids: [g] })).code).toBe(200);
    const cat = await s.login('cat', 'pass word 1');
    const share = await api('POST', '/api/share/create', { files: ['/disk/teams/red/red.txt'], expires: 0, pwd: '' }, cat);
    expect(share.code, share.message).toBe(200);
    const id = share.data.id as string;
    const visit = () => s.inject({ method: 'GET', url: `/sd/${id}/red.txt` });
    const before = await visit();
    expect(before.statusCode).toBe(200);
    expect(before.body).toBe('red');
    const catUser = (await s.core.repos.users.byUsername('cat'))!;
    expect((await api('POST', '/api/admin/user/update', { id: catUser.id, username: 'cat', group_ids: [] })).code).toBe(200);
    const after = await visit();
    expect(after.statusCode).not.toBe(200);
    expect(after.body).not.toBe('red');
  });
});
