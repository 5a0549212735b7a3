import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { callApi } from '../helpers/process.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { remoteArchives } from '../archive/fixtures.js';
import { startAtriumPeer } from './atrium-peer.js';
import { driverConformance, FIXTURE } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { writeTree } from './peer-files.js';

type Peer = Awaited<ReturnType<typeof startAtriumPeer>>;

/** The peer's permission bit to create share links. */
const SHARE_BIT = 1 << 14;

/** Creates a share on the peer as its admin; returns its id. */
async function createShare(peer: Peer, body: Record<string, unknown>): Promise<string> {
  const r = await callApi(peer.process.base, 'POST', '/api/share/create', { token: peer.token, body: { expires: null, pwd: '', max_accessed: 0, ...body } });
  if (r.code !== 200) throw new Error(`share create: ${r.message}`);
  return r.data.id as string;
}

async function stopPeer(peer: Peer | undefined): Promise<void> {
  if (!peer) return;
  await peer.process.stop();
  rmSync(peer.data, { recursive: true, force: true });
}

driverConformance('OpenListShare against a share of a second Atrium process', async () => {
  const peer = await startAtriumPeer();
  const shared = path.join(peer.files, 'shared');
  writeTree(shared, FIXTURE);
  // Beside the shared folder on the peer: the share must never reach it.
  writeFileSync(path.join(peer.files, 'outside-marker.txt'), 'outside');
  const sid = await createShare(peer, { files: ['/shared'], pwd: 'share-code' });
  return {
    storage: { driver: 'OpenListShare', addition: { url: peer.process.base, sid, pwd: 'share-code' } },
    caps: { write: false },
    seed: async (tree) => writeTree(shared, tree),
    outsideMarker: 'outside-marker.txt',
    teardown: () => stopPeer(peer),
  };
});

