import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

const SHARE = 1 << 14;
const READ_ARCHIVES = 1 << 12;
const HELLO = 'hello from a shared archive\n';
const README = '# inside\n';
const NOT_ALLOWED = { code: 403, message: 'sharing archives previewing is not allowed', data: null };
const WRONG_CODE = { code: 403, message: 'wrong share code', data: null };
const FOLDER_LOCKED = { code: 403, message: 'password is incorrect or you have no permission', data: null };
const MISSING = { code: 500, message: 'the share does not exist', data: null };

/**
 * Share visitors and archives (OpenList's SharingArchiveMeta/List/Extract): `/api/fs/archive/meta|list`
 * with `/@s/<id>/…` paths and `/sad/<id>/…?inner=` entry downloads, through the share's view:
 * the `share_archive_preview` setting, the share code, the creator's read-archives bit, folder
 * passwords inside the share, the access count and deletion.
 */
describe('archives inside share links', () => {
  let s: TestServer;
  let admin: string;
  let bob: string; // share + read archives
  let carol: string; // share only
  let root: string;

  const post = (url: string, body: Record<string, unknown>, ip = '127.0.3.1') =>
    s.inject({ method: 'POST', url, payload: body, remoteAddress: ip }).then((r) => r.json());
  const meta = (p: string, extra: Record<string, unknown> = {}, ip?: string) => post('/api/fs/archive/meta', { path: p, ...extra }, ip);
  const list = (p: string, inner: string, extra: Record<string, unknown> = {}, ip?: string) => post('/api/fs/archive/list', { path: p, inner_path: inner, ...extra }, ip);
  const sad = (url: string, method: 'GET' | 'HEAD' = 'GET', ip = '127.0.3.1') => s.inject({ method, url, remoteAddress: ip, headers: { accept: 'application/json' } });
  const create = async (token: string, body: Record<string, unknown>) => {
    const r = await s.api('POST', '/api/share/create', { token, body });
    expect(r.code, r.message).toBe(200);
    return r.data.id as string;
  };
  const preview = (on: boolean) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'share_archive_preview', value: String(on) }] });

  beforeAll(async () => {
    root = makeTree({ 'bob/pub/plain.txt': 'not an archive', 'bob/pub/locked/': '', 'bob/other/mine.txt': 'CREATOR-ONLY' });
    const src = path.join(root, 'src');
    mkdirSync(path.join(src, 'docs'), { recursive: true });
    writeFileSync(path.join(src, 'hello.txt'), HELLO);
    writeFileSync(path.join(src, 'docs/readme.md'), README);
    const zip = (out: string, ...args: string[]) => execFileSync('zip', ['-q', '-r', ...args, path.join(root, out), 'hello.txt', 'docs'], { cwd: src });
    zip('bob/pub/a.zip');
    zip('bob/pub/enc.zip', '-P', 'zippw');
    zip('bob/pub/locked/in.zip');
    zip('bob/pub/.hidden.zip');
    rmSync(src, { recursive: true });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/s/bob/pub/locked', password: 'fpw', p_sub: true } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/s/bob/pub', hide: '^\\.hidden', h_sub: true } })).code).toBe(200);
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'b', base_path: '/s/bob', permission: SHARE | READ_ARCHIVES } });
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'carol', password: 'c', base_path: '/s/bob', permission: SHARE } });
    bob = await s.login('bob', 'b');
    carol = await s.login('carol', 'c');
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses archive browsing and /sad while share_archive_preview is off (the default)', async () => {
    const id = await create(bob, { files: ['/s/bob/pub'] });
    expect(await meta(`/@s/${id}/a.zip`)).toEqual(NOT_ALLOWED);
    expect(await list(`/@s/${id}/a.zip`, '/')).toEqual(NOT_ALLOWED);
    const r = await sad(`/sad/${id}/a.zip?inner=/hello.txt`);
    expect(r.statusCode).toBe(403);
    expect(r.body).not.toContain('hello from');
    // The file itself is still shared.
    expect((await post('/api/fs/get', { path: `/@s/${id}/a.zip` })).code).toBe(200);
  });

  it('browses a shared archive and downloads an entry through /sad, as OpenList answers', async () => {
    expect((await preview(true)).code).toBe(200);
    const id = await create(bob, { files: ['/s/bob/pub'] });
    const m = await meta(`/@s/${id}/a.zip`);
    expect(m.code, m.message).toBe(200);
    expect(m.data.content.map((e: any) => e.name).sort()).toEqual(['docs', 'hello.txt']);
    expect(m.data.content.find((e: any) => e.name === 'docs').children.map((e: any) => e.name)).toEqual(['readme.md']);
    expect(m.data.sign).toBe('');
    expect(new URL(m.data.raw_url).pathname).toBe(`/sad/${id}/a.zip`);
    expect(JSON.stringify(m)).not.toContain('/s/bob');
    const l = await list(`/@s/${id}/a.zip`, '/docs');
    expect(l.data).toMatchObject({ total: 1, content: [{ name: 'readme.md', size: README.length, is_dir: false, sign: '' }] });

    const got = await sad(`/sad/${id}/a.zip?inner=/hello.txt`);
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe(HELLO);
    expect(got.headers['content-disposition']).toContain('hello.txt');
    const head = await sad(`/sad/${id}/a.zip?inner=/docs/readme.md`, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(README.length));
    expect(head.body).toBe('');

    // A single shared archive: the share's root is the archive (`/sad/<id>`).
    const single = await create(bob, { files: ['/s/bob/pub/a.zip'] });
    expect((await meta(`/@s/${single}`)).data.content.length).toBe(2);
    expect((await sad(`/sad/${single}?inner=/hello.txt`)).body).toBe(HELLO);
    expect((await sad(`/sad/${single}/a.zip?inner=/hello.txt`)).body).toBe(HELLO);
  });

  it('asks the share code, the archive password (202) and the password of a protected folder', async () => {
    const id = await create(bob, { files: ['/s/bob/pub'], pwd: 'sc' });
    expect(await meta(`/@s/${id}/a.zip`, {}, '127.0.3.2')).toEqual(WRONG_CODE);
    expect(await list(`/@s/${id}/a.zip`, '/', {}, '127.0.3.2')).toEqual(WRONG_CODE);
    expect((await sad(`/sad/${id}/a.zip?inner=/hello.txt`, 'GET', '127.0.3.2')).json()).toEqual(WRONG_CODE);
    const m = await meta(`/@s/${id}/a.zip`, { password: 'sc' });
    expect(m.code).toBe(200);
    expect(m.data.raw_url).toMatch(new RegExp(`/sad/${id}/a.zip\\?pwd=sc$`));
    expect((await sad(`/sad/${id}/a.zip?pwd=sc&inner=/hello.txt`)).body).toBe(HELLO);

    // An encrypted archive: its entries need the archive password (code 202, as OpenList).
    const enc = await meta(`/@s/${id}/enc.zip`, { password: 'sc' });
    expect(enc.data.encrypted).toBe(true);
    const noPass = await sad(`/sad/${id}/enc.zip?pwd=sc&inner=/hello.txt`);
    expect(noPass.statusCode).toBe(202);
    expect(noPass.body).not.toContain('hello from');
    expect((await sad(`/sad/${id}/enc.zip?pwd=sc&inner=/hello.txt&pass=zippw`)).body).toBe(HELLO);

    // An archive in a protected folder inside the share: the folder's password too.
    expect(await meta(`/@s/${id}/locked/in.zip`, { password: 'sc' })).toEqual(FOLDER_LOCKED);
    expect((await sad(`/sad/${id}/locked/in.zip?pwd=sc&inner=/hello.txt`)).json()).toEqual(FOLDER_LOCKED);
    const opened = await meta(`/@s/${id}/locked/in.zip`, { password: 'sc', folder_password: 'fpw' });
    expect(opened.code).toBe(200);
    expect(opened.data.raw_url).toMatch(/\?pwd=sc&folder_pwd=fpw$/);
    expect((await list(`/@s/${id}/locked/in.zip`, '/', { password: 'sc', folder_password: 'fpw' })).data.total).toBe(2);
    expect((await sad(`/sad/${id}/locked/in.zip?pwd=sc&folder_pwd=fpw&inner=/hello.txt`)).body).toBe(HELLO);
  });

  it("holds the creator's read-archives bit, the share's limit and its deletion; refuses what is no archive", async () => {
    const byCarol = await create(carol, { files: ['/s/bob/pub'] });
    expect(await meta(`/@s/${byCarol}/a.zip`)).toEqual({ code: 403, message: 'permission denied', data: null });
    expect((await sad(`/sad/${byCarol}/a.zip?inner=/hello.txt`)).statusCode).toBe(403);

    const id = await create(bob, { files: ['/s/bob/pub'], max_accessed: 2 });
    expect((await meta(`/@s/${id}/a.zip`, {}, '127.0.4.1')).code).toBe(200);
    // The same address again: counted once.
    expect((await sad(`/sad/${id}/a.zip?inner=/hello.txt`, 'GET', '127.0.4.1')).body).toBe(HELLO);
    expect((await s.api('GET', `/api/share/get?id=${id}`, { token: bob })).data.accessed).toBe(1);
    expect((await list(`/@s/${id}/a.zip`, '/', {}, '127.0.4.2')).code).toBe(200);
    expect((await s.api('GET', `/api/share/get?id=${id}`, { token: bob })).data.accessed).toBe(2);
    // The limit is reached: archive routes are refused as every other.
    expect((await meta(`/@s/${id}/a.zip`, {}, '127.0.4.3')).message).toBe('the share has expired or is no longer valid');
    const past = await sad(`/sad/${id}/a.zip?inner=/hello.txt`, 'GET', '127.0.4.1');
    expect(past.statusCode).toBe(404);
    expect(past.body).not.toContain('hello from');

    const other = await create(bob, { files: ['/s/bob/pub', '/s/bob/other'] });
    expect((await meta(`/@s/${other}`)).code).toBe(400);
    expect((await meta(`/@s/${other}/pub/plain.txt`)).code).toBe(400);
    expect((await sad(`/sad/${other}?inner=/hello.txt`)).statusCode).toBe(400);
    expect((await sad(`/sad/${other}/pub/a.zip?inner=/nope.txt`)).statusCode).toBe(404);
    expect((await s.api('POST', `/api/share/delete?id=${other}`, { token: bob })).code).toBe(200);
    expect(await meta(`/@s/${other}/pub/a.zip`)).toEqual(MISSING);
    expect((await sad(`/sad/${other}/pub/a.zip?inner=/hello.txt`)).json()).toEqual(MISSING);
    // Paths that are no share paths still need an account.
    expect((await meta('/s/bob/pub/a.zip')).code).toBe(401);
  });

  it("keeps the creator's hide rules, refuses a folder as an archive, and stops when the share is disabled", async () => {
    const id = await create(bob, { files: ['/s/bob/pub'] });
    // A hidden archive is as missing as any hidden entry, for browsing and for /sad.
    expect((await post('/api/fs/get', { path: `/@s/${id}/.hidden.zip` })).code).toBe(500);
    expect((await meta(`/@s/${id}/.hidden.zip`)).code).toBe(500);
    const hidden = await sad(`/sad/${id}/.hidden.zip?inner=/hello.txt`);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.body).not.toContain('hello from');
    // A folder of the share is no archive.
    expect(await meta(`/@s/${id}/locked`, { folder_password: 'fpw' })).toMatchObject({ code: 400 });
    expect(await list(`/@s/${id}/locked`, '/', { folder_password: 'fpw' })).toMatchObject({ code: 400 });
    // Disabling the share stops its archive routes.
    expect((await meta(`/@s/${id}/a.zip`)).code).toBe(200);
    expect((await s.api('POST', `/api/share/disable?id=${id}`, { token: bob })).code).toBe(200);
    expect((await meta(`/@s/${id}/a.zip`)).message).toBe('the share has expired or is no longer valid');
    const off = await sad(`/sad/${id}/a.zip?inner=/hello.txt`);
    expect(off.statusCode).toBe(404);
    expect(off.body).not.toContain('hello from');
  });
});
