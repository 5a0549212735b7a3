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

/**
 * Share visitors throw every path attack at `/api/fs/list|get` under `/@s/<sid>` and at `/sd`:
 * nothing outside the shared objects is listed or read (not the creator's other files, not the
 * rest of the storage, not what symlinks point to), no answer names one of the creator's
 * paths, and nothing on disk changes.
 */
describe('path traversal through share links', () => {
  let s: TestServer;
  let box: string;
  let root: string;
  let folderShare: string;
  let twoShare: string;
  let tried = 0;
  const secrets = [...SECRETS, CREATOR_ONLY];

  const attack = async (what: string, send: () => Promise<{ status: number; body: string }>) => {
    tried++;
    const { status, body } = await send();
    expect(secrets.filter((x) => body.includes(x)), `${what} leaked`).toEqual([]);
    expect(body, `${what} named a creator's path`).not.toMatch(/\/s\/u|mine\.txt|private\.txt|outside/);
    expect(status, `${what}: HTTP ${status} ${body.slice(0, 200)}`).toBeLessThan(500);
    expect(body, what).not.toMatch(/internal error|at .*\.(ts|js):\d+/);
  };
  const fsApi = (route: string, p: string) => async () => {
    const res = await s.inject({ method: 'POST', url: route, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ path: p, password: '' }) });
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
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'eve', password: 'e', base_path: '/s/u', permission: (1 << 14) | 8 } });
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
        }
        const enc = a.split('/').map((seg) => (/%[0-9a-f]{2}/i.test(seg) ? seg : encodeURIComponent(seg))).join('/');
        await attack(`/sd ${a}`, raw(`/sd/${sid}${sep}${enc}`));
        await attack(`/sd sub ${a}`, raw(`/sd/${sid}/sub${sep}${enc}`));
      }
      for (const url of ['/%2e%2e/mine.txt', '/..%2fmine.txt', '/%252e%252e/mine.txt', '/..%5cmine.txt', '/sub/%2e%2e/%2e%2e/mine.txt', '/%00/../mine.txt', '/mine-link.txt', '/link-out/secret.txt', '/sub/rel-link/secret.txt']) {
        await attack(`/sd ${url}`, raw(`/sd/${sid}${url}`));
      }
    }
    await attack('/sd with a traversing sid', raw(`/sd/..%2f${folderShare}/mine.txt`));
    expect(fingerprint(box, path.join(box, 'nothing-is-allowed'))).toEqual(before);
    expect(tried).toBeGreaterThan(500);
  });

  it('the shared objects themselves are reachable (the checks above are not vacuous)', async () => {
    const top = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${folderShare}` } });
    expect(top.data.content.map((o: any) => o.name).sort()).toEqual(['file.txt', 'sub']);
    expect((await s.inject({ method: 'GET', url: `/sd/${folderShare}/sub/deep.txt` })).body).toBe('deep');
    // A symlink inside the shared folder to the creator's other file is not there for visitors.
    expect(await s.api('POST', '/api/fs/get', { body: { path: `/@s/${folderShare}/mine-link.txt` } })).toEqual({ code: 500, message: 'object not found', data: null });
    const two = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${twoShare}` } });
    expect(two.data.content.map((o: any) => o.name).sort()).toEqual(['single.txt', 'sub']);
    expect((await s.inject({ method: 'GET', url: `/sd/${twoShare}/single.txt` })).body).toBe('single');
    expect((await s.inject({ method: 'GET', url: `/sd/${twoShare}/sub/deep.txt` })).body).toBe('deep');
  });
});
