import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goTimeParser } from '../../src/drivers/autoindex/go-time.js';
import { parseHtmlIndex, parseSize } from '../../src/drivers/autoindex/index-page.js';
import { compileNodesXPath, compileStringXPath } from '../../src/drivers/autoindex/xpath-html.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance, FIXTURE } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { writeTree } from './peer-files.js';
import { missingPrograms, type NginxPeer, startNginx } from './peers.js';

/** The XPaths that read nginx's HTML index: name from the link, date and size from the text after it. */
const NGINX_HTML = {
  item_xpath: '//pre/a',
  name_xpath: '@href',
  modified_xpath: 'substring(normalize-space(following-sibling::text()[1]), 1, 17)',
  size_xpath: "substring-after(substring-after(normalize-space(following-sibling::text()[1]), ' '), ' ')",
  modified_time_format: '02-Jan-2006 15:04',
};

const NO_NGINX = missingPrograms('AutoIndex driver against nginx', 'nginx');

/** nginx serving `root/` (the storage root) and a marker file beside it, FIXTURE seeded. */
async function nginxTarget(location: 'html' | 'json', addition: Record<string, unknown>) {
  const peer = await startNginx();
  const root = path.join(peer.files, 'root');
  writeTree(peer.files, { 'outside-marker.txt': 'outside', 'root/': '' });
  writeTree(root, FIXTURE);
  return {
    storage: { driver: 'AutoIndex', addition: { url: `${peer.base}/${location}/root`, ...addition } },
    caps: { write: false },
    seed: async (tree: Record<string, string | Buffer>) => writeTree(root, tree),
    outsideMarker: 'outside-marker.txt',
    teardown: () => peer.destroy(),
  };
}

driverConformance('AutoIndex against nginx (HTML index, XPaths)', () => nginxTarget('html', NGINX_HTML), NO_NGINX);
driverConformance('AutoIndex against nginx (autoindex_format json)', () => nginxTarget('json', {}), NO_NGINX);

describe('index page parsing', () => {
  it('reads Go time layouts', () => {
    expect(goTimeParser('2006-01-02 15:04')('2026-11-24 21:05')?.toISOString()).toBe('2026-11-24T21:05:00.000Z');
    expect(goTimeParser('02-Jan-2006 15:04')('03-Feb-2025 07:09')?.toISOString()).toBe('2025-02-03T07:09:00.000Z');
    expect(goTimeParser('Mon, 02 Jan 2006 15:04:05 MST')('Tue, 24 Nov 2026 21:56:09 GMT')?.toISOString()).toBe('2026-11-24T21:56:09.000Z');
    expect(goTimeParser('2006-01-02T15:04:05Z07:00')('2026-11-24T23:00:00+02:00')?.toISOString()).toBe('2026-11-24T21:00:00.000Z');
    expect(goTimeParser('2006-01-02 15:04')('yesterday')).toBeUndefined();
  });

  it('reads sizes as index pages print them', () => {
    expect(parseSize('1234')).toEqual({ size: 1234, exact: true });
    expect(parseSize('1.5K')).toEqual({ size: 1536, exact: false });
    expect(parseSize('3 MiB')).toEqual({ size: 3 * 2 ** 20, exact: false });
    expect(parseSize('-')).toEqual({ size: 0, exact: false });
    expect(parseSize('lots')).toBeUndefined();
  });

  it('reads an Apache-style table index with the XPaths an admin gives', () => {
    const html = `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN"><html><head><title>Index of /pub</title></head><body>
<h1>Index of /pub</h1><table><tr><th><a href="?C=N;O=D">Name</a></th><th>Last modified</th><th>Size</th></tr>
<tr><td><a href="/">Parent Directory</a></td><td>&nbsp;</td><td align="right">  - </td></tr>
<tr><td><a href="docs/">docs/</a></td><td align="right">2026-11-20 10:00  </td><td align="right">  - </td></tr>
<tr><td><a href="r%C3%A9sum%C3%A9%20v2.pdf">résumé v2.pdf</a></td><td align="right">2026-11-21 11:30  </td><td align="right">1.2M</td></tr>
<tr><td><a href="a.txt">a.txt</a></td><td align="right">2026-11-22 12:00  </td><td align="right">17 </td></tr>
</table></body></html>`;
    const paths = { item: compileNodesXPath('//table//tr[td/a]'), name: compileStringXPath('td[1]/a/@href'), modified: compileStringXPath('normalize-space(td[2])'), size: compileStringXPath('td[3]') };
    const entries = parseHtmlIndex(html, paths, goTimeParser('2006-01-02 15:04'), new Set(['Parent Directory', '..', '.']));
    expect(entries.map((e) => [e.name, e.isDir, e.size, e.exactSize, e.modified?.toISOString()])).toEqual([
      ['docs', true, 0, false, '2026-11-20T10:00:00.000Z'],
      ['résumé v2.pdf', false, Math.floor(1.2 * 2 ** 20), false, '2026-11-21T11:30:00.000Z'],
      ['a.txt', false, 17, true, '2026-11-22T12:00:00.000Z'],
    ]);
  });
});

