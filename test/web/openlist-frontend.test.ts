import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { type Daemon, hasProgram, startAria2, startQbittorrent, startTransmission } from '../helpers/daemons.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { listenLoopback } from '../helpers/http.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';
import { bencode, makeTorrent } from '../helpers/torrent.js';

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
const NOT_BUILT: Array<[RegExp, string]> = [[/^\/api\/fs\/torrent\/(upload_parse|generate)$/, 'torrent helpers']];

/**
 * Answers other than 200 that are OpenList's own for the situation: the Messenger page polls
 * `message/get` every second, which is `404 no message` while no server part offers one.
 */
const EXPECTED: Array<(c: ApiCall) => boolean> = [(c) => c.path === '/api/admin/message/get' && c.code === 404 && c.message === 'no message'];

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
  const daemonDir = path.join(os.tmpdir(), `atrium-ol-daemons-${process.pid}`);
  /** The torrent tools, running on loopback, so the BT tab and the Save buttons of Settings → Other reach a real tool. */
  const daemons: Partial<Record<'aria2' | 'qBittorrent' | 'Transmission', Daemon>> = {};
  /** A torrent whose only source is a web seed on a closed port: a tool accepts it and never completes it. */
  const show = makeTorrent('show.mkv', Buffer.alloc(100 * 1024, 5), 'http://127.0.0.1:9/show.mkv', 16 * 1024);

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
      'torrents/show.torrent': show.file,
    });
    s = await startServer(BACKENDS[0]!, { config: { dist_dir: DIST } });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/local', root) })).code).toBe(200);
    // headless chromium refuses autoplay without a user gesture: the players start on demand
    const noAutoplay = [{ key: 'audio_autoplay', value: 'false' }, { key: 'video_autoplay', value: 'false' }];
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: noAutoplay })).code).toBe(200);
    base = await listenLoopback(s.app);
    if (hasProgram('aria2c')) daemons.aria2 = await startAria2(path.join(daemonDir, 'aria2'), 'ol-secret');
    if (hasProgram('qbittorrent-nox')) daemons.qBittorrent = await startQbittorrent(path.join(daemonDir, 'qbt'));
    if (hasProgram('transmission-daemon')) daemons.Transmission = await startTransmission(path.join(daemonDir, 'transmission'));
    if (daemons.aria2) expect((await s.api('POST', '/api/admin/setting/set_aria2', { token: admin, body: { uri: daemons.aria2.uri, secret: 'ol-secret' } })).code).toBe(200);
    if (daemons.qBittorrent) expect((await s.api('POST', '/api/admin/setting/set_qbit', { token: admin, body: { url: daemons.qBittorrent.uri, seedtime: '0' } })).code).toBe(200);
    if (daemons.Transmission) expect((await s.api('POST', '/api/admin/setting/set_transmission', { token: admin, body: { uri: daemons.Transmission.uri, seedtime: '0' } })).code).toBe(200);
    browser = await launchChromium();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.route((u) => u.pathname.startsWith('/api/'), record);
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    for (const d of Object.values(daemons)) await d.stop();
    rmSync(daemonDir, { recursive: true, force: true });
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
  }, 120_000); // two dozen pages, each waited for until the network is idle

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

  /** The offline-download tasks added since a step began, cancelled (a web seed on a closed port never completes). */
  async function cancelDownloads(ids: string[]) {
    for (const id of ids) expect((await s.api('POST', `/api/admin/task/offline_download/cancel?tid=${id}`, { token: admin })).code).toBe(200);
  }

  it.runIf(hasProgram('aria2c'))('the BT tab: "BT Fetch" on a .torrent parses it, lists its files and starts it in a torrent tool', async () => {
    await openFolder('/local/torrents');
    const parsed = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/fs/torrent/parse');
    await contextAction('show.torrent', 'BT Fetch');
    const info = await (await parsed).json();
    expect(info).toMatchObject({ code: 200, data: { name: 'show.mkv', total_size: 100 * 1024, piece_count: 7, info_hash: show.infoHash, files: [{ path: 'show.mkv', size: 100 * 1024 }], has_cas: false } });
    await modal().getByText('show.mkv').first().waitFor();
    await modal().getByText('No CAS info found', { exact: false }).waitFor();
    await screenshot(page, 'ol-08-bt-tab');
    const added = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/fs/add_offline_download');
    await modal().getByRole('button', { name: 'Start Download' }).click();
    const res = await added;
    const sent = res.request().postDataJSON();
    // the front end hands the torrent to the tool as a magnet of its info hash, name and size
    expect(sent).toMatchObject({ path: '/local/torrents', tool: 'aria2' });
    expect(sent.urls).toEqual([`magnet:?xt=urn:btih:${show.infoHash}&xl=${100 * 1024}&dn=show.mkv`]);
    const answer = await res.json();
    expect(answer.code, answer.message).toBe(200);
    expect(answer.data.tasks[0].name).toBe(`download ${sent.urls[0]} to (/local/torrents)`);
    await cancelDownloads(answer.data.tasks.map((t: { id: string }) => t.id));
  });

  it('the BT tab: a .torrent picked in the dialog is parsed and its files listed', async () => {
    const info = { name: 'album', 'piece length': 16384, pieces: Buffer.alloc(20, 1), files: [{ length: 300, path: ['cd1', 'one.flac'] }, { length: 200, path: ['cover.jpg'] }] };
    mkdirSync(uploadDir, { recursive: true });
    const file = path.join(uploadDir, 'album.torrent');
    writeFileSync(file, bencode({ info }));
    await openFolder('/local/target');
    await page.locator('[tips=offline_download]').first().click();
    await modal().getByRole('button', { name: 'BT Download' }).click();
    const chooser = page.waitForEvent('filechooser');
    await modal().getByText('Or click to select a .torrent file').click();
    const parsed = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/fs/torrent/parse');
    await (await chooser).setFiles(file);
    const answer = await (await parsed).json();
    expect(answer).toMatchObject({ code: 200, data: { name: 'album', total_size: 500, files: [{ path: 'cd1/one.flac', size: 300 }, { path: 'cover.jpg', size: 200 }] } });
    await modal().getByText('one.flac').waitFor();
    await modal().getByText('cover.jpg').waitFor();
    await screenshot(page, 'ol-08-bt-files');
    await modal().getByRole('button', { name: 'Cancel' }).click();
  });

  it('the Messenger page receives a server part’s message and sends the admin’s answer to one waiting', async () => {
    const offered = s.core.messenger.send({ type: 'string', content: 'scan the code, then type it below' }, 30);
    const answered = s.core.messenger.receive(30);
    // (a failed step must not leave a rejection for the server's close)
    offered.catch(() => {});
    answered.catch(() => {});
    await page.goto(`${base}/@manage/messenger`);
    await page.getByText('scan the code, then type it below').waitFor();
    await offered;
    await page.locator('input:visible, textarea:visible').last().fill('483920');
    const sent = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/message/send');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    expect((await (await sent).json()).code).toBe(200);
    expect(await answered).toBe('483920');
    await screenshot(page, 'ol-09-messenger');
    await page.goto(`${base}/@manage`);
  });

  it('Settings → Other: every Save button answers 200 (the torrent tools connect, the cloud tools save their temp folder)', async () => {
    await page.goto(`${base}/@manage/settings/other`);
    const saves = page.getByRole('button', { name: 'Save', exact: true });
    await saves.first().waitFor();
    const count = await saves.count();
    const routes: string[] = [];
    for (let i = 0; i < count; i++) {
      const answered = page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/api/admin/setting/'));
      await saves.nth(i).click();
      const res = await answered;
      const route = new URL(res.url()).pathname.replace('/api/admin/setting/', '');
      const body = await res.json();
      if (route === 'set_qbit' && !daemons.qBittorrent) continue;
      if (route === 'set_transmission' && !daemons.Transmission) continue;
      if (route === 'set_aria2' && !daemons.aria2) continue;
      expect(body.code, `${route}: ${body.message}`).toBe(200);
      routes.push(route);
    }
    const cloud = ['set_115', 'set_115_open', 'set_123_pan', 'set_123_open', 'set_pikpak', 'set_thunder', 'set_thunderx', 'set_thunder_browser', 'set_guangyapan'];
    expect(routes).toEqual(expect.arrayContaining(cloud));
    if (daemons.aria2) expect(routes).toContain('set_aria2');
    await screenshot(page, 'ol-10-settings-other');
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
      if (c.status === 200 && EXPECTED.some((ok) => ok(c))) continue;
      if (c.status !== 200 || c.code !== 200) unexpected.push(`${c.method} ${c.path} → HTTP ${c.status} code ${c.code} (${c.message})`);
    }
    if (notBuilt.size > 0) console.log(`routes of features not built yet, called by the front end:\n  ${[...notBuilt].join('\n  ')}`);
    expect(unexpected).toEqual([]);
    expect(calls.length).toBeGreaterThan(50);
    expect(pageErrors).toEqual([]);
  });
});
