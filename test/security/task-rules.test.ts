import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/** A zip holding exactly these names (Python's zipfile writes `..` and absolute names as given). */
function zipOf(names: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-rules-zip-'));
  const file = path.join(dir, 'a.zip');
  const script = `import sys, json, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    for n, b in json.loads(sys.argv[2]).items(): z.writestr(n, b)\n`;
  execFileSync('python3', ['-c', script, file, JSON.stringify(names)]);
  return file;
}

const DECOMPRESS = 1 << 13;
const WRITE = 8;

describe('tasks write each name as their creator may (decompress)', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let user: { id: number; token: string };

  beforeAll(async () => {
    root = makeTree({ 'out/': '', 'out/locked/': '', 'src/': '' });
    const zip = zipOf({
      'ok.txt': 'ok',
      'sub/fine.txt': 'fine',
      'secret.txt': 'hidden',
      'locked/inner.txt': 'locked',
      '.DS_Store': 'system',
      '../escape.txt': 'escape',
      '/abs.txt': 'absolute',
    });
    execFileSync('cp', [zip, path.join(root, 'src', 'a.zip')]);
    rmSync(path.dirname(zip), { recursive: true, force: true });
    s = await startServer(BACKENDS[0]!, { core: { tasks: { retryBaseMs: 10 } } });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/out', hide: 'secret', h_sub: true } });
    await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/out/locked', password: 'pw', p_sub: true } });
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'ignore_system_files', value: 'true' }] });
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'extractor', password: 'extract pass 1', base_path: '/disk', permission: WRITE | DECOMPRESS } });
    expect(created.code, created.message).toBe(200);
    const token = await s.login('extractor', 'extract pass 1');
    user = { id: (await s.api('GET', '/api/me', { token })).data.id, token };
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  const uploadTask = () => waitFor(() => s.core.tasks.list('decompress_upload').find((t) => [2, 4, 7].includes(t.state)), 20_000);

  it('refuses on disk what a direct upload would, names it in the error, writes the rest', async () => {
    // The direct uploads of the same names are refused.
    for (const name of ['secret.txt', 'locked/inner.txt', '.DS_Store']) {
      const r = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: user.token, 'file-path': encodeURIComponent(`/out/${name}`), 'content-type': 'application/octet-stream' }, payload: 'x' });
      expect(r.json().code, name).not.toBe(200);
    }
    const r = await s.api('POST', '/api/fs/archive/decompress', { token: user.token, body: { src_dir: '/src', dst_dir: '/out', name: ['a.zip'], overwrite: true } });
    expect(r.code, r.message).toBe(200);
    const up = await uploadTask();
    expect(up.creator).toBe('extractor');
    expect(up.state).toBe(7);
    expect(readFileSync(path.join(root, 'out', 'ok.txt'), 'utf8')).toBe('ok');
    expect(readFileSync(path.join(root, 'out', 'sub', 'fine.txt'), 'utf8')).toBe('fine');
    for (const gone of ['out/secret.txt', 'out/locked/inner.txt', 'out/.DS_Store', 'escape.txt', 'out/abs.txt', 'abs.txt']) expect(existsSync(path.join(root, gone)), gone).toBe(false);
    expect(existsSync(path.join(path.dirname(root), 'escape.txt'))).toBe(false);
    expect(up.error).toMatch(/^skipped 6 entries: /);
    for (const named of ['secret.txt (permission denied)', 'locked/ (password is incorrect or you have no permission)', 'locked/inner.txt (password is incorrect or you have no permission)', '.DS_Store (system file upload ignored)', '../escape.txt (unsafe entry name)', '/abs.txt (unsafe entry name)']) {
      expect(up.error).toContain(named);
    }
    expect(up.error).not.toContain(s.dataDir);
    expect(up.error).not.toContain(root);
    // Listed to the creator as theirs, with the same error.
    const done = await s.api('GET', '/api/task/decompress_upload/done', { token: user.token });
    expect(done.data.find((t: { id: string }) => t.id === up.id).error).toBe(up.error);
  });

  it('stops at the next name once the creator loses the decompress bit (queued upload)', async () => {
    for (const t of s.core.tasks.list('decompress_upload')) await s.core.tasks.remove(t.id);
    rmSync(path.join(root, 'out', 'ok.txt'), { force: true });
    // The upload task waits behind one that holds the only worker until the bit is gone.
    s.core.tasks.setWorkers('decompress_upload', 1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    s.core.tasks.submit({ kind: 'decompress_upload', name: 'holder', run: () => held });
    const r = await s.api('POST', '/api/fs/archive/decompress', { token: user.token, body: { src_dir: '/src', dst_dir: '/out', name: ['a.zip'], overwrite: true } });
    expect(r.code, r.message).toBe(200);
    await waitFor(() => s.core.tasks.list('decompress_upload').some((t) => t.name !== 'holder' && t.state === 0), 20_000);
    const changed = await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: user.id, username: 'extractor', permission: WRITE } });
    expect(changed.code, changed.message).toBe(200);
    release();
    const up = await waitFor(() => s.core.tasks.list('decompress_upload').find((t) => t.name !== 'holder' && [2, 4, 7].includes(t.state)), 20_000);
    expect(up.state).toBe(7);
    expect(up.error).toMatch(/its creator may no longer run it \(permission denied\)/);
    expect(existsSync(path.join(root, 'out', 'ok.txt'))).toBe(false);
  });
});

