import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** An index.html with OpenList's placeholders, as its front end ships it. */
const INDEX = `<!doctype html><html><head><!-- customize head -->
<link href="/manifest.json" rel="manifest">
<link rel="apple-touch-icon" href="https://res.oplist.org/logo/logo.png">
<link rel="shortcut icon" type="image/ico" href="https://res.oplist.org/logo/logo.svg">
<title>Loading...</title>
<script>window.OPENLIST_CONFIG = { cdn: undefined, base_path: undefined, api: undefined, main_color: undefined }</script>
</head><body><div id="root"></div><!-- customize body --></body></html>`;

/** `dist_dir` serves a custom front end as OpenList does (server/static): its folders as files, index.html for the rest. */
describe('dist_dir with a custom front end', () => {
  let s: TestServer;
  let admin: string;
  let dir: string;
  const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  const get = (url: string, headers: Record<string, string> = {}) => s.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    dir = makeTree(
      {
        'index.html': INDEX,
        'assets/entry-abc.js': 'console.log("entry")',
        'static/monaco-editor/vs/loader.js': 'define("loader")',
        'static/fonts/a b.css': 'body{}',
        'streamer/sw.js': 'self.addEventListener("fetch",()=>{})',
        'streamer/mitm.html': '<p>mitm</p>',
        'images/vlc.webp': Buffer.from('RIFF0000WEBPVP8 '),
      },
      mkdtempSync(path.join(os.tmpdir(), 'atrium-ol-dist-')),
    );
    s = await startServer(BACKENDS[0]!, { config: { dist_dir: dir } });
    admin = await s.login();
    const save = [
      { key: 'site_title', value: 'My Files' },
      { key: 'main_color', value: '#ff0000' },
      { key: 'customize_head', value: '<meta name="x-custom" content="1">' },
    ];
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: save })).code).toBe(200);
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['/assets/entry-abc.js', 'console.log("entry")', /javascript/, 'public, max-age=31536000, immutable'],
    ['/static/monaco-editor/vs/loader.js', 'define("loader")', /javascript/, 'public, max-age=15552000'],
    ['/static/fonts/a%20b.css', 'body{}', /^text\/css/, 'public, max-age=15552000'],
    ['/streamer/sw.js', 'self.addEventListener("fetch",()=>{})', /javascript/, 'public, max-age=15552000'],
    ['/streamer/mitm.html', '<p>mitm</p>', /^text\/html/, 'public, max-age=15552000'],
    ['/images/vlc.webp', 'RIFF0000WEBPVP8 ', /^image\/webp/, 'public, max-age=15552000'],
  ])('serves %s from the folder', async (url, body, type, cache) => {
    const res = await get(url, HTML);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(body);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.headers['cache-control']).toBe(cache);
  });

  it('answers a missing file or a way out of the folder with 404, never index.html or a file outside', async () => {
    for (const url of ['/static/none.js', '/streamer/', '/static/..%2f..%2findex.html', '/images/..%5c..%5cindex.html', '/static/a%00.js']) {
      const res = await get(url, HTML);
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain('OPENLIST_CONFIG');
    }
    // `%2e%2e` is `..` to URL parsing: the path normalises out of /static before any route sees it
    expect((await get('/static/%2e%2e/%2e%2e/etc/passwd', HTML)).body).not.toContain('root:');
  });

  it('answers every other page with index.html, the config and settings injected', async () => {
    for (const url of ['/', '/@login', '/local/some/file.txt', '/@manage/settings/site']) {
      const res = await get(url, HTML);
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain(`cdn: ""`);
      expect(res.body).toContain(`base_path: ""`);
      expect(res.body).toContain(`main_color: "#ff0000"`);
      expect(res.body).toContain('<title>My Files</title>');
      expect(res.body).not.toContain('res.oplist.org');
      expect(res.body).toContain('href="/images/logo.svg"');
      expect(res.body).toContain('href="/manifest.json"');
      // custom head on file pages, never on the manage pages
      expect(res.body.includes('x-custom'), url).toBe(!url.startsWith('/@manage'));
    }
  });

  it('answers the manifest from the settings', async () => {
    const res = await get('/manifest.json');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ display: 'standalone', scope: '/', start_url: '/', name: 'My Files', icons: [{ src: '/images/logo.svg', sizes: '512x512', type: 'image/png' }] });
  });

  it('the default logo and favicon resolve with a front end that has neither', async () => {
    const fav = await get('/favicon.ico');
    expect([fav.statusCode, fav.headers.location]).toEqual([302, '/images/logo.svg']);
    const logo = await get('/images/logo.svg');
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['content-type']).toBe('image/svg+xml');
    expect(logo.body).toContain('<svg');
  });
});
