import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUrlTree } from '../../src/drivers/url-tree/tree.js';
import { BACKENDS } from '../helpers/backends.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance, FIXTURE } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';

describe('URL tree text', () => {
  it('nests by two spaces, names files by prefix or URL, reads size and modified', () => {
    const root = parseUrlTree(
      ['Docs:', '  Inner:', '    deep.txt:5:1700000000:http://h/x/deep', '  http://h/files/plain%20name.pdf', 'top.bin:12:https://h/t?q=1', ''].join('\n'),
    );
    expect(root.children.map((c) => c.name)).toEqual(['Docs', 'top.bin']);
    const docs = root.children[0]!;
    expect(docs.children.map((c) => [c.name, c.isDir])).toEqual([['Inner', true], ['plain name.pdf', false]]);
    expect(docs.children[0]!.children[0]).toMatchObject({ name: 'deep.txt', size: 5, modified: 1700000000, url: 'http://h/x/deep' });
    expect(root.children[1]).toMatchObject({ size: 12, url: 'https://h/t?q=1' });
  });

  it('refuses malformed lines with their line number', () => {
    expect(() => parseUrlTree('Docs:\n   odd.txt:http://h/a')).toThrow(/line 2: indentation/);
    expect(() => parseUrlTree('just a name')).toThrow(/line 1: a file needs an http/);
    expect(() => parseUrlTree('f:big:http://h/a')).toThrow(/size must be an integer/);
    expect(() => parseUrlTree('a:http://h/1\na:http://h/2')).toThrow(/appears twice/);
    expect(() => parseUrlTree('Docs:\n    too-deep:http://h/a')).toThrow(/deeper/);
  });
});

