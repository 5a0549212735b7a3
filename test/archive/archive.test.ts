import { createHash } from 'node:crypto';
import { readFileSync, rmSync, existsSync, mkdirSync, readdirSync, copyFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sevenZip } from '../../src/archive/formats.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeFixtures, TREE } from './fixtures.js';
import { waitFor as poll } from '../helpers/wait.js';

const waitFor = (cond: () => boolean | Promise<boolean>, ms = 20_000) => poll(cond, ms, 25);

const FORMATS = ['deflate.zip', 'stored.zip', 'plain.tar', 'gz.tar.gz', 'short.tgz', 'bz.tar.bz2', 'xz.tar.xz', 'zst.tar.zst', 'plain5.rar', 'plain4.rar', ...(sevenZip() ? ['seven.7z'] : [])];

describe('archives on a Local storage', () => {
  let s: TestServer;
  let token: string;
  let fixtures: string;
  let root: string;
  let out: string;

  beforeAll(async () => {
    fixtures = makeFixtures();
    root = makeTree({ 'hidden/': '', 'locked/': '' });
    out = makeTree({});
    for (const f of readdirSync(fixtures)) copyFileSync(path.join(fixtures, f), path.join(root, f));
    copyFileSync(path.join(fixtures, 'deflate.zip'), path.join(root, 'hidden', 'secret.zip'));
    copyFileSync(path.join(fixtures, 'deflate.zip'), path.join(root, 'locked', 'inner.zip'));
    s = await startServer(BACKENDS[0]!, { core: { tasks: { retryDelayMs: 10 } } as never });
    token = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/a', root) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/out', out) })).code).toBe(200);
    await s.api('POST', '/api/admin/meta/create', { token, body: { path: '/a/hidden', hide: 'secret', h_sub: true } });
    await s.api('POST', '/api/admin/meta/create', { token, body: { path: '/a/locked', password: 'pw', p_sub: true } });
  });
  afterAll(async () => {
    await s.destroy();
    for (const d of [root, out, path.dirname(fixtures)]) rmSync(d, { recursive: true, force: true });
  });

  const meta = (p: string, extra: Record<string, unknown> = {}, tok = token) => s.api('POST', '/api/fs/archive/meta', { token: tok, body: { path: p, ...extra } });
  const list = (p: string, inner: string, extra: Record<string, unknown> = {}) => s.api('POST', '/api/fs/archive/list', { token, body: { path: p, inner_path: inner, ...extra } });
  const entry = (prefix: string, p: string, inner: string, pass = '', headers: Record<string, string> = {}) =>
    s.inject({ method: 'GET', url: `/${prefix}${p}?inner=${encodeURIComponent(inner)}&sign=${s.core.signer.sign(p)}${pass ? `&pass=${pass}` : ''}`, headers });
  const decompress = async (name: string, dst: string, extra: Record<string, unknown> = {}) => {
    const r = await s.api('POST', '/api/fs/archive/decompress', { token, body: { src_dir: '/a', dst_dir: dst, name: [name], ...extra } });
    expect(r.code, r.message).toBe(200);
    return r.data.task as Array<{ id: string }>;
  };
  const settle = async () => {
    await waitFor(() => [...s.core.tasks.list('decompress'), ...s.core.tasks.list('decompress_upload')].every((t) => [2, 4, 7].includes(t.state)));
  };

  it('answers the extensions it reads, from the archive module', async () => {
    const r = await s.api('GET', '/api/public/archive_extensions');
    expect(r.code).toBe(200);
    for (const ext of ['.zip', '.tar', '.tar.gz', '.tgz', '.tar.bz2', '.tar.xz', '.tar.zst', '.gz', '.bz2', '.xz']) expect(r.data).toContain(ext);
    expect(r.data.includes('.7z')).toBe(sevenZip() !== undefined);
    expect(r.data).toContain('.rar');
  });

  it.each(FORMATS)('%s: tree, inner listing, one entry and extraction, byte for byte', async (name) => {
    const m = await meta(`/a/${name}`);
    expect(m.code, m.message).toBe(200);
    expect(m.data.encrypted).toBe(false);
    expect(m.data.raw_url).toMatch(new RegExp(`/ae/a/${name.replace(/\./g, '\\.')}$`));
    expect(m.data.sign).toBe(s.core.signer.sign(`/a/${name}`));
    const top = m.data.content.map((c: { name: string }) => c.name).sort();
    expect(top).toEqual(['docs', 'hello.txt']);
    const docs = m.data.content.find((c: { name: string }) => c.name === 'docs');
    expect(docs.is_dir).toBe(true);
    expect(docs.children.map((c: { name: string }) => c.name).sort()).toEqual(['deep', 'readme.md']);

    const l = await list(`/a/${name}`, '/docs/deep');
    expect(l.code).toBe(200);
    expect(l.data.total).toBe(1);
    expect(l.data.content[0]).toMatchObject({ name: 'data.bin', size: 70_000, is_dir: false, sign: '', thumb: '' });
    const paged = await list(`/a/${name}`, '/', { page: 2, per_page: 1 });
    expect(paged.data.total).toBe(2);
    expect(paged.data.content).toHaveLength(1);

    for (const prefix of ['ae', 'ad']) {
      const res = await entry(prefix, `/a/${name}`, '/docs/deep/data.bin');
      expect(res.statusCode).toBe(200);
      expect(Buffer.compare(res.rawPayload, TREE['docs/deep/data.bin']!)).toBe(0);
    }

    const dst = `/out/${name.replace(/\W/g, '_')}`;
    await decompress(name, dst);
    await settle();
    const failed = [...s.core.tasks.list('decompress'), ...s.core.tasks.list('decompress_upload')].filter((t) => t.state !== 2);
    expect(failed.map((t) => t.error)).toEqual([]);
    for (const [rel, body] of Object.entries(TREE)) {
      expect(Buffer.compare(readFileSync(path.join(out, dst.slice(5), rel)), body), rel).toBe(0);
    }
  });

  it('single compressed files hold one entry named after the file', async () => {
    for (const ext of ['gz', 'bz2', 'xz', 'zst']) {
      const m = await meta(`/a/single.txt.${ext}`);
      expect(m.code, m.message).toBe(200);
      expect(m.data.content.map((c: { name: string }) => c.name)).toEqual(['single.txt']);
      const res = await entry('ae', `/a/single.txt.${ext}`, '/single.txt');
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(TREE['hello.txt']!.toString());
    }
  });

  it('put_into_new_dir and inner_path extract a part into a folder named after the archive', async () => {
    await decompress('deflate.zip', '/out/part', { put_into_new_dir: true, inner_path: '/docs/deep' });
    await settle();
    expect(readFileSync(path.join(out, 'part', 'deflate', 'deep', 'data.bin')).equals(TREE['docs/deep/data.bin']!)).toBe(true);
    expect(existsSync(path.join(out, 'part', 'deflate', 'hello.txt'))).toBe(false);
  });

  it('encrypted archives: the right password reads, a wrong or missing one answers 202', async () => {
    const encrypted = ['zipcrypto.zip', 'enc5.rar', 'locked5.rar', ...(sevenZip() ? ['aes.zip', 'locked.7z'] : [])];
    for (const name of encrypted) {
      const p = `/a/${name}`;
      if (name.startsWith('locked')) {
        // Encrypted headers: even the listing needs the password.
        expect(await meta(p)).toEqual({ code: 202, message: 'wrong archive password', data: null });
        expect((await meta(p, { archive_pass: 'nope', refresh: true })).code).toBe(202);
      } else {
        const m = await meta(p);
        expect(m.code).toBe(200);
        expect(m.data.encrypted).toBe(true);
      }
      expect((await meta(p, { archive_pass: 'secret', refresh: true })).code).toBe(200);
      const good = await entry('ae', p, '/hello.txt', 'secret');
      expect(good.statusCode, name).toBe(200);
      expect(good.body).toBe(TREE['hello.txt']!.toString());
      const wrong = await entry('ae', p, '/hello.txt', 'nope', { accept: 'application/json' });
      expect(wrong.statusCode).toBe(202);
      expect(wrong.json()).toMatchObject({ code: 202, message: 'wrong archive password' });
      const missing = await entry('ae', p, '/hello.txt');
      expect(missing.statusCode).toBe(202);
      expect(missing.headers['content-type']).toMatch(/^text\/html/);
      expect(missing.body).toContain('wrong archive password');
      const r = await s.api('POST', '/api/fs/archive/decompress', { token, body: { src_dir: '/a', dst_dir: `/out/enc-${name}`, name: [name], archive_pass: 'secret' } });
      expect(r.code).toBe(200);
    }
    await settle();
    for (const name of encrypted) expect(readFileSync(path.join(out, `enc-${name}`, 'docs', 'readme.md')).equals(TREE['docs/readme.md']!)).toBe(true);
  });

  it('ZipCrypto: a wrong password that passes the one-byte header check still answers 202, never garbage', async () => {
    // ZipCrypto checks a password against one byte: about one wrong password in 256 passes.
    // Find such a password for hello.txt of this run's fixture (its header is random).
    const zipjs = await import('@zip.js/zip.js');
    zipjs.configure({ useWebWorkers: false });
    const reader = new zipjs.ZipReader(new zipjs.Uint8ArrayReader(readFileSync(path.join(root, 'zipcrypto.zip'))));
    const hello = (await reader.getEntries()).find((e) => e.filename === 'hello.txt') as import('@zip.js/zip.js').FileEntry;
    expect(hello.zipCrypto).toBe(true);
    let passing: string | undefined;
    for (let i = 0; i < 20_000 && !passing; i++) {
      const candidate = `wrong-${i}`;
      if (await hello.getData(new zipjs.Uint8ArrayWriter(), { password: candidate, checkPasswordOnly: true }).then(() => true, () => false)) passing = candidate;
    }
    await reader.close();
    expect(passing, 'a wrong password passing the header check').toBeDefined();
    const r = await entry('ae', '/a/zipcrypto.zip', '/hello.txt', passing, { accept: 'application/json' });
    expect(r.statusCode, r.body.slice(0, 80)).toBe(202);
    expect(r.json()).toMatchObject({ code: 202, message: 'wrong archive password' });
    const right = await entry('ae', '/a/zipcrypto.zip', '/hello.txt', 'secret');
    expect(right.body).toBe(TREE['hello.txt']!.toString());
  });

  it('non-UTF-8 names are decoded with non_efs_zip_encoding', async () => {
    expect((await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'non_efs_zip_encoding', value: 'gbk' }] })).code).toBe(200);
    const m = await meta('/a/gbk.zip', { refresh: true });
    expect(m.data.content.map((c: { name: string }) => c.name)).toEqual(['中文.txt']);
    const res = await entry('ae', '/a/gbk.zip', '/中文.txt');
    expect(res.body).toBe('gbk name');
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'non_efs_zip_encoding', value: '' }] });
  });

  it('zip-slip: names with .., absolute paths, drive letters, backslashes and links are never listed or written', async () => {
    for (const name of ['slip.zip', 'slip.tar', 'slip.rar']) {
      const m = await meta(`/a/${name}`);
      expect(m.code).toBe(200);
      expect(m.data.content.map((c: { name: string }) => c.name)).toEqual(['ok.txt']);
      await decompress(name, `/out/slip-${name}`);
    }
    await settle();
    for (const name of ['slip.zip', 'slip.tar', 'slip.rar']) expect(readdirSync(path.join(out, `slip-${name}`))).toEqual(['ok.txt']);
    expect(existsSync(path.join(out, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(s.core.config.temp_dir, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(s.core.config.temp_dir, 'archive', 'escaped.txt'))).toBe(false);
  });

  it('bombs are stopped at archive_max_size and archive_max_entries with a clear error', async () => {
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'archive_max_size', value: '16' }] });
    await decompress('bomb.zip', '/out/bomb');
    await settle();
    const t = s.core.tasks.list('decompress').find((x) => x.name.includes('bomb.zip'))!;
    expect(t.state).toBe(7);
    expect(t.error).toMatch(/expands to more than 16777216 bytes \(setting archive_max_size\)/);
    expect(existsSync(path.join(out, 'bomb', 'zeros.bin'))).toBe(false);
    const res = await entry('ae', '/a/bomb.zip', '/zeros.bin', '', { accept: 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, message: 'the archive expands to more than 16777216 bytes (setting archive_max_size)' });
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'archive_max_size', value: '10240' }, { key: 'archive_max_entries', value: '2' }] });
    const m = await meta('/a/deflate.zip', { refresh: true });
    expect(m).toMatchObject({ code: 400, message: 'the archive holds more than 2 entries (setting archive_max_entries)' });
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'archive_max_entries', value: '1000000' }] });
  });

  it('a failed extraction is retried once the limit allows it; a running one is canceled cleanly', async () => {
    const failed = s.core.tasks.list('decompress').find((x) => x.name.includes('bomb.zip') && x.state === 7)!;
    expect(failed).toBeDefined();
    const r = await s.api('POST', `/api/task/decompress/retry?tid=${failed.id}`, { token });
    expect(r.code).toBe(200);
    await waitFor(() => s.core.tasks.get(failed.id)!.state !== 7);
    await settle();
    expect(s.core.tasks.get(failed.id)!.state).toBe(2);
    await waitFor(() => existsSync(path.join(out, 'bomb', 'zeros.bin')));
    expect(readFileSync(path.join(out, 'bomb', 'zeros.bin')).equals(Buffer.alloc(64 * 1024 * 1024))).toBe(true);

    const [task] = await decompress('bomb.zip', '/out/canceled');
    await waitFor(() => s.core.tasks.get(task!.id)!.state === 1);
    expect((await s.api('POST', `/api/task/decompress/cancel?tid=${task!.id}`, { token })).code).toBe(200);
    await settle();
    expect(s.core.tasks.get(task!.id)!.state).toBe(4);
    expect(existsSync(path.join(out, 'canceled'))).toBe(false);
    const staging = path.join(s.core.config.temp_dir, 'archive');
    expect(existsSync(staging) ? readdirSync(staging) : []).toEqual([]);
  });

  it('the archive file follows the rules: hide, folder password, permission bits, signs', async () => {
    await s.api('POST', '/api/admin/user/create', { token, body: { username: 'reader', password: 'r', permission: 1 << 12 } });
    const reader = await s.login('reader', 'r');
    expect(await meta('/a/deflate.zip', {}, reader)).toMatchObject({ code: 200 });
    expect(await meta('/a/hidden/secret.zip', {}, reader)).toMatchObject({ code: 403 });
    expect(await meta('/a/locked/inner.zip', {}, reader)).toMatchObject({ code: 403, message: 'password is incorrect or you have no permission' });
    expect((await meta('/a/locked/inner.zip', { password: 'pw' }, reader)).code).toBe(200);
    const listLocked = await s.api('POST', '/api/fs/archive/list', { token: reader, body: { path: '/a/locked/inner.zip', inner_path: '/' } });
    expect(listLocked.code).toBe(403);
    await s.api('POST', '/api/admin/user/create', { token, body: { username: 'extractor', password: 'e', permission: (1 << 12) | (1 << 13) | (1 << 3) } });
    const extractor = await s.login('extractor', 'e');
    const asExtractor = (password?: string) =>
      s.api('POST', '/api/fs/archive/decompress', { token: extractor, body: { src_dir: '/a/locked', dst_dir: '/out/from-locked', name: ['inner.zip'], ...(password ? { password } : {}) } });
    expect(await asExtractor()).toMatchObject({ code: 403, message: 'password is incorrect or you have no permission' });
    expect((await asExtractor('pw')).code).toBe(200);

    await s.api('POST', '/api/admin/user/create', { token, body: { username: 'noarc', password: 'n', permission: 0 } });
    const noarc = await s.login('noarc', 'n');
    expect(await meta('/a/deflate.zip', {}, noarc)).toMatchObject({ code: 403, message: 'permission denied' });
    const r = await s.api('POST', '/api/fs/archive/decompress', { token: noarc, body: { src_dir: '/a', dst_dir: '/out', name: ['deflate.zip'] } });
    expect(r).toMatchObject({ code: 403 });
    // entry links fail as /d does: the real status, OpenList's page, the envelope when asked for JSON
    const unsigned = await s.inject({ method: 'GET', url: '/ae/a/deflate.zip?inner=/hello.txt', headers: { accept: 'application/json' } });
    expect(unsigned.statusCode).toBe(401);
    expect(unsigned.json()).toEqual({ code: 401, message: 'expire missing', data: null });
    const unsignedPage = await s.inject({ method: 'GET', url: '/ad/a/deflate.zip?inner=/hello.txt' });
    expect([unsignedPage.statusCode, unsignedPage.headers['content-type']]).toEqual([401, 'text/html; charset=utf-8']);
    expect(unsignedPage.body).toContain('expire missing');
    const badInner = await entry('ae', '/a/deflate.zip', '/../etc/passwd', '', { accept: 'application/json' });
    expect(badInner.statusCode).toBe(400);
    expect(badInner.json()).toMatchObject({ code: 400, message: 'invalid inner path: /../etc/passwd' });
  });

  it('a Local target takes a staged file by renaming it (its bytes are written once), after checking a declared hash', async () => {
    const staging = path.join(s.core.config.temp_dir, 'archive');
    mkdirSync(staging, { recursive: true });
    const body = TREE['docs/deep/data.bin']!;
    const staged = path.join(staging, 'take-me.bin');
    writeFileSync(staged, body);
    const inode = statSync(staged).ino;
    await s.core.writer.putFile('/out/taken/data.bin', { path: staged, size: body.length }, { overwrite: false });
    expect(existsSync(staged)).toBe(false);
    expect(statSync(path.join(out, 'taken', 'data.bin')).ino).toBe(inode);
    expect(readFileSync(path.join(out, 'taken', 'data.bin')).equals(body)).toBe(true);
    writeFileSync(staged, body);
    const md5 = createHash('md5').update(body).digest('hex');
    const hashedInode = statSync(staged).ino;
    await expect(s.core.writer.putFile('/out/taken/bad.bin', { path: staged, size: body.length, hashes: { md5: '0'.repeat(32) } }, { overwrite: false })).rejects.toThrow();
    expect(existsSync(staged)).toBe(true);
    expect(existsSync(path.join(out, 'taken', 'bad.bin'))).toBe(false);
    await s.core.writer.putFile('/out/taken/hashed.bin', { path: staged, size: body.length, hashes: { md5 } }, { overwrite: false });
    expect(existsSync(staged)).toBe(false);
    expect(statSync(path.join(out, 'taken', 'hashed.bin')).ino).toBe(hashedInode);
    expect(readFileSync(path.join(out, 'taken', 'hashed.bin')).equals(body)).toBe(true);
  });

  it('/ap serves entries of a storage that proxies (Local always does)', async () => {
    const txt = await entry('ap', '/a/deflate.zip', '/hello.txt');
    expect(txt.statusCode).toBe(200);
  });

  it('a decompress task killed while running is resumed after a restart; its staging folder survives, orphans are swept', async () => {
    const staging = path.join(s.core.config.temp_dir, 'archive');
    mkdirSync(path.join(staging, 'orphan-extract'), { recursive: true });
    const temp = path.join(staging, 'crashed-extract');
    mkdirSync(temp, { recursive: true });
    const now = Date.now();
    // The row as a kill -9 leaves it: running, half done, staging folder half written.
    await s.core.repos.tasks.upsert({
      id: 'crashedDecompress0001',
      kind: 'decompress',
      name: 'decompress [/a/gz.tar.gz](/) to [/out/resumed]',
      creator_id: 1,
      creator: 'admin',
      creator_role: 2,
      state: 1,
      status: 'decompressing',
      progress: 50,
      error: '',
      total_bytes: 1,
      retry_count: 0,
      payload: JSON.stringify({ src: '/a/gz.tar.gz', dstDir: '/out/resumed', inner: '/', password: '', putIntoNewDir: false, overwrite: false, temp }),
      start_time: now,
      end_time: 0,
      created_at: now,
      updated_at: now,
    });
    // And an upload of extracted files that was cut short: its staged tree is stored after the restart.
    const staged = path.join(staging, 'crashed-upload');
    mkdirSync(path.join(staged, 'sub'), { recursive: true });
    writeFileSync(path.join(staged, 'sub', 'staged.txt'), 'staged before the crash');
    await s.core.repos.tasks.upsert({
      id: 'crashedDecompUpload01',
      kind: 'decompress_upload',
      name: 'upload the extracted files of [/a/x.zip] to [/out/resumed-upload]',
      creator_id: 1,
      creator: 'admin',
      creator_role: 2,
      state: 1,
      status: 'uploading',
      progress: 10,
      error: '',
      total_bytes: 23,
      retry_count: 0,
      payload: JSON.stringify({ temp: staged, dstDir: '/out/resumed-upload', overwrite: false }),
      start_time: now,
      end_time: 0,
      created_at: now,
      updated_at: now,
    });
    s = await s.restart();
    token = await s.login();
    await waitFor(() => existsSync(path.join(out, 'resumed', 'docs', 'deep', 'data.bin')) && !existsSync(temp));
    await waitFor(() => existsSync(path.join(out, 'resumed-upload', 'sub', 'staged.txt')) && !existsSync(staged));
    expect(readFileSync(path.join(out, 'resumed-upload', 'sub', 'staged.txt'), 'utf8')).toBe('staged before the crash');
    await settle();
    expect(readFileSync(path.join(out, 'resumed', 'docs', 'deep', 'data.bin')).equals(TREE['docs/deep/data.bin']!)).toBe(true);
    expect(existsSync(path.join(staging, 'orphan-extract'))).toBe(false);
    const done = await s.api('GET', '/api/task/decompress/done', { token });
    expect(done.data.map((t: { id: string }) => t.id)).toContain('crashedDecompress0001');
  });
});