describe('tasks write each name as their creator may (offline download)', () => {
  let s: TestServer;
  let root: string;
  let token: string;
  let peer: Server;
  let base: string;

  beforeAll(async () => {
    root = makeTree({ 'out/': '' });
    // The file name comes from the query: /f?name=<Content-Disposition file name>.
    peer = createServer((req, res) => {
      const name = new URL(req.url ?? '/', 'http://x').searchParams.get('name') ?? 'none';
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '4', 'content-disposition': `attachment; filename="${name}"` });
      res.end('data');
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    s = await startServer(BACKENDS[0]!, { core: { tasks: { retryBaseMs: 10 } } });
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/out', hide: 'secret', h_sub: true } });
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'ignore_system_files', value: 'true' }, { key: 'offline_download_allow_private', value: 'true' }] });
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'fetcher', password: 'fetch pass 1', base_path: '/disk', permission: WRITE | 4 } });
    expect(created.code, created.message).toBe(200);
    token = await s.login('fetcher', 'fetch pass 1');
  });
  afterAll(async () => {
    await s.destroy();
    await new Promise((r) => peer.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ['secret.txt', 'skipped 1 entry: secret.txt (permission denied)'],
    ['.DS_Store', 'skipped 1 entry: .DS_Store (system file upload ignored)'],
    ['../x.txt', 'skipped 1 entry: ../x.txt (unsafe file name)'],
    ['ok.bin', ''],
  ])('Content-Disposition %s', async (name, error) => {
    for (const policy of ['delete_on_upload_succeed', 'upload_download_stream']) {
      const r = await s.api('POST', '/api/fs/add_offline_download', { token, body: { urls: [`${base}/f?name=${encodeURIComponent(name)}`], path: '/out', tool: 'SimpleHttp', delete_policy: policy } });
      expect(r.code, r.message).toBe(200);
      const id = r.data.tasks[0].id as string;
      const task = await waitFor(() => {
        const t = s.core.tasks.get(id);
        return t && [2, 4, 7].includes(t.state) && t;
      }, 20_000);
      if (error) {
        expect(task.state, policy).toBe(7);
        expect(task.error, policy).toBe(error);
        expect(readdirSync(path.join(root, 'out')), policy).not.toContain(name);
        expect(existsSync(path.join(root, 'x.txt')), policy).toBe(false);
      } else {
        expect(task.state, task.error).toBe(2);
        await waitFor(() => existsSync(path.join(root, 'out', 'ok.bin')), 20_000);
        expect(readFileSync(path.join(root, 'out', 'ok.bin'), 'utf8')).toBe('data');
        rmSync(path.join(root, 'out', 'ok.bin'));
      }
    }
  });
});

