import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { PATH_ATTACKS, NAME_ATTACKS, SECRETS } from './attacks.js';
import { fingerprint } from './fingerprint.js';

/**
 * Path traversal on every HTTP entry point that takes a path or a name. A user whose base path
 * is /s/u and the admin (base /) throw every attack string at every route; afterwards nothing
 * outside the storage root (and, for the user, nothing outside /s/u) was read, listed or
 * written: no answer carries a secret's bytes or name, and a fingerprint of every file and link
 * outside the allowed area is the same as before.
 */
describe('path traversal on the HTTP API, /d and /p', () => {
  let s: TestServer;
  let box: string;
  let root: string;
  let admin: string;
  let eve: string;
  let tried = 0;

  /** Sends one attack; the answer must be a clean envelope (or a clean /d answer) that carries none of `secrets`. */
  const attack = async (what: string, send: () => Promise<{ status: number; body: string }>, secrets = SECRETS) => {
    tried++;
    const { status, body } = await send();
    expect(
      secrets.filter((secret) => body.includes(secret)),
      `${what} leaked`,
    ).toEqual([]);
    // Raw links answer a missing object or a folder with 404/400 and OpenList's page: no attack is a server error.
    expect(status, `${what}: HTTP ${status} ${body.slice(0, 200)}`).toBeLessThan(500);
    expect(body, what).not.toMatch(/internal error|at .*\.(ts|js):\d+/);
  };

  const api = (token: string, url: string, body: unknown) => async () => {
    const res = await s.inject({ method: 'POST', url, headers: { authorization: token, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    return { status: res.statusCode, body: res.body };
  };

  beforeAll(async () => {
    box = mkdtempSync(path.join(os.tmpdir(), 'atrium-traversal-'));
    root = path.join(box, 'root');
    mkdirSync(path.join(box, 'outside'), { recursive: true });
    writeFileSync(path.join(box, 'outside/secret.txt'), SECRETS[0]!);
    writeFileSync(path.join(box, 'secret-beside-root.txt'), SECRETS[0]!);
    mkdirSync(path.join(root, 'other'), { recursive: true });
    writeFileSync(path.join(root, 'other/private.txt'), SECRETS[1]!);
    mkdirSync(path.join(root, 'u/sub'), { recursive: true });
    writeFileSync(path.join(root, 'u/file.txt'), 'mine');
    writeFileSync(path.join(root, 'u/sub/deep.txt'), 'deep');
    symlinkSync(path.join(box, 'outside'), path.join(root, 'u/link-out'));
    symlinkSync(path.join(box, 'outside/secret.txt'), path.join(root, 'u/secret-link.txt'));
    symlinkSync('../../outside', path.join(root, 'u/rel-link'));
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    const all = 4 | 8 | 16 | 32 | 64 | 128;
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'eve', password: 'e', base_path: '/s/u', permission: all } })).code).toBe(200);
    eve = await s.login('eve', 'e');
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(box, { recursive: true, force: true });
  });

  it('a user stays inside her base path and the admin inside the storage root, whatever the path says', async () => {
    const outsideUser = fingerprint(box, path.join(root, 'u'));
    const outsideRoot = fingerprint(box, root);
    for (const [who, token] of [
      ['eve', eve],
      ['admin', admin],
    ] as const) {
      const base = who === 'eve' ? '' : '/s/u';
      for (const raw of PATH_ATTACKS) {
        const p = who === 'eve' ? raw : raw.startsWith('/') ? raw : `${base}/${raw}`;
        const tag = `${who} ${JSON.stringify(p)}`;
        for (const route of ['/api/fs/list', '/api/fs/get', '/api/fs/dirs']) await attack(`${route} ${tag}`, api(token, route, { path: p, password: '' }));
        await attack(`other ${tag}`, api(token, '/api/fs/other', { path: p, method: 'x', data: {} }));
        await attack(`mkdir ${tag}`, api(token, '/api/fs/mkdir', { path: `${p}/made` }));
        await attack(`rename ${tag}`, api(token, '/api/fs/rename', { path: p, name: 'renamed' }));
        await attack(`remove dir ${tag}`, api(token, '/api/fs/remove', { dir: p, names: ['private.txt', 'secret.txt'] }));
        await attack(`move src ${tag}`, api(token, '/api/fs/move', { src_dir: p, dst_dir: `${base}/sub`, names: ['private.txt', 'secret.txt'] }));
        await attack(`copy src ${tag}`, api(token, '/api/fs/copy', { src_dir: p, dst_dir: `${base}/sub`, names: ['private.txt', 'secret.txt'] }));
        await attack(`move dst ${tag}`, api(token, '/api/fs/move', { src_dir: `${base}/sub`, dst_dir: p, names: ['deep.txt'] }));
        await attack(`copy dst ${tag}`, api(token, '/api/fs/copy', { src_dir: base || '/', dst_dir: p, names: ['file.txt'] }));
        await attack(`batch_rename ${tag}`, api(token, '/api/fs/batch_rename', { src_dir: p, rename_objects: [{ src_name: 'private.txt', new_name: 'x' }] }));
        await attack(`regex_rename ${tag}`, api(token, '/api/fs/regex_rename', { src_dir: p, src_name_regex: '.*', new_name_regex: 'r' }));
        await attack(`recursive_move ${tag}`, api(token, '/api/fs/recursive_move', { src_dir: p, dst_dir: `${base}/sub` }));
        await attack(`remove_empty_directory ${tag}`, api(token, '/api/fs/remove_empty_directory', { src_dir: p }));
        await attack(`offline ${tag}`, api(token, '/api/fs/add_offline_download', { urls: ['http://example.invalid/x'], path: p, tool: 'SimpleHttp', delete_policy: 'delete_never' }));
        for (const method of ['PUT /api/fs/put', 'PUT /api/fs/form'] as const) {
          await attack(`${method} ${tag}`, async () => {
            const headers: Record<string, string> = { authorization: token, 'file-path': encodeURIComponent(`${p}/pwned.txt`) };
            let payload: string | Buffer = 'PWNED';
            if (method.endsWith('form')) {
              headers['content-type'] = 'multipart/form-data; boundary=XyZ';
              payload = '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="pwned.txt"\r\nContent-Type: text/plain\r\n\r\nPWNED\r\n--XyZ--\r\n';
            }
            const res = await s.inject({ method: 'PUT', url: method.split(' ')[1]!, headers, payload });
            return { status: res.statusCode, body: res.body };
          });
        }
      }
      for (const name of NAME_ATTACKS) {
        const tag = `${who} name ${JSON.stringify(name)}`;
        await attack(`rename to ${tag}`, api(token, '/api/fs/rename', { path: `${base}/file.txt`, name }));
        await attack(`mkdir ${tag}`, api(token, '/api/fs/mkdir', { path: `${base}/${name}` }));
        await attack(`remove ${tag}`, api(token, '/api/fs/remove', { dir: base || '/', names: [name] }));
        await attack(`move ${tag}`, api(token, '/api/fs/move', { src_dir: base || '/', dst_dir: `${base}/sub`, names: [name] }));
        await attack(`copy ${tag}`, api(token, '/api/fs/copy', { src_dir: base || '/', dst_dir: `${base}/sub`, names: [name] }));
        await attack(`batch_rename ${tag}`, api(token, '/api/fs/batch_rename', { src_dir: `${base}/sub`, rename_objects: [{ src_name: 'deep.txt', new_name: name }] }));
        await attack(`regex_rename ${tag}`, api(token, '/api/fs/regex_rename', { src_dir: `${base}/sub`, src_name_regex: '^deep\\.txt$', new_name_regex: name }));
      }
      // Every write above that was allowed landed inside the allowed area: nothing else changed.
      expect(fingerprint(box, who === 'eve' ? path.join(root, 'u') : root)).toEqual(who === 'eve' ? outsideUser : outsideRoot);
    }
    expect(tried).toBeGreaterThan(1000);
    console.log(`traversal: ${tried} attack requests on the fs API`);
  });

  it('raw links /d and /p (admin, sign off) never reach outside the storage root', async () => {
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'sign_all', value: 'false' }] })).code).toBe(200);
    // The admin's run above may legitimately have changed /s/other (it is inside the root): set it again.
    mkdirSync(path.join(root, 'other'), { recursive: true });
    writeFileSync(path.join(root, 'other/private.txt'), SECRETS[1]!);
    const before = fingerprint(box, root);
    const raws = [
      ...PATH_ATTACKS.map((p) => `/s/u/${p}`),
      '/s/u/link-out/secret.txt',
      '/s/u/secret-link.txt',
      '/s/u/rel-link/secret.txt',
      '/s/%2e%2e/%2e%2e/outside/secret.txt',
      '/s/..%2f..%2foutside%2fsecret.txt',
      '/s/%252e%252e/%252e%252e/outside/secret.txt',
      '/s/..%5c..%5coutside%5csecret.txt',
      '/s/u/%00/../../other/private.txt',
      '/s/u/%c0%ae%c0%ae/other/private.txt',
      '/s/u/%e2%80%a4%e2%80%a4/other/private.txt',
    ];
    for (const prefix of ['d', 'p']) {
      for (const raw of raws) {
        const url = `/${prefix}${raw.startsWith('/') ? '' : '/'}${raw.split('/').map((seg) => (/%[0-9a-f]{2}/i.test(seg) ? seg : encodeURIComponent(seg))).join('/')}`;
        await attack(`GET ${url}`, async () => {
          const res = await s.inject({ method: 'GET', url, headers: { authorization: admin } });
          return { status: res.statusCode, body: res.body };
          // The admin may read /s/other; only what lies outside the root is secret here.
        }, [SECRETS[0]!]);
      }
    }
    // The admin can read the files that are really inside: the guard is not simply "refuse all".
    const ok = await s.inject({ method: 'GET', url: '/d/s/other/private.txt', headers: { authorization: admin } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe(SECRETS[1]);
    expect(fingerprint(box, root)).toEqual(before);
  });

  it("the user's own files stay reachable (the checks above are not vacuous)", async () => {
    const r = await s.api('POST', '/api/fs/list', { token: eve, body: { path: '/', refresh: true } });
    expect(r.code).toBe(200);
    const names = r.data.content.map((o: { name: string }) => o.name);
    expect(names).toContain('sub');
    expect(names).not.toContain('link-out');
    expect(names).not.toContain('secret-link.txt');
    expect(names).not.toContain('rel-link');
  });
});