describe.skipIf(NO_NGINX !== undefined)('AutoIndex driver', () => {
  let s: TestServer;
  let admin: string;
  let peer: NginxPeer;
  const big = randomBytes(3 * 1024 * 1024 + 5);
  const when = new Date('2025-03-04T05:06:00Z');
  const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });

  beforeAll(async () => {
    peer = await startNginx();
    mkdirSync(path.join(peer.files, 'movies ü'));
    writeFileSync(path.join(peer.files, 'movies ü', 'big #1.bin'), big);
    writeFileSync(path.join(peer.files, 'a-very-long-file-name-that-nginx-cuts-in-its-html-listing.txt'), 'long');
    utimesSync(path.join(peer.files, 'movies ü', 'big #1.bin'), when, when);
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    await mount(s, admin, '/html', 'AutoIndex', { url: `${peer.base}/html/`, ...NGINX_HTML });
    await mount(s, admin, '/approx', 'AutoIndex', { url: `${peer.base}/approx`, ...NGINX_HTML });
    await mount(s, admin, '/json', 'AutoIndex', { url: `${peer.base}/json` });
  });
  afterAll(async () => {
    await s?.destroy();
    await peer?.destroy();
  });

  it('parses names (long ones too), sizes and dates from the HTML and the json index', async () => {
    for (const m of ['/html', '/json']) {
      expect(await names(s, admin, m)).toEqual(['movies ü', 'a-very-long-file-name-that-nginx-cuts-in-its-html-listing.txt']);
      const r = await post('/api/fs/list', { path: `${m}/movies ü`, refresh: true });
      expect(r.data.content[0]).toMatchObject({ name: 'big #1.bin', size: big.length, is_dir: false, modified: '2025-03-04T05:06:00.000Z' });
    }
  });

  it('learns the exact size of a rounded one with HEAD, and redirects downloads to nginx, ranges included', async () => {
    const listed = await post('/api/fs/list', { path: '/approx/movies ü', refresh: true });
    expect(listed.data.content[0].size).toBe(3 * 1024 * 1024);
    const got = await post('/api/fs/get', { path: '/approx/movies ü/big #1.bin' });
    expect(got.data.size).toBe(big.length);
    const d = await s.inject({ method: 'GET', url: `/d/json/movies%20%C3%BC/big%20%231.bin?sign=${encodeURIComponent(s.core.signer.sign('/json/movies ü/big #1.bin'))}` });
    expect(d.statusCode).toBe(302);
    expect(String(d.headers.location)).toBe(`${peer.base}/json/movies%20%C3%BC/big%20%231.bin`);
    const part = await download(s, '/html/movies ü/big #1.bin', 'bytes=1048570-2097160');
    expect(part.status).toBe(206);
    expect(part.body.equals(big.subarray(1048570, 2097161))).toBe(true);
  });

  it('is read-only, and a peer that is down answers with a clear error', async () => {
    const mk = await post('/api/fs/mkdir', { path: '/html/new' });
    expect(mk.code).not.toBe(200);
    const noXPath = await post('/api/admin/storage/create', storageRow('/noxp', 'AutoIndex', { url: `${peer.base}/html/` }));
    expect(noXPath.message).toMatch(/item_xpath and name_xpath are needed/);
    const badXPath = await post('/api/admin/storage/create', storageRow('/badxp', 'AutoIndex', { url: `${peer.base}/html/`, ...NGINX_HTML, item_xpath: '//pre/[' }));
    expect(badXPath.message).toMatch(/failed to compile Item XPath/);
    await peer.stop();
    try {
      const down = await post('/api/fs/list', { path: '/json', refresh: true });
      expect(down.code).toBe(500);
      // A kept-alive connection the peer closed as it stopped is tried again on a new one
      // (net/guarded-http.ts): the answer is the refused connect, never the hang-up (seen in CI).
      expect(down.message).toMatch(/^fetching \S+:\d+ failed: connect ECONNREFUSED/);
    } finally {
      await peer.start();
    }
    expect(await names(s, admin, '/json')).toContain('movies ü');
  });

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=AutoIndex', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual(['url', 'item_xpath', 'name_xpath', 'modified_xpath', 'size_xpath', 'ignore_file_names', 'modified_time_format']);
    const byName = Object.fromEntries(info.data.additional.map((i: { name: string }) => [i.name, i]));
    expect(byName.ignore_file_names).toMatchObject({ type: 'text', default: '.\n..\nParent Directory\nUp' });
    expect(byName.modified_time_format.default).toBe('02-Jan-2006 15:04');
    expect(byName.item_xpath.required).toBe(true);
    expect(byName.size_xpath.required).toBe(false);
    expect(info.data.config).toMatchObject({ name: 'AutoIndex', local_sort: true, no_upload: true });
    const driverNames = (await s.api('GET', '/api/admin/driver/names', { token: admin })).data as string[];
    expect(driverNames).toContain('AutoIndex');
    expect(driverNames).not.toContain('Autoindex');
    // A storage saved under the driver's first name still mounts.
    await mount(s, admin, '/former', 'Autoindex', { url: `${peer.base}/json` });
    expect(await names(s, admin, '/former')).toContain('movies ü');
  });
});