describe('a change to the creator stops its queued and running extraction at the next name', () => {
  const CHANGES = ['disable', 'delete', 'narrow', 'write', 'decompress', 'hide'] as const;
  const FILES = 12;
  let s: TestServer;
  let admin: string;
  let root: string;
  let zip: string;
  let n = 0;

  beforeAll(async () => {
    root = makeTree({});
    zip = zipOf(Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, `file ${i}`])));
    s = await startServer(BACKENDS[0]!, { core: { tasks: { retryBaseMs: 10 } } });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    // A slow target: each stored entry takes 60 ms, so a change lands while the task runs.
    const writer = s.core.writer;
    const putFile = writer.putFile.bind(writer);
    writer.putFile = async (...args) => {
      await new Promise((r) => setTimeout(r, 60));
      return putFile(...args);
    };
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(path.dirname(zip), { recursive: true, force: true });
  });

  const written = (dir: string) => (existsSync(dir) ? readdirSync(dir).length : 0);

  const apply = async (change: (typeof CHANGES)[number], id: number, name: string, home: string) => {
    const update = (body: Record<string, unknown>) => s.api('POST', '/api/admin/user/update', { token: admin, body: { id, username: name, base_path: `/disk/${home}`, permission: WRITE | DECOMPRESS, ...body } });
    const r =
      change === 'disable' ? await update({ disabled: true })
      : change === 'delete' ? await s.api('POST', '/api/admin/user/delete', { token: admin, query: { id: String(id) } })
      : change === 'narrow' ? await update({ base_path: `/disk/${home}/src` })
      : change === 'write' ? await update({ permission: DECOMPRESS })
      : change === 'decompress' ? await update({ permission: WRITE })
      : await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: `/disk/${home}/out`, hide: '^f', h_sub: true } });
    expect(r.code, r.message).toBe(200);
  };

  it.each(CHANGES.flatMap((c) => (['queued', 'running'] as const).map((when) => ({ change: c, when }))))('$change, $when', async ({ change, when }) => {
    const home = `h${++n}`;
    const name = `stopped${n}`;
    execFileSync('mkdir', ['-p', path.join(root, home, 'src'), path.join(root, home, 'out')]);
    execFileSync('cp', [zip, path.join(root, home, 'src', 'a.zip')]);
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: 'stop pass 1', base_path: `/disk/${home}`, permission: WRITE | DECOMPRESS } });
    expect(created.code, created.message).toBe(200);
    const token = await s.login(name, 'stop pass 1');
    const id = (await s.api('GET', '/api/me', { token })).data.id as number;
    const out = path.join(root, home, 'out');
    let release = () => {};
    if (when === 'queued') {
      s.core.tasks.setWorkers('decompress_upload', 1);
      const held = new Promise<void>((r) => (release = r));
      s.core.tasks.submit({ kind: 'decompress_upload', name: `holder${n}`, run: () => held });
    }
    const r = await s.api('POST', '/api/fs/archive/decompress', { token, body: { src_dir: '/src', dst_dir: '/out', name: ['a.zip'] } });
    expect(r.code, r.message).toBe(200);
    const mine = () => s.core.tasks.list('decompress_upload').find((t) => t.creator === name);
    if (when === 'queued') await waitFor(() => mine()?.state === 0, 20_000);
    else await waitFor(() => written(out) >= 2, 20_000);
    await apply(change, id, name, home);
    const before = written(out);
    release();
    const up = await waitFor(() => {
      const t = mine();
      return t && [2, 4, 7].includes(t.state) && t;
    }, 20_000);
    expect(up.state).toBe(7);
    if (['disable', 'delete', 'decompress'].includes(change)) expect(up.error).toMatch(/^the task was stopped: its creator may no longer run it/);
    else expect(up.error).toMatch(/^(skipped \d+ entries: |the target folder is refused: )/);
    // Nothing after the change: at most the one entry being stored when it came.
    expect(written(out)).toBeLessThanOrEqual(when === 'queued' ? 0 : before + 1);
    expect(written(out)).toBeLessThan(FILES);
  });
});

