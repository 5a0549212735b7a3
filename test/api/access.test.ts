import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

const NO_ACCESS = { code: 403, message: 'password is incorrect or you have no permission', data: null };

describe.each(ONE_BACKEND)('meta rules and the security bar on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let bob: string; // general user: write/rename/move/copy/remove, no see-hidden, no password bypass
  let carol: string; // sees hidden entries and needs no passwords
  let root: string;

  const list = (p: string, token: string, password = '') => s.api('POST', '/api/fs/list', { token, body: { path: p, password } });
  const get = (p: string, token: string, password = '') => s.api('POST', '/api/fs/get', { token, body: { path: p, password } });
  const names = (r: any) => (r.data?.content ?? []).map((o: any) => o.name);

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({
      'public.txt': 'p',
      'secret.txt': 'SECRET-BYTES',
      'secret.srt': 's',
      'public.srt': 'x',
      'hiddendir/inner.txt': 'inner',
      'locked/file.txt': 'locked file',
      'locked/sub/deep.txt': 'deep',
      'once/file.txt': 'once',
      'once/sub/free.txt': 'free',
      'w/readme-here/x.txt': 'x',
      'nested/a/secret-too.txt': 'n',
    });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    const metas = [
      { path: '/s', hide: '^secret\n^hiddendir$', h_sub: false, readme: '# Hello', r_sub: false, header: '<b>hi</b>', header_sub: true },
      { path: '/s/nested', hide: '^secret', h_sub: true },
      { path: '/s/locked', password: 'pw', p_sub: true },
      { path: '/s/once', password: 'pw1', p_sub: false },
      { path: '/s/w', write: true, w_sub: true },
    ];
    for (const m of metas) expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: m })).code).toBe(200);
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'b', permission: 8 | 16 | 32 | 64 | 128 } });
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'carol', password: 'c', permission: 1 | 2 } });
    bob = await s.login('bob', 'b');
    carol = await s.login('carol', 'c');
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('meta admin: list, get, update, delete; invalid hide regex refused', async () => {
    const all = await s.api('GET', '/api/admin/meta/list', { token: admin });
    expect(all.data.total).toBe(5);
    const m = all.data.content.find((x: any) => x.path === '/s/once');
    expect(m).toMatchObject({ password: 'pw1', p_sub: false, write: false, hide: '', readme: '' });
    expect((await s.api('GET', `/api/admin/meta/get?id=${m.id}`, { token: admin })).data).toEqual(m);
    const bad = await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/x', hide: '(unclosed' } });
    expect(bad.code).toBe(400);
    expect(bad.message).toMatch(/^\(unclosed is illegal: /);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/s/once/' } })).message).toBe('meta of path /s/once already exists');
    const tmp = await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/tmp-meta', readme: 'r' } });
    expect(tmp.code).toBe(200);
    const created = (await s.api('GET', '/api/admin/meta/list', { token: admin })).data.content.find((x: any) => x.path === '/tmp-meta');
    expect((await s.api('POST', '/api/admin/meta/update', { token: admin, body: { ...created, readme: 'changed' } })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/meta/get?id=${created.id}`, { token: admin })).data.readme).toBe('changed');
    expect((await s.api('POST', `/api/admin/meta/delete?id=${created.id}`, { token: admin })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/meta/get?id=${created.id}`, { token: admin })).code).toBe(404);
    expect((await s.api('GET', '/api/admin/meta/list', { token: bob })).code).toBe(403);
  });

  it('hide: listings leave hidden entries out for those who may not see them', async () => {
    const r = await list('/s', bob);
    expect(names(r).sort()).toEqual(['locked', 'nested', 'once', 'public.srt', 'public.txt', 'w']);
    expect(r.data.total).toBe(6);
    expect(JSON.stringify(r)).not.toMatch(/secret|hiddendir/);
    expect(names(await list('/s', carol))).toEqual(expect.arrayContaining(['secret.txt', 'hiddendir']));
    expect(names(await list('/s', admin))).toEqual(expect.arrayContaining(['secret.txt', 'hiddendir']));
    // h_sub carries a rule into sub-folders; without it only the folder itself
    expect(names(await list('/s/nested/a', bob))).toEqual([]);
    expect(names(await list('/s/nested/a', carol))).toEqual(['secret-too.txt']);
  });

  it('hidden entries: get, dirs, list inside, other and related reveal nothing, whether they exist or not', async () => {
    for (const p of ['/s/secret.txt', '/s/secret-missing.txt', '/s/hiddendir', '/s/hiddendir/inner.txt', '/s/hiddendir/nothing']) {
      expect(await get(p, bob), p).toEqual(NO_ACCESS);
      expect(await list(p, bob), p).toEqual(NO_ACCESS);
      expect(await s.api('POST', '/api/fs/dirs', { token: bob, body: { path: p } }), p).toEqual(NO_ACCESS);
      expect(await s.api('POST', '/api/fs/other', { token: bob, body: { path: p, method: 'x' } }), p).toEqual(NO_ACCESS);
    }
    const g = await get('/s/public.txt', bob);
    expect(g.data.related.map((o: any) => o.name)).toEqual(['public.srt']);
    const dirs = await s.api('POST', '/api/fs/dirs', { token: bob, body: { path: '/s' } });
    expect(dirs.data.map((d: any) => d.name)).not.toContain('hiddendir');
    expect((await get('/s/secret.txt', carol)).code).toBe(200);
  });

  it('hidden entries: raw links need a sign even with sign_all off, and thumbnails follow', async () => {
    await s.core.settings.set('sign_all', 'false');
    try {
      const pub = await s.inject({ method: 'GET', url: '/d/s/public.txt' });
      expect(pub.body).toBe('p');
      for (const url of ['/d/s/secret.txt', '/p/s/secret.txt', '/d/s/hiddendir/inner.txt', '/d/s/secret.txt?type=thumb', '/d/s/secret-missing.txt']) {
        const res = await s.inject({ method: 'GET', url, headers: { accept: 'application/json' } });
        expect(res.body, url).not.toContain('SECRET');
        expect(res.statusCode, url).toBe(401);
        expect(res.json(), url).toEqual({ code: 401, message: 'expire missing', data: null });
      }
      // those who see it get a sign in their listing, and it works
      const sign = (await list('/s', carol)).data.content.find((o: any) => o.name === 'secret.txt').sign;
      expect(sign).not.toBe('');
      expect((await s.inject({ method: 'GET', url: `/d/s/secret.txt?sign=${encodeURIComponent(sign)}` })).body).toBe('SECRET-BYTES');
      // public files carry no sign when sign_all is off
      expect((await list('/s', bob)).data.content.find((o: any) => o.name === 'public.txt').sign).toBe('');
    } finally {
      await s.core.settings.set('sign_all', 'true');
    }
  });

  it('password: list, get, dirs and raw links need it; wrong or missing → 403; p_sub covers sub-folders', async () => {
    for (const p of ['/s/locked', '/s/locked/file.txt', '/s/locked/sub', '/s/locked/nothing']) {
      expect(await list(p, bob), p).toEqual(NO_ACCESS);
      expect(await get(p, bob, 'wrong'), p).toEqual(NO_ACCESS);
    }
    expect(await s.api('POST', '/api/fs/dirs', { token: bob, body: { path: '/s/locked' } })).toEqual(NO_ACCESS);
    expect(names(await list('/s/locked', bob, 'pw')).sort()).toEqual(['file.txt', 'sub']);
    expect(names(await list('/s/locked/sub', bob, 'pw'))).toEqual(['deep.txt']);
    expect((await get('/s/locked/file.txt', bob, 'pw')).data.size).toBe(11);
    // the password-bypass bit and the admin need none
    expect((await list('/s/locked', carol)).code).toBe(200);
    expect((await list('/s/locked', admin)).code).toBe(200);
    // without p_sub only the folder itself is protected
    expect(await list('/s/once', bob)).toEqual(NO_ACCESS);
    expect((await list('/s/once/sub', bob)).code).toBe(200);
    // raw links of protected files need a sign even with sign_all off
    await s.core.settings.set('sign_all', 'false');
    try {
      const unsigned = await s.inject({ method: 'GET', url: '/d/s/locked/file.txt', headers: { accept: 'application/json' } });
      expect([unsigned.statusCode, unsigned.json().message]).toEqual([401, 'expire missing']);
      const signed = (await list('/s/locked', bob, 'pw')).data.content.find((o: any) => o.name === 'file.txt').sign;
      expect((await s.inject({ method: 'GET', url: `/d/s/locked/file.txt?sign=${encodeURIComponent(signed)}` })).body).toBe('locked file');
    } finally {
      await s.core.settings.set('sign_all', 'true');
    }
  });

  it('write rule lets users without the write bit create folders and upload there, and refresh', async () => {
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dan', password: 'd', permission: 0 } });
    const dan = await s.login('dan', 'd');
    expect((await s.api('POST', '/api/fs/mkdir', { token: dan, body: { path: '/s/w/new' } })).code).toBe(200);
    expect(await s.api('POST', '/api/fs/mkdir', { token: dan, body: { path: '/s/nope' } })).toEqual({ code: 403, message: 'permission denied', data: null });
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'dan', headers: { authorization: dan, 'file-path': encodeURIComponent('/s/w/new/d.txt') } });
    expect(up.json().code).toBe(200);
    expect(readFileSync(path.join(root, 'w/new/d.txt'), 'utf8')).toBe('dan');
    const w = await list('/s/w', dan);
    expect(w.data.write).toBe(true);
    expect((await list('/s', dan)).data.write).toBe(false);
    expect((await s.api('POST', '/api/fs/list', { token: dan, body: { path: '/s/w', refresh: true } })).code).toBe(200);
    expect((await s.api('POST', '/api/fs/list', { token: dan, body: { path: '/s', refresh: true } })).message).toBe('Refresh without permission');
    // the write rule is not the rename/remove bits
    expect((await s.api('POST', '/api/fs/remove', { token: dan, body: { dir: '/s/w/new', names: ['d.txt'] } })).code).toBe(403);
  });

  it('uploads into a password folder need the Password header', async () => {
    const send = (password?: string) =>
      s.inject({
        method: 'PUT',
        url: '/api/fs/put',
        payload: 'up',
        headers: { authorization: bob, 'file-path': encodeURIComponent('/s/locked/up.txt'), ...(password ? { password } : {}) },
      });
    expect((await send()).json()).toEqual(NO_ACCESS);
    expect((await send('bad')).json()).toEqual(NO_ACCESS);
    expect((await send('pw')).json().code).toBe(200);
  });

  it('changes to hidden entries are refused alike whether they exist or not', async () => {
    for (const [url, body] of [
      ['/api/fs/rename', { path: '/s/secret.txt', name: 'x.txt' }],
      ['/api/fs/rename', { path: '/s/secret-ghost', name: 'x.txt' }],
      ['/api/fs/rename', { path: '/s/public.txt', name: 'secret-new.txt' }],
      ['/api/fs/remove', { dir: '/s', names: ['secret.txt'] }],
      ['/api/fs/remove', { dir: '/s', names: ['secret-nope'] }],
      ['/api/fs/copy', { src_dir: '/s', dst_dir: '/s/w', names: ['secret.txt'] }],
      ['/api/fs/move', { src_dir: '/s/hiddendir', dst_dir: '/s/w', names: ['inner.txt'] }],
      ['/api/fs/mkdir', { path: '/s/hiddendir/x' }],
    ] as const) {
      expect(await s.api('POST', url, { token: bob, body }), `${url} ${JSON.stringify(body)}`).toEqual({ code: 403, message: 'permission denied', data: null });
    }
    expect(readFileSync(path.join(root, 'secret.txt'), 'utf8')).toBe('SECRET-BYTES');
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'x', headers: { authorization: bob, 'file-path': encodeURIComponent('/s/secret.txt') } });
    expect(up.json()).toEqual({ code: 403, message: 'permission denied', data: null });
    expect(readFileSync(path.join(root, 'secret.txt'), 'utf8')).toBe('SECRET-BYTES');
  });

  it('readme and header follow their own sub flags', async () => {
    const top = await list('/s', bob);
    expect(top.data).toMatchObject({ readme: '# Hello', header: '<b>hi</b>' });
    const sub = await list('/s/w', bob);
    expect(sub.data).toMatchObject({ readme: '', header: '' });
    const g = await get('/s', bob);
    expect(g.data.readme).toBe('# Hello');
    // /s/nested has a rule of its own (without header): only the nearest rule applies
    const nested = await list('/s/nested', bob);
    expect(nested.data.header).toBe('');
  });

  it('the guest follows the same rules', async () => {
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: any) => u.role === 1);
    await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false } });
    try {
      expect(names(await s.api('POST', '/api/fs/list', { body: { path: '/s' } }))).not.toContain('secret.txt');
      expect(await s.api('POST', '/api/fs/list', { body: { path: '/s/locked' } })).toEqual(NO_ACCESS);
      expect((await s.api('POST', '/api/fs/mkdir', { body: { path: '/s/g' } })).code).toBe(403);
    } finally {
      await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: true } });
    }
  });
});
