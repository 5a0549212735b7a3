import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { download, names } from './mount.js';
import { readHostFile } from './peer-files.js';

// The Local driver proves the suite itself: its peer is a folder of this machine. (Tests run as
// root here, so the file system refuses nothing: the permission case is not run for Local.)
driverConformance('Local', async () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'atrium-conf-local-'));
  const root = path.join(base, 'root');
  mkdirSync(root);
  writeFileSync(path.join(base, 'outside-marker.txt'), 'outside');
  return {
    storage: { driver: 'Local', addition: { root_folder_path: root, show_hidden: true } },
    seed: async (tree) => void makeTree(tree, root),
    peerRead: async (rel) => readHostFile(root, rel),
    outsideMarker: 'outside-marker.txt',
    teardown: async () => rmSync(base, { recursive: true, force: true }),
  };
});

describe('Local symbolic links and failed mounts', () => {
  let s: TestServer;
  let admin: string;
  let base: string;
  let root: string;
  const post = (url: string, body: unknown, token = admin) => s.api('POST', url, { token, body });
  /** A user's listing (users without write permission may not ask for a refresh). */
  const userNames = async (token: string, dir: string) => {
    const r = await post('/api/fs/list', { path: dir }, token);
    expect(r.code, r.message).toBe(200);
    return (r.data.content ?? []).map((o: { name: string }) => o.name);
  };

  beforeAll(async () => {
    base = mkdtempSync(path.join(os.tmpdir(), 'atrium-local-links-'));
    root = makeTree({ 'alice/own.txt': 'alice', 'bob/secret.txt': 'bob only', 'shared/inner/x.txt': 'x' }, path.join(base, 'root'));
    // Someone with disk access links a sibling folder (and a file) of the same storage into alice's area.
    symlinkSync(path.join(root, 'bob'), path.join(root, 'alice', 'to-bob'));
    symlinkSync('../bob/secret.txt', path.join(root, 'alice', 'secret-link.txt'));
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    expect((await post('/api/admin/storage/create', localStorage('/follow', root))).code).toBe(200);
    expect((await post('/api/admin/storage/create', localStorage('/nolinks', root, {}, { follow_symlinks: false }))).code).toBe(200);
    for (const [name, base_path] of [['alice-f', '/follow/alice'], ['alice-n', '/nolinks/alice']]) {
      const r = await post('/api/admin/user/create', { username: name, password: 'pw-123456', base_path, role: 0, permission: 0, disabled: false });
      expect(r.code, r.message).toBe(200);
    }
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(base, { recursive: true, force: true });
  });

  it('follows a link to a sibling folder by default: the user reads outside their base path', async () => {
    const alice = await s.login('alice-f', 'pw-123456');
    expect(await userNames(alice, '/')).toEqual(['to-bob', 'own.txt', 'secret-link.txt']);
    expect(await userNames(alice, '/to-bob')).toEqual(['secret.txt']);
    expect((await download(s, '/follow/alice/secret-link.txt')).body.toString()).toBe('bob only');
  });

  it('with follow_symlinks off, no link is listed or followed, whatever its target', async () => {
    const alice = await s.login('alice-n', 'pw-123456');
    expect(await userNames(alice, '/')).toEqual(['own.txt']);
    for (const p of ['/to-bob', '/to-bob/secret.txt', '/secret-link.txt']) {
      const r = await post('/api/fs/get', { path: p }, alice);
      expect(r.message, p).toMatch(/object not found/);
    }
    expect((await download(s, '/nolinks/alice/secret-link.txt')).body.toString()).toMatch(/object not found/);
    // Real folders and files are untouched.
    expect(await names(s, admin, '/nolinks/shared/inner')).toEqual(['x.txt']);
    expect((await download(s, '/nolinks/alice/own.txt')).body.toString()).toBe('alice');
  });

  it('a storage that fails to mount keeps its reason as status, and load_all mounts it once it can', async () => {
    const later = path.join(base, 'later');
    const r = await post('/api/admin/storage/create', localStorage('/later', later));
    expect(r.code).toBe(500);
    const status = async () => ((await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content as Array<{ mount_path: string; status: string }>).find((x) => x.mount_path === '/later')!.status;
    expect(await status()).toMatch(/^failed init storage: root folder .*later is not accessible: ENOENT$/);
    const l = await post('/api/fs/list', { path: '/later', refresh: true });
    expect(l.code).toBe(500);
    mkdirSync(later);
    writeFileSync(path.join(later, 'now.txt'), 'here');
    expect((await post('/api/admin/storage/load_all', {})).code).toBe(200);
    await s.core.storages.ready();
    expect(await status()).toBe('work');
    expect(await names(s, admin, '/later')).toEqual(['now.txt']);
  });
});

describe('Local directory_size', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  const sizes = async (dir: string) => {
    const r = await s.api('POST', '/api/fs/list', { token: admin, body: { path: dir, refresh: true } });
    expect(r.code, r.message).toBe(200);
    return Object.fromEntries(r.data.content.map((o: { name: string; size: number }) => [o.name, o.size]));
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({
      'music/a.flac': Buffer.alloc(1000),
      'music/album/b.flac': Buffer.alloc(2500),
      'music/album/deep/c.flac': Buffer.alloc(300),
      'music/.hidden/x.bin': Buffer.alloc(7000),
      'empty/': '',
      'top.txt': '12345',
    });
    // a link to a folder is not followed for the sum (it would count the same bytes twice)
    symlinkSync(path.join(root, 'music'), path.join(root, 'music', 'album', 'loop'));
    for (const [mp, extra] of [['/sized', { directory_size: true, show_hidden: false }], ['/sized-all', { directory_size: true, show_hidden: true }], ['/plain', {}]] as const) {
      expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage(mp, root, {}, extra) })).code).toBe(200);
    }
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('shows the bytes below each folder in listings and gets, hidden names left out as the listing leaves them out', async () => {
    expect(await sizes('/sized')).toEqual({ music: 3800, empty: 0, 'top.txt': 5 });
    expect(await sizes('/sized/music')).toMatchObject({ album: 2800, 'a.flac': 1000 });
    expect((await sizes('/sized-all')).music).toBe(10_800);
    expect((await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/sized/music/album' } })).data).toMatchObject({ is_dir: true, size: 2800 });
    expect(await sizes('/plain')).toMatchObject({ music: 0, empty: 0 });
  });

  it('is listed by driver info after the root, default off', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=Local', { token: admin });
    const items = info.data.additional.map((i: { name: string }) => i.name);
    expect(items.slice(0, 2)).toEqual(['root_folder_path', 'directory_size']);
    expect(items).toContain('video_thumb_pos');
    expect(info.data.additional.find((i: { name: string }) => i.name === 'directory_size')).toMatchObject({ type: 'bool', default: 'false' });
  });
});