describe('tasks write each name as their creator may (copy and move across storages)', () => {
  let s: TestServer;
  let a: string;
  let b: string;
  let token: string;

  beforeAll(async () => {
    a = makeTree({ 'tree/ok.txt': 'ok', 'tree/secret.txt': 'secret', 'tree/.DS_Store': 'sys', 'tree/sub/deep.txt': 'deep' });
    b = makeTree({ 'dst/': '' });
    s = await startServer(BACKENDS[0]!, { core: { tasks: { retryBaseMs: 10 } } });
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/a', a) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/b', b) })).code).toBe(200);
    // Hidden in the target only: the source folder holds nothing hidden, so the request is taken.
    await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/b/dst', hide: 'secret', h_sub: true } });
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'ignore_system_files', value: 'true' }] });
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'copier', password: 'copy pass 1', base_path: '/', permission: WRITE | 32 | 64 } });
    expect(created.code, created.message).toBe(200);
    token = await s.login('copier', 'copy pass 1');
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  });

  it.each(['copy', 'move'] as const)('%s: refused names skipped and named, the rest written', async (op) => {
    rmSync(path.join(b, 'dst', 'tree'), { recursive: true, force: true });
    const r = await s.api('POST', `/api/fs/${op}`, { token, body: { src_dir: '/a', dst_dir: '/b/dst', names: ['tree'] } });
    expect(r.code, r.message).toBe(200);
    const task = await waitFor(() => s.core.tasks.list(op).find((t) => [2, 4, 7].includes(t.state)), 20_000);
    expect(task.state).toBe(7);
    expect(task.error).toMatch(/^skipped 2 entries: /);
    expect(task.error).toContain('tree/secret.txt (permission denied)');
    expect(task.error).toContain('tree/.DS_Store (system file upload ignored)');
    expect(readFileSync(path.join(b, 'dst', 'tree', 'ok.txt'), 'utf8')).toBe('ok');
    expect(readFileSync(path.join(b, 'dst', 'tree', 'sub', 'deep.txt'), 'utf8')).toBe('deep');
    expect(existsSync(path.join(b, 'dst', 'tree', 'secret.txt'))).toBe(false);
    expect(existsSync(path.join(b, 'dst', 'tree', '.DS_Store'))).toBe(false);
    // A move that skipped a name keeps its source.
    expect(existsSync(path.join(a, 'tree', 'secret.txt'))).toBe(true);
    await s.core.tasks.remove(task.id);
  });

  it('copy with merge into a folder already there: its task decides each name the same way', async () => {
    rmSync(path.join(b, 'dst', 'tree'), { recursive: true, force: true });
    mkdirSync(path.join(b, 'dst', 'tree', 'sub'), { recursive: true });
    writeFileSync(path.join(b, 'dst', 'tree', 'ok.txt'), 'kept');
    const r = await s.api('POST', '/api/fs/copy', { token, body: { src_dir: '/a', dst_dir: '/b/dst', names: ['tree'], merge: true } });
    expect(r.code, r.message).toBe(200);
    const task = s.core.tasks.get(r.data.tasks[0].id)!;
    await task.done;
    expect(task.state).toBe(7);
    expect(task.error).toMatch(/^skipped 2 entries: /);
    expect(task.error).toContain('tree/secret.txt (permission denied)');
    expect(readFileSync(path.join(b, 'dst', 'tree', 'ok.txt'), 'utf8')).toBe('kept');
    expect(readFileSync(path.join(b, 'dst', 'tree', 'sub', 'deep.txt'), 'utf8')).toBe('deep');
    expect(existsSync(path.join(b, 'dst', 'tree', 'secret.txt'))).toBe(false);
    expect(existsSync(path.join(b, 'dst', 'tree', '.DS_Store'))).toBe(false);
    await s.core.tasks.remove(task.id);
  });
});