describe('UrlTree driver', () => {
  let s: TestServer;
  let admin: string;
  let files: FileServer;
  const body = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 256));

  beforeAll(async () => {
    files = await startFileServer({ files: { '/data/blob.bin': { body }, '/data/plain%20name.txt': { body: Buffer.from('plain') } } });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    // The file server is on loopback: the SSRF guard refuses it unless the admin allows it.
    const allow = await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'url_fetch_allow_private', value: 'true' }] });
    expect(allow.code).toBe(200);
    const structure = ['Folder:', `  blob.bin:5000:1700000000:${files.base}/data/blob.bin`, `  ${files.base}/data/plain%20name.txt`, `missing.bin:${files.base}/nowhere`].join('\n');
    await mount(s, admin, '/urls', 'UrlTree', { url_structure: structure });
    await mount(s, admin, '/proxied', 'UrlTree', { url_structure: structure }, { web_proxy: true });
    await mount(s, admin, '/sized', 'UrlTree', { url_structure: `${files.base}/data/blob.bin\nnosize:${files.base}/nowhere`, head_size: true });
  });
  afterAll(async () => {
    await s?.destroy();
    await files?.close();
  });

  it('lists the tree with sizes and times from the text', async () => {
    expect(await names(s, admin, '/urls')).toEqual(['Folder', 'missing.bin']);
    const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/urls/Folder' } });
    expect(listed.data.content.map((o: any) => [o.name, o.size])).toEqual([['blob.bin', 5000], ['plain name.txt', 0]]);
    expect(new Date(listed.data.content[0].modified).getTime()).toBe(1_700_000_000_000);
  });

  it('redirects /d to the URL; with web_proxy, /p proxies it with ranges', async () => {
    const d = await s.inject({ method: 'GET', url: `/d/urls/Folder/blob.bin?sign=${s.core.signer.sign('/urls/Folder/blob.bin')}` });
    expect(d.statusCode).toBe(302);
    expect(d.headers.location).toBe(`${files.base}/data/blob.bin`);
    const p = await s.inject({ method: 'GET', url: `/p/proxied/Folder/blob.bin?sign=${s.core.signer.sign('/proxied/Folder/blob.bin')}`, headers: { range: 'bytes=100-199' } });
    expect(p.statusCode).toBe(206);
    expect(p.rawPayload.equals(body.subarray(100, 200))).toBe(true);
    const notAllowed = await s.inject({ method: 'GET', url: `/p/urls/Folder/blob.bin?sign=${s.core.signer.sign('/urls/Folder/blob.bin')}`, headers: { accept: 'application/json' } });
    expect(notAllowed.statusCode).toBe(403);
    expect(notAllowed.json()).toMatchObject({ code: 403, message: 'proxy not allowed' });
    expect((await download(s, '/urls/Folder/plain name.txt')).body.toString()).toBe('plain');
  });

  it('asks HEAD for sizes only when head_size is on and the line gives none', async () => {
    const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/sized' } });
    expect(listed.data.content.map((o: any) => [o.name, o.size])).toEqual([['blob.bin', 5000], ['nosize', 0]]);
    expect(files.ranges.get('/nowhere')?.length).toBe(1);
    expect(files.ranges.get('/data/blob.bin')!.length).toBeGreaterThanOrEqual(1);
  });

  it('writable: makes, renames, moves, copies and removes entries, and stores the new structure', async () => {
    const structure = ['Folder:', `  blob.bin:5000:1700000000:${files.base}/data/blob.bin`, `top.txt:${files.base}/data/plain%20name.txt`].join('\n');
    const id = await mount(s, admin, '/edit', 'UrlTree', { url_structure: structure, writable: true });
    const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });
    expect((await post('/api/fs/mkdir', { path: '/edit/New/Inner' })).code).toBe(200);
    expect((await post('/api/fs/rename', { path: '/edit/top.txt', name: 'renamed.txt' })).code).toBe(200);
    expect((await post('/api/fs/copy', { src_dir: '/edit/Folder', dst_dir: '/edit/New', names: ['blob.bin'] })).code).toBe(200);
    expect((await post('/api/fs/move', { src_dir: '/edit', dst_dir: '/edit/New/Inner', names: ['renamed.txt'] })).code).toBe(200);
    await new Promise((r) => setTimeout(r, 300)); // copy and move may run as tasks
    expect((await post('/api/fs/remove', { dir: '/edit', names: ['Folder'] })).code).toBe(200);
    expect(await names(s, admin, '/edit')).toEqual(['New']);
    expect(await names(s, admin, '/edit/New')).toEqual(['Inner', 'blob.bin']);
    expect(await names(s, admin, '/edit/New/Inner')).toEqual(['renamed.txt']);
    // the copy still links to its URL, with the size and time of its line
    const copied = await post('/api/fs/get', { path: '/edit/New/blob.bin' });
    expect(copied.data).toMatchObject({ size: 5000 });
    expect((await download(s, '/edit/New/Inner/renamed.txt')).body.toString()).toBe('plain');
    // stored: the storage row holds the new text, and a restart of the storage reads it back
    const row = (await s.api('GET', `/api/admin/storage/get?id=${id}`, { token: admin })).data;
    expect(JSON.parse(row.addition).url_structure).toBe(
      ['New:', '  Inner:', `    renamed.txt:${files.base}/data/plain%20name.txt`, `  blob.bin:5000:1700000000:${files.base}/data/blob.bin`].join('\n'),
    );
    expect((await s.api('POST', `/api/admin/storage/disable?id=${id}`, { token: admin })).code).toBe(200);
    expect((await s.api('POST', `/api/admin/storage/enable?id=${id}`, { token: admin })).code).toBe(200);
    expect(await names(s, admin, '/edit/New/Inner')).toEqual(['renamed.txt']);
    // a name taken in the folder is refused
    expect((await post('/api/fs/rename', { path: '/edit/New/blob.bin', name: 'Inner' })).code).not.toBe(200);
    expect(await names(s, admin, '/edit/New')).toEqual(['Inner', 'blob.bin']);
  });

  it('is read-only and reports a malformed structure as the storage status', async () => {
    const put = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'x', headers: { authorization: admin, 'file-path': encodeURIComponent('/urls/new.txt'), 'content-type': 'text/plain' } });
    expect(put.json()).toMatchObject({ code: 500, message: 'upload not supported' });
    // not writable (the default): OpenList's permission denied
    expect((await s.api('POST', '/api/fs/mkdir', { token: admin, body: { path: '/urls/Folder/x' } })).message).toMatch(/not writable|permission denied/);
    const bad = await s.api('POST', '/api/admin/storage/create', { token: admin, body: storageRow('/bad', 'UrlTree', { url_structure: 'no url here' }) });
    expect(bad.message).toBe('failed init storage but storage is already created: failed init storage: line 1: a file needs an http:// or https:// URL: no url here');
    const info = await s.api('GET', '/api/admin/driver/info?driver=UrlTree', { token: admin });
    expect(info.data.additional.map((i: any) => [i.name, i.type, i.default])).toEqual([['url_structure', 'text', ''], ['head_size', 'bool', 'false'], ['writable', 'bool', 'false']]);
    expect(info.data.config).toMatchObject({ name: 'UrlTree', no_upload: true, no_cache: true });
  });
});

// Read-only: the suite's fixture and its big folder are written into the structure up front,
// each file a URL of a loopback file server.
let served: FileServer | undefined;
driverConformance('UrlTree against a loopback file server', async () => {
  const tree: Record<string, Buffer> = { ...FIXTURE };
  for (let i = 0; i < 1000; i++) tree[`/big/f-${String(i).padStart(5, '0')}.txt`] = Buffer.from(String(i));
  const byUrl: Record<string, { body: Buffer }> = {};
  for (const [p, b] of Object.entries(tree)) byUrl[`/files${p}`] = { body: b };
  served = await startFileServer({ files: byUrl });
  const lines: string[] = [];
  const folders = new Set<string>();
  for (const [p, b] of Object.entries(tree).sort(([a], [b2]) => a.localeCompare(b2))) {
    const parts = p.split('/').filter(Boolean);
    for (let d = 0; d < parts.length - 1; d++) {
      const key = parts.slice(0, d + 1).join('/');
      if (!folders.has(key)) {
        folders.add(key);
        lines.push(`${'  '.repeat(d)}${parts[d]}:`);
      }
    }
    lines.push(`${'  '.repeat(parts.length - 1)}${parts[parts.length - 1]}:${b.length}:${served.base}/files${p}`);
  }
  return {
    storage: { driver: 'UrlTree', addition: { url_structure: lines.join('\n') } },
    caps: { write: false },
    teardown: async () => served?.close(),
  };
});
