import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { PATH_ATTACKS, SECRETS } from './attacks.js';
import { fingerprint } from './fingerprint.js';

const CREATOR_ONLY = 'CREATORS-OTHER-FILE-55d0';

/** A stored zip holding one entry, so its bytes would show in any leak. */
function zipWith(file: string, entry: string, bytes: string): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-share-zip-'));
  writeFileSync(path.join(dir, entry), bytes);
  execFileSync('zip', ['-q', '-0', path.resolve(file), entry], { cwd: dir });
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Share visitors throw every path attack at `/api/fs/list|get` and `/api/fs/archive/meta|list`
 * under `/@s/<sid>`, and at `/sd` and `/sad`: nothing outside the shared objects is listed or
 * read (not the creator's other files or archives, not the rest of the storage, not what
 * symlinks point to, not what an archive's inner path names), no answer names one of the
 * creator's paths, and nothing on disk changes. Raw links answer real statuses (a missing
 * object is 500 with OpenList's page), never an internal error.
 */
describe('path traversal through share links', () => {
  let s: TestServer;
  let box: string;
  let root: string;
  let folderShare: string;
  let twoShare: string;
  let tried = 0;
  const secrets = [...SECRETS, CREATOR_ONLY];

  /** `echoes`: the answer may quote the attacker's own inner path back (a bad or missing entry). */
  const attack = async (what: string, send: () => Promise<{ status: number; body: string }>, echoes = false) => {
    tried++;
    const { status, body } = await send();
    expect(secrets.filter((x) => body.includes(x)), `${what} leaked`).toEqual([]);
    if (!echoes) expect(body, `${what} named a creator's path`).not.toMatch(/\/s\/u|mine\.txt|private\.txt|outside/);
    else expect(body, `${what} named a creator's path`).not.toMatch(/\/s\/u/);
    const known = /object not found|the share does not exist|is not (in the archive|a file in the archive)|not a supported archive/.test(body);
    expect(status < 500 || known, `${what}: HTTP ${status} ${body.slice(0, 200)}`).toBe(true);
    expect(body, what).not.toMatch(/internal error|at .*\.(ts|js):\d+/);
  };
  const fsApi = (route: string, p: string) => async () => {
    const res = await s.inject({ method: 'POST', url: route, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ path: p, password: '', inner_path: '/' }) });
    return { status: res.statusCode, body: res.body };
  };
  const raw = (url: string) => async () => {
    const res = await s.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.body };
  };

  beforeAll(async () => {
    box = mkdtempSync(path.join(os.tmpdir(), 'atrium-share-traversal-'));
    root = path.join(box, 'root');
    mkdirSync(path.join(box, 'outside'), { recursive: true });
    writeFileSync(path.join(box, 'outside/secret.txt'), SECRETS[0]!);
    mkdirSync(path.join(root, 'other'), { recursive: true });
    writeFileSync(path.join(root, 'other/private.txt'), SECRETS[1]!);
    mkdirSync(path.join(root, 'u/shared/sub'), { recursive: true });
    writeFileSync(path.join(root, 'u/mine.txt'), CREATOR_ONLY);
    writeFileSync(path.join(root, 'u/shared/file.txt'), 'shared-bytes');
    writeFileSync(path.join(root, 'u/shared/sub/deep.txt'), 'deep');
    writeFileSync(path.join(root, 'u/single.txt'), 'single');
    symlinkSync(path.join(box, 'outside'), path.join(root, 'u/shared/link-out'));
    symlinkSync(path.join(root, 'u/mine.txt'), path.join(root, 'u/shared/mine-link.txt'));
    symlinkSync('../../../outside', path.join(root, 'u/shared/sub/rel-link'));
    zipWith(path.join(box, 'outside/secret.zip'), 'in.txt', SECRETS[0]!);
    zipWith(path.join(root, 'other/private.zip'), 'in.txt', SECRETS[1]!);
    zipWith(path.join(root, 'u/mine.zip'), 'in.txt', CREATOR_ONLY);
    zipWith(path.join(root, 'u/shared/ok.zip'), 'ok.txt', 'ok-archive-bytes');
    symlinkSync(path.join(root, 'u/mine.zip'), path.join(root, 'u/shared/mine-link.zip'));
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'eve', password: 'e', base_path: '/s/u', permission: (1 << 14) | (1 << 12) | 8 } });
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'share_archive_preview', value: 'true' }] })).code).toBe(200);
    const eve = await s.login('eve', 'e');
    folderShare = (await s.api('POST', '/api/share/create', { token: eve, body: { files: ['/s/u/shared'] } })).data.id;
    twoShare = (await s.api('POST', '/api/share/create', { token: eve, body: { files: ['/s/u/shared/sub', '/s/u/single.txt'] } })).data.id;
    expect(folderShare).toBeTruthy();
    expect(twoShare).toBeTruthy();
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(box, { recursive: true, force: true });
  });

  it('no spelling of a path leaves the shared objects, on /@s/ and /sd', async () => {
    const before = fingerprint(box, path.join(box, 'nothing-is-allowed'));
    for (const sid of [folderShare, twoShare]) {
      for (const a of PATH_ATTACKS) {
        const sep = a.startsWith('/') ? '' : '/';
        for (const p of [`/@s/${sid}${sep}${a}`, `/@s/${sid}/sub${sep}${a}`, `/@s/${a}`, `/@s/${sid}/../${a}`]) {
          for (const route of ['/api/fs/list', '/api/fs/get']) await attack(`${route} ${JSON.stringify(p)}`, fsApi(route, p));
          for (const route of ['/api/fs/archive/meta', '/api/fs/archive/list']) {
            await attack(`${route} ${JSON.stringify(p)}`, fsApi(route, p));
            await attack(`${route} ${JSON.stringify(p)}.zip`, fsApi(route, `${p.replace(/\/$/, '')}.zip`));
          }
        }
        const enc = a.split('/').map((seg) => (/%[0-9a-f]{2}/i.test(seg) ? seg : encodeURIComponent(seg))).join('/');
        await attack(`/sd ${a}`, raw(`/sd/${sid}${sep}${enc}`));
        await attack(`/sd sub ${a}`, raw(`/sd/${sid}/sub${sep}${enc}`));
        await attack(`/sad ${a}`, raw(`/sad/${sid}${sep}${enc}?inner=/in.txt`));
        await attack(`/sad ${a}.zip`, raw(`/sad/${sid}${sep}${enc}.zip?inner=/in.txt`));
        // The inner path of a shared archive, in every spelling, stays inside that archive.
        await attack(`/sad inner ${a}`, raw(`/sad/${sid}/ok.zip?inner=${encodeURIComponent(a)}`), true);
      }
      for (const url of ['/mine.zip', '/mine-link.zip', '/%2e%2e/mine.zip', '/sub/rel-link/secret.zip', '/link-out/secret.zip', '/..%2fmine.zip']) {
        await attack(`/sad ${url}`, raw(`/sad/${sid}${url}?inner=/in.txt`));
        await attack(`archive/meta ${url}`, fsApi('/api/fs/archive/meta', `/@s/${sid}${decodeURIComponent(url)}`));
      }
      for (const url of ['/%2e%2e/mine.txt', '/..%2fmine.txt', '/%252e%252e/mine.txt', '/..%5cmine.txt', '/sub/%2e%2e/%2e%2e/mine.txt', '/%00/../mine.txt', '/mine-link.txt', '/link-out/secret.txt', '/sub/rel-link/secret.txt']) {
        await attack(`/sd ${url}`, raw(`/sd/${sid}${url}`));
      }
    }
    await attack('/sd with a traversing sid', raw(`/sd/..%2f${folderShare}/mine.txt`));
    expect(fingerprint(box, path.join(box, 'nothing-is-allowed'))).toEqual(before);
    expect(tried).toBeGreaterThan(1500);
  });

  it('the shared objects themselves are reachable (the checks above are not vacuous)', async () => {
    const top = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${folderShare}` } });
    expect(top.data.content.map((o: any) => o.name).sort()).toEqual(['file.txt', 'ok.zip', 'sub']);
    expect((await s.inject({ method: 'GET', url: `/sd/${folderShare}/sub/deep.txt` })).body).toBe('deep');
    // A symlink inside the shared folder to the creator's other file is not there for visitors.
    expect(await s.api('POST', '/api/fs/get', { body: { path: `/@s/${folderShare}/mine-link.txt` } })).toEqual({ code: 500, message: 'object not found', data: null });
    const two = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${twoShare}` } });
    expect(two.data.content.map((o: any) => o.name).sort()).toEqual(['single.txt', 'sub']);
    expect((await s.inject({ method: 'GET', url: `/sd/${twoShare}/single.txt` })).body).toBe('single');
    expect((await s.inject({ method: 'GET', url: `/sd/${twoShare}/sub/deep.txt` })).body).toBe('deep');
    // The shared archive is browsed and read; the link to the creator's archive is not there.
    const meta = await s.api('POST', '/api/fs/archive/meta', { body: { path: `/@s/${folderShare}/ok.zip` } });
    expect(meta.data.content.map((e: any) => e.name)).toEqual(['ok.txt']);
    expect((await s.inject({ method: 'GET', url: `/sad/${folderShare}/ok.zip?inner=/ok.txt` })).body).toBe('ok-archive-bytes');
    expect(await s.api('POST', '/api/fs/archive/meta', { body: { path: `/@s/${folderShare}/mine-link.zip` } })).toEqual({ code: 500, message: 'object not found', data: null });
  });
});
