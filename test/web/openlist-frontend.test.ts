import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { listenLoopback } from '../helpers/http.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

/**
 * OpenList's own web front end (npm @openlist-frontend/openlist-frontend 4.2.6) served through
 * `dist_dir` and driven in chromium as a user would: log in, walk the file pages (list, each
 * preview kind, mkdir, rename, move, copy, delete, upload, search) and every manage page.
 * Every /api answer is recorded; any code other than 200 fails the run unless a listed,
 * not-yet-built feature is the cause (NOT_BUILT), and those must fail as a missing route.
 */
const enabled = requireChromium('the OpenList front-end walk');
const DIST = path.resolve('node_modules/@openlist-frontend/openlist-frontend/dist');

/** Routes the 4.2.6 front end may call whose feature Atrium has not built yet (see docs/http-api.md). */
const NOT_BUILT: Array<[RegExp, string]> = [
  [/^\/api\/admin\/message\//, 'the admin message bus'],
  [/^\/api\/fs\/torrent\//, 'torrent helpers'],
];

/** Routes whose request body is a file the browser streams (their answers are checked on disk). */
const UPLOADS = new Set(['/api/fs/put', '/api/fs/form', '/api/fs/multipart/chunk']);

/** A one-second real media file made by ffmpeg (.ci/packages.sh installs it), so the players load it. */
function media(source: string, args: string[], ext: string): Buffer {
  const out = path.join(os.tmpdir(), `atrium-ol-media-${process.pid}.${ext}`);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', source, ...args, out]);
  const bytes = readFileSync(out);
  rmSync(out, { force: true });
  return bytes;
}

interface ApiCall {
  method: string;
  path: string;
  status: number;
  code?: number;
  message?: string;
  /** The answer could not be read (uploads) or was not JSON. */
  unread?: boolean;
}

describe.runIf(enabled)('the OpenList 4.2.6 front end against Atrium', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let base: string;
  let browser: Browser;
  let page: Page;
  const calls: ApiCall[] = [];
  const pageErrors: string[] = [];
  const uploadDir = path.join(os.tmpdir(), `atrium-ol-upload-${process.pid}`);

  /**
   * Every /api exchange passes here: the request goes on to the server unchanged and its answer
   * is read before the page gets it (the browser may drop bodies it has delivered).
   */
  const record = async (route: Route) => {
    const url0 = new URL(route.request().url());
    if (UPLOADS.has(url0.pathname)) {
      // An upload's body (a File) cannot be fetched again from here: it goes on untouched, and
      // the upload step checks the stored bytes instead of the (then unreadable) answer.
      const req = route.request();
      await route.continue();
      const res = await req.response();
      calls.push({ method: req.method(), path: url0.pathname, status: res?.status() ?? 0, unread: true });
      return;
    }
    const res = await route.fetch();
    const text = await res.text();
    const url = new URL(route.request().url());
    const call: ApiCall = { method: route.request().method(), path: url.pathname, status: res.status() };
    try {
      const body = JSON.parse(text);
      call.code = body.code;
      call.message = body.message;
    } catch {
      call.unread = true;
    }
    calls.push(call);
    await route.fulfill({ response: res, body: text });
  };

  /** Calls made since `from`, for a step's own assertions. */
  const since = (from: number) => calls.slice(from);
  const rowOf = (name: string) => page.locator('.list-item, .grid-item').filter({ hasText: name }).first();
  const menuItem = (label: string) => page.locator('.solid-contextmenu__item').filter({ hasText: new RegExp(`^${label}$`) }).first();
  const modal = () => page.locator('section[role=dialog]').last();

  async function openFolder(p: string) {
    await page.goto(`${base}${p}`);
    await page.locator('.list-item, .grid-item').first().waitFor();
  }

  beforeAll(async () => {
    const png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#3080d0' } }).png().toBuffer();
    root = makeTree({
      'docs/notes.txt': 'plain text notes',
      'docs/readme-doc.md': '# Markdown heading\n\nSome *text*.',
      'docs/data.json': '{"k": 1}',
      'media/pic.png': png,
      'media/song.mp3': media('sine=frequency=440:duration=1', ['-q:a', '9'], 'mp3'),
      'media/clip.mp4': media('color=c=blue:s=64x48:d=1', ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart'], 'mp4'),
      'media/book.pdf': '%PDF-1.4\n%%EOF\n',
      'media/other.bin': Buffer.alloc(100, 3),
      'work/keep.txt': 'keep me',
      'target/': '',
    });
    s = await startServer(BACKENDS[0]!, { config: { dist_dir: DIST } });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/local', root) })).code).toBe(200);
    // headless chromium refuses autoplay without a user gesture: the players start on demand
    const noAutoplay = [{ key: 'audio_autoplay', value: 'false' }, { key: 'video_autoplay', value: 'false' }];
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: noAutoplay })).code).toBe(200);
    base = await listenLoopback(s.app);
    browser = await launchChromium();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.route((u) => u.pathname.startsWith('/api/'), record);
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(uploadDir, { recursive: true, force: true });
  });

  it('boots: the login page loads its settings and logs in', async () => {
    await page.goto(`${base}/@login`);
    await page.getByPlaceholder(/username/i).fill('admin');
    await page.getByPlaceholder(/password/i).fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Login' }).click();
    await page.waitForURL(`${base}/`);
    await rowOf('local').waitFor();
    const paths = calls.map((c) => c.path);
    for (const p of ['/api/public/settings', '/api/public/archive_extensions', '/api/auth/login/hash', '/api/me', '/api/fs/list']) expect(paths).toContain(p);
    await screenshot(page, 'ol-01-home');
  });

  it('lists a folder and previews each kind of file', async () => {
    await openFolder('/local/docs');
    expect(await page.locator('.list-item').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringContaining('notes.txt')]));
    const previews: Array<[string, () => Promise<unknown>]> = [
      ['/local/docs/notes.txt', () => page.getByText('plain text notes').first().waitFor()],
      ['/local/docs/readme-doc.md', () => page.getByRole('heading', { name: 'Markdown heading' }).waitFor()],
      ['/local/docs/data.json', () => page.getByText('"k"').first().waitFor()],
      ['/local/media/pic.png', () => page.locator('img[src*="/local/media/pic.png"]').first().waitFor()],
      ['/local/media/song.mp3', () => page.locator('.aplayer, audio').first().waitFor({ state: 'attached' })],
      ['/local/media/clip.mp4', () => page.locator('.art-video-player, video').first().waitFor({ state: 'attached' })],
      ['/local/media/book.pdf', () => page.getByText('book.pdf').first().waitFor()],
      ['/local/media/other.bin', () => page.getByRole('button', { name: /download/i }).first().waitFor()],
    ];
    for (const [p, shown] of previews) {
      const got = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/fs/get');
      await page.goto(`${base}${p}`);
      expect((await (await got).json()).data.name, p).toBe(path.basename(p));
      await shown();
      await screenshot(page, `ol-02-preview-${path.basename(p)}`);
    }
  });

  it('makes a folder from the toolbar', async () => {
    await openFolder('/local/work');
    await page.locator('.toolbar-toggle, [class*=toolbar] svg').last().click();
    await page.locator('[tips=mkdir], svg[aria-label=mkdir]').first().click();
    await modal().locator('input').fill('made-here');
    await modal().getByRole('button', { name: 'OK' }).click();
    await rowOf('made-here').waitFor();
    expect(existsSync(path.join(root, 'work', 'made-here'))).toBe(true);
  });

  /** Right-clicks a row and picks a context-menu entry. */
  async function contextAction(name: string, label: string) {
    await rowOf(name).click({ button: 'right' });
    await menuItem(label).click();
  }

  it('renames a file from its context menu', async () => {
    await openFolder('/local/work');
    await contextAction('keep.txt', 'Rename');
    const input = modal().locator('#modal-input');
    // the dialog fills in the old name, then selects its stem a moment later: a fill that lands before
    // that selection is partly overwritten ("renamed.txt.txt"), so fill again until the value holds
    await expect.poll(() => input.inputValue()).toBe('keep.txt');
    await expect.poll(async () => {
      await input.fill('renamed.txt');
      return input.inputValue();
    }).toBe('renamed.txt');
    await modal().getByRole('button', { name: 'OK' }).click();
    await rowOf('renamed.txt').waitFor();
    expect(readdirSync(path.join(root, 'work')).sort()).toEqual(['made-here', 'renamed.txt']);
  });

  it('copies and moves a file to another folder through the folder chooser', async () => {
    for (const [label, name] of [['Copy', 'renamed.txt'], ['Move', 'made-here']] as const) {
      await openFolder('/local/work');
      await contextAction(name, label);
      // the folder tree: open `local` (fs/dirs), pick `target`
      const dirs = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/fs/dirs');
      await modal().getByText('local', { exact: true }).locator('xpath=preceding-sibling::*[1]').click();
      expect((await (await dirs).json()).code).toBe(200);
      await modal().getByText('target', { exact: true }).click();
      await screenshot(page, `ol-03-${label.toLowerCase()}-dialog`);
      await modal().getByRole('button', { name: 'OK' }).click();
      await expect.poll(() => readdirSync(path.join(root, 'target')), { timeout: 10_000 }).toContain(name);
      await screenshot(page, `ol-03-${label.toLowerCase()}`);
    }
    expect(readFileSync(path.join(root, 'target', 'renamed.txt'), 'utf8')).toBe('keep me');
    expect(readdirSync(path.join(root, 'work'))).toEqual(['renamed.txt']);
  });

  it('deletes a file from its context menu', async () => {
    await openFolder('/local/work');
    await contextAction('renamed.txt', 'Delete');
    await modal().getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => readdirSync(path.join(root, 'work'))).toEqual([]);
  });

  it('uploads a file from the toolbar', async () => {
    mkdirSync(uploadDir, { recursive: true });
    const file = path.join(uploadDir, 'sent.txt');
    writeFileSync(file, 'uploaded through the OpenList front end');
    await openFolder('/local/target');
    await page.locator('[tips=upload]').first().click();
    await page.locator('input[type=file]').first().setInputFiles(file);
    await expect.poll(() => existsSync(path.join(root, 'target', 'sent.txt')), { timeout: 15_000 }).toBe(true);
    expect(readFileSync(path.join(root, 'target', 'sent.txt'), 'utf8')).toBe('uploaded through the OpenList front end');
    await screenshot(page, 'ol-04-upload');
    const puts = calls.filter((c) => UPLOADS.has(c.path));
    expect(puts.length).toBeGreaterThan(0);
  });

  it('searches the index from the header', async () => {
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'search_index', value: 'database' }] })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/index/build', { token: admin })).code).toBe(200);
    await expect.poll(async () => (await s.api('GET', '/api/admin/index/progress', { token: admin })).data.is_done, { timeout: 15_000 }).toBe(true);
    await openFolder('/local');
    await page.keyboard.press('Control+k');
    const found = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/fs/search');
    const box = modal().locator('input').first();
    await box.fill('notes');
    await box.press('Enter');
    const answer = await (await found).json();
    expect(answer.code).toBe(200);
    expect(answer.data.content.map((h: { parent: string; name: string }) => `${h.parent}/${h.name}`)).toEqual(['/local/docs/notes.txt']);
    await modal().getByText('notes.txt').first().waitFor();
    await screenshot(page, 'ol-05-search');
    await page.keyboard.press('Escape');
  });

  it('opens every manage page', async () => {
    const storageId = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: { mount_path: string }) => x.mount_path === '/local').id;
    const pages = [
      '/@manage',
      ...['site', 'style', 'preview', 'global', 'sso', 'ldap', 's3', 'ftp', 'traffic', 'other'].map((g) => `/@manage/settings/${g}`),
      ...['upload', 'copy', 'move', 'offline_download', 'decompress'].map((k) => `/@manage/tasks/${k}`),
      '/@manage/users',
      '/@manage/users/add',
      '/@manage/users/edit/1',
      '/@manage/storages',
      '/@manage/storages/add',
      `/@manage/storages/edit/${storageId}`,
      '/@manage/metas',
      '/@manage/metas/add',
      '/@manage/shares',
      '/@manage/indexes',
      '/@manage/backup-restore',
      '/@manage/about',
      '/@manage/messenger',
    ];
    for (const p of pages) {
      await page.goto(`${base}${p}`);
      await page.waitForLoadState('networkidle');
      await screenshot(page, `ol-06${p.replaceAll('/', '-')}`);
    }
    // the traffic page shows the thread and speed settings Atrium has
    await page.goto(`${base}/@manage/settings/traffic`);
    await page.getByText(/copy task threads num/i).first().waitFor();
    await page.getByText(/max client download speed/i).first().waitFor();
  });

  it('runs a manual scan from the Indexes page', async () => {
    await page.goto(`${base}/@manage/indexes`);
    await page.getByText('Manually Scan').waitFor();
    await page.getByPlaceholder('Select folder or input path').fill('/local');
    const started = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/scan/start');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const req = await started;
    expect(req.request().postDataJSON()).toMatchObject({ path: '/local' });
    expect((await req.json()).code).toBe(200);
    await expect.poll(async () => (await s.api('GET', '/api/admin/scan/progress', { token: admin })).data.is_done, { timeout: 10_000 }).toBe(true);
    await screenshot(page, 'ol-07-scan');
  });

  it('every /api answer was code 200, except routes of features not built yet (which answer as missing routes)', () => {
    const unexpected: string[] = [];
    const notBuilt = new Set<string>();
    for (const c of calls) {
      const feature = NOT_BUILT.find(([re]) => re.test(c.path))?.[1];
      if (feature) {
        notBuilt.add(`${feature}: ${c.method} ${c.path}`);
        if (c.status !== 200 || c.code !== 404) unexpected.push(`${c.method} ${c.path} → HTTP ${c.status} code ${c.code} (${c.message}), a not-built route should be a missing route`);
        continue;
      }
      if (c.unread && UPLOADS.has(c.path) && c.status === 200) continue; // checked on disk by the upload step
      if (c.status !== 200 || c.code !== 200) unexpected.push(`${c.method} ${c.path} → HTTP ${c.status} code ${c.code} (${c.message})`);
    }
    if (notBuilt.size > 0) console.log(`routes of features not built yet, called by the front end:\n  ${[...notBuilt].join('\n  ')}`);
    expect(unexpected).toEqual([]);
    expect(calls.length).toBeGreaterThan(50);
    expect(pageErrors).toEqual([]);
  });
});