describe('OpenListShare driver', () => {
  let s: TestServer;
  let admin: string;
  let peer: Peer;
  let sid: string;
  const big = randomBytes(300 * 1024);
  const { parts, zip, locked } = remoteArchives();

  beforeAll(async () => {
    peer = await startAtriumPeer();
    writeTree(path.join(peer.files, 'pub'), { '/a.txt': 'alpha', '/sub/b.txt': 'bravo', '/big.bin': big, '/arch.zip': zip, '/locked.zip': locked });
    writeFileSync(path.join(peer.files, 'secret.txt'), 'not shared');
    sid = await createShare(peer, { files: ['/pub'], pwd: 'code' });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    await mount(s, admin, '/sh', 'OpenListShare', { url: peer.process.base, sid, pwd: 'code' });
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    await stopPeer(peer);
  });

  const api = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
  const status = async (mountPath: string) => {
    const r = await s.api('GET', '/api/admin/storage/list', { token: admin });
    return r.data.content.find((x: { mount_path: string }) => x.mount_path === mountPath)?.status as string;
  };

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=OpenListShare', { token: admin });
    expect(info.code, info.message).toBe(200);
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual(['root_folder_path', 'url', 'sid', 'pwd', 'forward_archive_requests']);
    expect(info.data.additional.find((i: { name: string }) => i.name === 'forward_archive_requests')).toMatchObject({ type: 'bool', default: 'true' });
    expect(info.data.additional.find((i: { name: string }) => i.name === 'sid')).toMatchObject({ required: true });
    expect(info.data.config).toMatchObject({ name: 'OpenListShare', local_sort: true, no_upload: true, default_root: '/' });
    expect((await s.api('GET', '/api/admin/driver/names', { token: admin })).data).toContain('OpenListShare');
  });

  it('lists and reads the share; root_folder_path narrows it to a folder inside the share', async () => {
    expect(await names(s, admin, '/sh')).toEqual(['sub', 'a.txt', 'arch.zip', 'big.bin', 'locked.zip']);
    expect((await download(s, '/sh/sub/b.txt')).body.toString()).toBe('bravo');
    await mount(s, admin, '/shsub', 'OpenListShare', { url: peer.process.base, sid, pwd: 'code', root_folder_path: '/sub' });
    expect(await names(s, admin, '/shsub')).toEqual(['b.txt']);
    expect((await download(s, '/shsub/b.txt')).body.toString()).toBe('bravo');
  });

  it('mounts a share of one file and a share of several objects', async () => {
    const one = await createShare(peer, { files: ['/pub/a.txt'] });
    await mount(s, admin, '/one', 'OpenListShare', { url: peer.process.base, sid: one });
    expect(await names(s, admin, '/one')).toEqual(['a.txt']);
    expect((await download(s, '/one/a.txt')).body.toString()).toBe('alpha');
    const several = await createShare(peer, { files: ['/pub/sub', '/pub/big.bin'] });
    await mount(s, admin, '/several', 'OpenListShare', { url: peer.process.base, sid: several });
    expect(await names(s, admin, '/several')).toEqual(['sub', 'big.bin']);
    expect((await download(s, '/several/sub/b.txt')).body.toString()).toBe('bravo');
    expect((await download(s, '/several/big.bin', 'bytes=10-19')).body.equals(big.subarray(10, 20))).toBe(true);
    // Nothing of the peer beside the shared objects is reachable.
    expect((await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/several/a.txt' } })).message).toMatch(/object not found/);
  });

  it('is read-only: uploads and changes are refused', async () => {
    const put = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: admin, 'file-path': encodeURIComponent('/sh/new.txt'), 'content-type': 'application/octet-stream' }, payload: 'x' });
    expect(put.json().code).not.toBe(200);
    expect((await api('/api/fs/mkdir', { path: '/sh/newdir' })).code).not.toBe(200);
    expect((await api('/api/fs/remove', { dir: '/sh', names: ['a.txt'] })).code).not.toBe(200);
    expect(await names(s, admin, '/sh')).toEqual(['sub', 'a.txt', 'arch.zip', 'big.bin', 'locked.zip']);
  });

  it('serves ranges, redirected to the share\'s /sd link and proxied by this server', async () => {
    const redirect = await s.inject({ method: 'GET', url: `/d/sh/big.bin?sign=${s.core.signer.sign('/sh/big.bin')}` });
    expect(redirect.statusCode).toBe(302);
    expect(String(redirect.headers.location)).toBe(`${peer.process.base}/sd/${sid}/big.bin?pwd=code`);
    const mid = await download(s, '/sh/big.bin', 'bytes=1000-70999');
    expect(mid.status).toBe(206);
    expect(mid.body.equals(big.subarray(1000, 71000))).toBe(true);
    await mount(s, admin, '/shp', 'OpenListShare', { url: peer.process.base, sid, pwd: 'code' }, { web_proxy: true });
    const res = await s.inject({ method: 'GET', url: `/d/shp/big.bin?sign=${s.core.signer.sign('/shp/big.bin')}`, headers: { range: 'bytes=-4096' } });
    expect(res.statusCode).toBe(206);
    expect(res.rawPayload.equals(big.subarray(big.length - 4096))).toBe(true);
    expect((await download(s, '/shp/big.bin')).body.equals(big)).toBe(true);
  });

  it('a wrong or missing share code fails the mount with a clear status', async () => {
    for (const [mountPath, pwd] of [['/wrong', 'nope'], ['/none', '']] as const) {
      const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body: storageRow(mountPath, 'OpenListShare', { url: peer.process.base, sid, pwd }) });
      expect(r.code).toBe(500);
      expect(r.message).toMatch(/wrong share code/);
      expect(await status(mountPath)).toMatch(/wrong share code/);
      const l = await api('/api/fs/list', { path: mountPath, refresh: true });
      expect(l.message).toMatch(/storage not init: .*wrong share code/);
    }
    const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body: storageRow('/ghost', 'OpenListShare', { url: peer.process.base, sid: 'no-such-share' }) });
    expect(r.message).toMatch(/the share does not exist/);
  });

  it('a disabled, expired or deleted share answers a clear error; load_all mounts it again once it serves', async () => {
    const id = await createShare(peer, { files: ['/pub/sub'], pwd: '' });
    await mount(s, admin, '/tmp-sh', 'OpenListShare', { url: peer.process.base, sid: id });
    expect(await names(s, admin, '/tmp-sh')).toEqual(['b.txt']);
    const peerApi = (route: string, body?: unknown) => callApi(peer.process.base, 'POST', route, { token: peer.token, body });

    expect((await peerApi(`/api/share/disable?id=${id}`)).code).toBe(200);
    const l = await api('/api/fs/list', { path: '/tmp-sh', refresh: true });
    expect(l.code).toBe(500);
    expect(l.message).toMatch(/the share has expired or is no longer valid/);
    const d = await download(s, '/tmp-sh/b.txt');
    expect(d.body.toString()).toMatch(/the share has expired or is no longer valid/);
    // Restarting the storages while the share serves nothing: an error status, not a crash.
    expect((await s.api('POST', '/api/admin/storage/load_all', { token: admin })).code).toBe(200);
    await s.core.storages.ready();
    expect(await status('/tmp-sh')).toMatch(/the share has expired or is no longer valid/);
    expect(await status('/sh')).toBe('work');

    expect((await peerApi(`/api/share/enable?id=${id}`)).code).toBe(200);
    expect((await s.api('POST', '/api/admin/storage/load_all', { token: admin })).code).toBe(200);
    await s.core.storages.ready();
    expect(await status('/tmp-sh')).toBe('work');
    expect((await download(s, '/tmp-sh/b.txt')).body.toString()).toBe('bravo');

    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect((await peerApi('/api/share/update', { id, files: ['/pub/sub'], expires: past, pwd: '', max_accessed: 0 })).code).toBe(200);
    expect((await api('/api/fs/list', { path: '/tmp-sh', refresh: true })).message).toMatch(/the share has expired or is no longer valid/);

    expect((await peerApi(`/api/share/delete?id=${id}`)).code).toBe(200);
    expect((await api('/api/fs/get', { path: '/tmp-sh/b.txt' })).message).toMatch(/the share does not exist/);
  });

  describe('archives inside the share', () => {
    const fileOf = (name: string) => parts[name.replace(/^\//, '')]!;
    const entry = (p: string, inner: string, pass = '') =>
      s.inject({ method: 'GET', url: `/ae${p}?inner=${encodeURIComponent(inner)}&pass=${encodeURIComponent(pass)}&sign=${encodeURIComponent(s.core.signer.sign(p))}`, headers: { accept: 'application/json' } });

    it('the server refuses archives to visitors (share_archive_preview off): this server reads the zip by ranges of the /sd link', async () => {
      // What the server answers a forwarded call: its refusal, which the driver turns into reading here.
      expect(await callApi(peer.process.base, 'POST', '/api/fs/archive/meta', { body: { path: `/@s/${sid}/arch.zip`, password: 'code' } })).toEqual({
        code: 403,
        message: 'sharing archives previewing is not allowed',
        data: null,
      });
      const open = vi.spyOn(s.core.archives, 'open');
      try {
        const m = await api('/api/fs/archive/meta', { path: '/sh/arch.zip', refresh: true });
        expect(m.code, m.message).toBe(200);
        expect(m.data.content.map((n: { name: string }) => n.name)).toEqual(['part']);
        expect(m.data.content[0].children).toHaveLength(40);
        expect(open).toHaveBeenCalled();
        const { archive, source } = await s.core.archives.open('/sh/arch.zip');
        await archive.close();
        expect(source.bytesRead).toBeGreaterThan(0);
        expect(source.bytesRead).toBeLessThan(zip.length / 10);
      } finally {
        open.mockRestore();
      }
      const res = await entry('/sh/arch.zip', '/part/f07.bin');
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.equals(fileOf('part/f07.bin'))).toBe(true);
    });

    it('forwards meta, listings and entries to the server when it reads archives for shares', async () => {
      const set = await callApi(peer.process.base, 'POST', '/api/admin/setting/save', { token: peer.token, body: [{ key: 'share_archive_preview', value: 'true' }] });
      expect(set.code, set.message).toBe(200);
      await mount(s, admin, '/shz', 'OpenListShare', { url: peer.process.base, sid, pwd: 'code' });
      await mount(s, admin, '/shz-local', 'OpenListShare', { url: peer.process.base, sid, pwd: 'code', forward_archive_requests: false });
      const open = vi.spyOn(s.core.archives, 'open');
      try {
        const m = await api('/api/fs/archive/meta', { path: '/shz/arch.zip', refresh: true });
        expect(m.code, m.message).toBe(200);
        expect(m.data.content[0].children.map((n: { name: string }) => n.name)).toEqual(Object.keys(parts).map((k) => k.slice(5)));
        const l = await api('/api/fs/archive/list', { path: '/shz/arch.zip', inner_path: '/part', refresh: true });
        expect(l.code, l.message).toBe(200);
        expect(l.data.total).toBe(40);
        expect(l.data.content.find((n: { name: string }) => n.name === 'f12.bin')).toMatchObject({ size: 100 * 1024, is_dir: false });
        const res = await entry('/shz/arch.zip', '/part/f12.bin');
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-length']).toBe(String(100 * 1024));
        expect(res.rawPayload.equals(fileOf('part/f12.bin'))).toBe(true);
        // Encrypted entries: the peer checks the archive password.
        const lm = await api('/api/fs/archive/meta', { path: '/shz/locked.zip', refresh: true });
        expect(lm.data.encrypted).toBe(true);
        expect((await entry('/shz/locked.zip', '/inner/secret.txt', 'wrong')).json()).toMatchObject({ code: 202, message: 'wrong archive password' });
        const good = await entry('/shz/locked.zip', '/inner/secret.txt', 'zip-pass');
        expect(good.body).toBe('locked words\n');
        expect(open).not.toHaveBeenCalled();
        // The storage mounted while the setting was off forwards now too: the server decides on each call.
        const before = await api('/api/fs/archive/list', { path: '/sh/arch.zip', inner_path: '/part', refresh: true });
        expect(before.data.total).toBe(40);
        expect(open).not.toHaveBeenCalled();
        // The same share with forwarding off is read here.
        const local = await api('/api/fs/archive/meta', { path: '/shz-local/arch.zip', refresh: true });
        expect(local.code, local.message).toBe(200);
        expect(open).toHaveBeenCalled();
      } finally {
        open.mockRestore();
      }
    });

    it("a share whose creator lacks the read-archives bit (the server's 403 permission denied) is read here", async () => {
      const made = await callApi(peer.process.base, 'POST', '/api/admin/user/create', {
        token: peer.token,
        body: { username: 'sharer', password: 'sharer-pass', base_path: '/', role: 0, permission: SHARE_BIT, disabled: false },
      });
      expect(made.code, made.message).toBe(200);
      const login = await callApi(peer.process.base, 'POST', '/api/auth/login', { body: { username: 'sharer', password: 'sharer-pass' } });
      expect(login.code, login.message).toBe(200);
      const r = await callApi(peer.process.base, 'POST', '/api/share/create', { token: login.data.token, body: { files: ['/pub'], expires: null, pwd: '', max_accessed: 0 } });
      expect(r.code, r.message).toBe(200);
      const byUser = r.data.id as string;
      expect((await callApi(peer.process.base, 'POST', '/api/fs/archive/meta', { body: { path: `/@s/${byUser}/arch.zip` } })).message).toBe('permission denied');
      await mount(s, admin, '/shu', 'OpenListShare', { url: peer.process.base, sid: byUser });
      const open = vi.spyOn(s.core.archives, 'open');
      try {
        const m = await api('/api/fs/archive/meta', { path: '/shu/arch.zip', refresh: true });
        expect(m.code, m.message).toBe(200);
        expect(m.data.content[0].children).toHaveLength(40);
        expect(open).toHaveBeenCalled();
      } finally {
        open.mockRestore();
      }
      const res = await entry('/shu/arch.zip', '/part/f33.bin');
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.equals(fileOf('part/f33.bin'))).toBe(true);
      // The archive password is still this server's to check.
      expect((await entry('/shu/locked.zip', '/inner/secret.txt', 'wrong')).json()).toMatchObject({ code: 202, message: 'wrong archive password' });
      expect((await entry('/shu/locked.zip', '/inner/secret.txt', 'zip-pass')).body).toBe('locked words\n');
    });
  });
});
