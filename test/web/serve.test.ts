import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** The built UI (test/global-setup.ts runs `npm run build`, which builds dist/web). */
const DIST = path.resolve('dist/web');
const backend = BACKENDS[0]!;

describe('web UI serving', () => {
  let s: TestServer;
  let admin: string;
  beforeAll(async () => {
    expect(existsSync(path.join(DIST, 'index.html')), 'dist/web/index.html is built').toBe(true);
    s = await startServer(backend);
    admin = await s.login();
  });
  afterAll(() => s.destroy());

  const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  const get = (url: string, headers: Record<string, string> = HTML) => s.inject({ method: 'GET', url, headers });

  it.each(['/', '/@login', '/@manage', '/@manage/storages/edit/3', '/some/folder', '/some/file%20name.txt', '/movies/a.mp4?x=1'])(
    'answers %s with index.html (SPA fallback)',
    async (url) => {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain('<div id="root"></div>');
      expect(res.body).toContain(`base_path: ""`);
      expect(res.body).toContain('<title>Atrium</title>');
      expect(res.body).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    },
  );

  it('leaves the server routes alone: API 404 envelope, raw links, /ping, unknown assets', async () => {
    const api = await get('/api/nope');
    expect(api.statusCode).toBe(200);
    expect(api.json()).toMatchObject({ code: 404 });
    expect((await get('/ping')).body).toBe('pong');
    expect((await get('/assets/missing-file.js')).statusCode).toBe(404);
    expect((await get('/assets/%2e%2e/%2e%2e/package.json')).body).not.toContain('"name": "atrium"');
    expect((await get('/assets/..%2f..%2fpackage.json')).statusCode).toBe(404);
    // a raw link answers its own error page (OpenList's), never the app shell
    const d = await get('/d/nothing-here.txt');
    expect(d.statusCode).toBe(401);
    expect(d.body).toContain('<h1>401 Unauthorized</h1>');
    expect((await get('/api/public/settings')).json().code).toBe(200);
    // clients that take no HTML get the plain 404 rather than the app shell
    expect((await get('/some/folder', {})).statusCode).toBe(404);
    expect((await get('/some/folder', { accept: 'application/json' })).statusCode).toBe(404);
    expect((await get('/some/folder', { accept: '*/*' })).statusCode).toBe(200);
  });

  it('serves hashed assets gzipped with immutable caching and answers 304 to a matching ETag', async () => {
    const html = (await get('/')).body;
    const js = /src="(\/assets\/index-[\w-]+\.js)"/.exec(html)![1]!;
    const plain = await get(js);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/^(application|text)\/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(readFileSync(path.join(DIST, js)))).toBe(true);
    const gz = await get(js, { ...HTML, 'accept-encoding': 'gzip, deflate, br' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    const again = await get(js, { ...HTML, 'if-none-match': String(plain.headers.etag) });
    expect(again.statusCode).toBe(304);
  });

  it('injects the site settings at serve time and keeps custom head/body off the manage pages', async () => {
    const save = await s.api('POST', '/api/admin/setting/save', {
      token: admin,
      body: [
        { key: 'site_title', value: 'My <Files>' },
        { key: 'main_color', value: '#ff0000' },
        { key: 'customize_head', value: '<meta name="x-custom" content="head">' },
        { key: 'customize_body', value: '<p id="custom-body">hi</p>' },
      ],
    });
    expect(save.code).toBe(200);
    const page = (await get('/docs')).body;
    expect(page).toContain('<title>My &#60;Files&#62;</title>');
    expect(page).toContain('main_color: "#ff0000"');
    expect(page).toContain('<meta name="x-custom" content="head">');
    expect(page).toContain('<p id="custom-body">hi</p>');
    const manage = (await get('/@manage/settings/site')).body;
    expect(manage).not.toContain('x-custom');
    expect(manage).not.toContain('custom-body');
  });
});

describe('web UI base path and CDN', () => {
  let s: TestServer;
  afterAll(() => s?.destroy());

  it('writes the site_url path and the CDN into index.html', async () => {
    s = await startServer(backend, { config: { site_url: 'https://files.example.com/atrium/', cdn: 'https://cdn.example.com/ui/' } });
    const res = await s.inject({ method: 'GET', url: '/a/b', headers: { accept: 'text/html' } });
    expect(res.body).toContain('base_path: "/atrium"');
    expect(res.body).toContain('cdn: "https://cdn.example.com/ui"');
    expect(res.body).toContain('asset_base: "https://cdn.example.com/ui/"');
    expect(res.body).toMatch(/src="https:\/\/cdn\.example\.com\/ui\/assets\/index-[\w-]+\.js"/);
    expect(res.body).toMatch(/href="https:\/\/cdn\.example\.com\/ui\/assets\/index-[\w-]+\.css"/);
  });
});

describe('web UI from dist_dir', () => {
  let s: TestServer;
  let dir: string;
  afterAll(async () => {
    await s?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the folder named by dist_dir instead of the built-in UI', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-dist-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<html><head><title>Loading...</title></head><body>custom ui <script src="/assets/app.js"></script></body></html>');
    writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
    s = await startServer(backend, { config: { dist_dir: dir, site_url: '/sub' } });
    const res = await s.inject({ method: 'GET', url: '/x', headers: { accept: 'text/html' } });
    expect(res.body).toContain('custom ui <script src="/sub/assets/app.js">');
    expect((await s.inject({ method: 'GET', url: '/assets/app.js' })).body).toBe('console.log(1)');
  });
});

describe('web UI from the built server (npm start)', () => {
  let srv: ServerProcess | undefined;
  let data: string;
  afterAll(async () => {
    await srv?.stop();
    rmSync(data, { recursive: true, force: true });
  });

  it('finds dist/web next to the bundle and serves the UI and its assets', async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-cli-web-'));
    srv = await startServerProcess(data, await freePort());
    const html = await (await fetch(`${srv.base}/some/folder`)).text();
    expect(html).toContain('<div id="root"></div>');
    const js = /src="(\/assets\/index-[\w-]+\.js)"/.exec(html)![1]!;
    const res = await fetch(`${srv.base}${js}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path.join(DIST, js)))).toBe(true);
  });
});
