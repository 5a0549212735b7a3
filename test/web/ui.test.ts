import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { listenLoopback } from '../helpers/http.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

/**
 * The web UI driven in a real browser (Debian's chromium through playwright-core) against a
 * real server on loopback, as a person would use it: log in, browse, preview, upload, rename,
 * move, delete, create a storage. Every step checks the server's side too (files on disk,
 * storages in the database), and screenshots land in test-results/screenshots.
 */
const enabled = requireChromium('the web UI browser tests');
const XSS_NAME = '<img src=x onerror=alert(1)>.txt';

describe.runIf(enabled)('web UI in chromium', () => {
  let s: TestServer;
  let base: string;
  let root: string;
  let second: string;
  let scratch: string;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const pageErrors: string[] = [];

  const png = (color: string) => sharp({ create: { width: 320, height: 200, channels: 3, background: color } }).png().toBuffer();
  const row = (name: string) => page.locator(`[data-testid=row][data-name="${name.replace(/"/g, '\\"')}"]`);
  const select = (name: string) => row(name).locator('input[type=checkbox]').check();
  const waitForDisk = async (p: string, exists = true) => {
    for (let i = 0; i < 100 && existsSync(p) !== exists; i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(p), p).toBe(exists);
  };

  beforeAll(async () => {
    root = makeTree({
      'photos/a.png': await png('#d04040'),
      'photos/b.png': await png('#40a040'),
      'photos/c.png': await png('#4040d0'),
      'docs/code.ts': 'export function add(a: number, b: number): number {\n  return a + b; // sum\n}\n',
      'docs/notes.md': '# Notes\n\nSome **bold** text.\n\n<script>window.__pwned = "md"</script>\n<img src=x onerror="window.__pwned = \'md-img\'">\n',
      'archive/': '',
      'uploads/': '',
      [`xss/${XSS_NAME}`]: 'harmless',
      'xss/plain.txt': 'plain',
      'hello.txt': 'hello world\n',
    });
    second = makeTree({ 'from-second.txt': 'second storage' });
    scratch = mkdtempSync(path.join(os.tmpdir(), 'atrium-ui-'));
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    // the default storage at `/` is pointed at the test's tree
    const def = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: { mount_path: string }) => x.mount_path === '/');
    const upd = await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...def, ...localStorage('/', root) } });
    expect(upd.code, upd.message).toBe(200);
    const meta = await s.api('POST', '/api/admin/meta/create', {
      token: admin,
      body: { path: '/xss', readme: '## Readme title\n\n<script>window.__pwned = "readme"</script>\n<img src=x onerror="window.__pwned = \'readme-img\'">\n[js](javascript:window.__pwned=1)', r_sub: false, header: '', hide: '' },
    });
    expect(meta.code).toBe(200);
    base = await listenLoopback(s.app);
    browser = await launchChromium();
    ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
    page.setDefaultTimeout(10_000);
    page.on('console', (m) => m.type() === 'error' && console.log('[browser]', m.text()));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(second, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it('sends a visitor without a session to the login page and logs in with the hashed login', async () => {
    const logins: string[] = [];
    page.on('request', (r) => r.url().includes('/api/auth/login') && logins.push(new URL(r.url()).pathname));
    await page.goto(`${base}/docs`);
    await page.waitForURL(/\/@login/);
    await page.fill('input[name=username]', 'admin');
    await page.fill('input[name=password]', 'wrong-password');
    await page.click('button[type=submit]');
    await expect.poll(() => page.locator('[role=alert]').textContent()).toContain('password is incorrect');
    await page.fill('input[name=password]', ADMIN_PASSWORD);
    await screenshot(page, '01-login');
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/docs`);
    await row('code.ts').waitFor();
    expect(logins).toEqual(['/api/auth/login/hash', '/api/auth/login/hash']);
  });

  it('browses from the root into a folder with breadcrumbs', async () => {
    await page.click('.crumbs a:first-child');
    await page.waitForURL(`${base}/`);
    await row('photos').waitFor();
    expect(await page.locator('[data-testid=row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')))).toEqual([
      'archive',
      'docs',
      'photos',
      'uploads',
      'xss',
      'hello.txt',
    ]);
    await screenshot(page, '02-root');
    await row('photos').locator('a').click();
    await page.waitForURL(`${base}/photos`);
    await row('a.png').waitFor();
    expect(await page.locator('.crumbs a').allTextContents()).toEqual([expect.stringContaining('Home'), 'photos']);
    await page.click('button[aria-label="Grid view"]');
    await page.locator('[data-testid=cell] img').first().waitFor();
    await screenshot(page, '03-photos-grid');
    await page.click('button[aria-label="List view"]');
  });

  it('previews an image and walks the gallery', async () => {
    await row('a.png').locator('a').click();
    await page.waitForURL(`${base}/photos/a.png`);
    const img = page.locator('[data-testid=preview-image]');
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(320);
    await screenshot(page, '04-image-preview');
    await page.click('button[aria-label="Next image"]');
    await page.waitForURL(`${base}/photos/b.png`);
    await expect.poll(() => page.locator('[data-testid=preview-name]').textContent()).toBe('b.png');
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(`${base}/photos/c.png`);
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(320);
  });

  it('previews a text file with highlighting and offers a signed download link', async () => {
    await page.goto(`${base}/docs/code.ts`);
    const pre = page.locator('[data-testid=preview-text]');
    await expect.poll(() => pre.locator('.hljs-keyword').count()).toBeGreaterThan(0);
    expect(await pre.textContent()).toContain('return a + b; // sum');
    const href = await page.locator('a.button.primary', { hasText: 'Download' }).getAttribute('href');
    expect(href).toMatch(/\/[dp]\/docs\/code\.ts\?sign=/);
    const res = await fetch(new URL(href!, base));
    expect(await res.text()).toContain('export function add');
    await screenshot(page, '05-text-preview');
  });

  it('uploads a file with per-file and total progress, and the file lands on disk', async () => {
    await page.goto(`${base}/uploads`);
    await page.locator('.empty').waitFor();
    const body = randomBytes(6 * 1024 * 1024);
    const local = path.join(scratch, 'big file.bin');
    writeFileSync(local, body);
    // slow the upload down so the progress can be watched
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 3 * 1024 * 1024 });
    await page.locator('[data-testid=upload-input]').setInputFiles(local);
    const item = page.locator('[data-testid=upload-item]');
    await item.waitFor();
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const v = await item.locator('progress').evaluate((p: HTMLProgressElement) => p.value);
      seen.add(v);
      if (v > 0 && v < 100 && seen.size > 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect([...seen].some((v) => v > 0 && v < 100), `intermediate progress seen: ${[...seen]}`).toBe(true);
    expect(await page.locator('[data-testid=upload-total]').textContent()).toMatch(/Total: \d+%/);
    await screenshot(page, '06-upload-progress');
    await expect.poll(() => item.locator('.status').textContent(), { timeout: 30_000 }).toBe('Done');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    expect(await page.locator('[data-testid=upload-total]').textContent()).toContain('100%');
    await row('big file.bin').waitFor();
    expect(readFileSync(path.join(root, 'uploads', 'big file.bin')).equals(body)).toBe(true);
    await screenshot(page, '07-upload-done');
  });

  it('creates a folder, renames, moves and deletes a file through dialogs', async () => {
    await page.click('button:has-text("New folder")');
    await page.fill('.dialog input[name=value]', 'made here');
    await page.click('.dialog button[type=submit]');
    await row('made here').waitFor();
    await waitForDisk(path.join(root, 'uploads', 'made here'));

    await select('big file.bin');
    await expect.poll(() => page.locator('[data-testid=selected-count]').textContent()).toBe('1 selected');
    await page.click('.actionbar button:has-text("Rename")');
    await page.fill('.dialog input[name=value]', 'renamed.bin');
    await screenshot(page, '08-rename-dialog');
    await page.click('.dialog button[type=submit]');
    await row('renamed.bin').waitFor();
    await waitForDisk(path.join(root, 'uploads', 'renamed.bin'));
    await waitForDisk(path.join(root, 'uploads', 'big file.bin'), false);

    await select('renamed.bin');
    await page.click('.actionbar button:has-text("Move")');
    // the folder tree opens along the current path: the sibling folder is on screen
    await page.click('.dialog button[data-path="/archive"]');
    await expect.poll(() => page.locator('[data-testid=picker-path]').textContent()).toBe('/archive');
    await screenshot(page, '09-move-picker');
    await page.click('.dialog button:has-text("Choose this folder")');
    await row('renamed.bin').waitFor({ state: 'detached' });
    await waitForDisk(path.join(root, 'archive', 'renamed.bin'));

    await page.goto(`${base}/archive`);
    await select('renamed.bin');
    await page.click('.actionbar button:has-text("Delete")');
    await page.click('.dialog button.danger');
    await row('renamed.bin').waitFor({ state: 'detached' });
    await waitForDisk(path.join(root, 'archive', 'renamed.bin'), false);
    expect(await page.locator('.empty').textContent()).toContain('empty');
  });

  it('creates a storage from the manage pages with the form of the driver', async () => {
    await page.goto(`${base}/@manage/storages`);
    await page.locator('[data-testid=storage-row]').first().waitFor();
    await page.click('a:has-text("Add")');
    await page.waitForURL(`${base}/@manage/storages/add`);
    await page.locator('select[name=driver] option[value=Local]').waitFor({ state: 'attached' });
    await page.selectOption('select[name=driver]', 'Local');
    await page.locator('input[name=root_folder_path]').waitFor();
    await page.fill('input[name=mount_path]', '/second');
    await page.fill('input[name=root_folder_path]', second);
    await page.fill('textarea[name=remark]', 'added from the browser');
    await screenshot(page, '10-storage-form');
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/@manage/storages`);
    const newRow = page.locator('[data-testid=storage-row]', { hasText: '/second' });
    await expect.poll(() => newRow.textContent()).toContain('work');
    await screenshot(page, '11-storages');
    const admin = await s.login();
    const stored = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content.find((x: { mount_path: string }) => x.mount_path === '/second');
    expect(stored).toMatchObject({ driver: 'Local', remark: 'added from the browser' });
    expect(JSON.parse(stored!.addition).root_folder_path).toBe(second);
    await page.goto(`${base}/second`);
    await row('from-second.txt').waitFor();
  });

  it('saves settings, adds a user and lists an upload task from the manage pages', async () => {
    await page.goto(`${base}/@manage/settings/site`);
    await page.fill('input[name=site_title]', 'Team Files');
    await page.selectOption('select[name=pagination_type]', 'pagination');
    await page.click('button[type=submit]:has-text("Save")');
    await expect.poll(() => page.locator('header .brand').textContent()).toBe('Team Files');
    expect(s.core.settings.get('site_title')).toBe('Team Files');
    expect(s.core.settings.get('pagination_type')).toBe('pagination');
    await screenshot(page, '14-settings-site');

    await page.goto(`${base}/@manage/users`);
    await page.click('button:has-text("Add")');
    await page.fill('.dialog input[name=username]', 'carol');
    await page.fill('.dialog input[name=password]', 'carol-pass-1');
    await page.fill('.dialog input[name=base_path]', '/docs');
    await page.locator('.dialog label', { hasText: 'Rename' }).locator('input').check();
    await page.locator('.dialog label', { hasText: 'Write (mkdir, upload)' }).locator('input').check();
    await screenshot(page, '15-user-dialog');
    await page.click('.dialog button[type=submit]');
    await page.locator('td', { hasText: 'carol' }).waitFor();
    const admin = await s.login();
    const carol = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: { username: string }) => u.username === 'carol');
    expect(carol).toMatchObject({ base_path: '/docs', permission: (1 << 3) | (1 << 4), role: 0, disabled: false });
    expect((await s.api('POST', '/api/auth/login', { body: { username: 'carol', password: 'carol-pass-1' } })).code).toBe(200);

    await page.goto(`${base}/uploads`);
    await page.locator('.upload-options label', { hasText: 'Upload as task' }).locator('input').check();
    const local = path.join(scratch, 'tasked.txt');
    writeFileSync(local, 'uploaded as a task');
    await page.locator('[data-testid=upload-input]').setInputFiles(local);
    await waitForDisk(path.join(root, 'uploads', 'tasked.txt'));
    await page.goto(`${base}/@manage/tasks`);
    const task = page.locator('[data-testid=task-row]', { hasText: 'tasked.txt' });
    await expect.poll(() => task.textContent()).toContain('succeeded');
    expect(await task.locator('progress').evaluate((p: HTMLProgressElement) => p.value)).toBe(100);
    await screenshot(page, '16-tasks');
  });

  it('escapes file names and sanitises readme and markdown: nothing injected runs', async () => {
    await page.goto(`${base}/xss`);
    await row(XSS_NAME).waitFor();
    expect(await row(XSS_NAME).locator('.fname').textContent()).toBe(XSS_NAME);
    await expect.poll(() => page.locator('.readme h2').textContent()).toBe('Readme title');
    expect(await page.locator('.readme script, .readme img[onerror], .readme a[href^="javascript"]').count()).toBe(0);
    await screenshot(page, '12-xss-folder');
    await row(XSS_NAME).locator('a').click();
    await expect.poll(() => page.locator('[data-testid=preview-name]').textContent()).toBe(XSS_NAME);
    await page.goto(`${base}/docs/notes.md`);
    await expect.poll(() => page.locator('.md-preview h1').textContent()).toBe('Notes');
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
  });

  it('shows the search box only with a search index, and opens a hit', async () => {
    await page.goto(`${base}/docs`);
    await row('code.ts').waitFor();
    expect(await page.locator('[data-testid=search-button]').count()).toBe(0);
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'search_index', value: 'database' }] })).code).toBe(200);
    // the wire answer of §14.3, whatever back end serves it
    const asked: unknown[] = [];
    await page.route('**/api/fs/search', async (route) => {
      asked.push(route.request().postDataJSON());
      await route.fulfill({ json: { code: 200, message: 'success', data: { content: [{ parent: '/docs', name: 'code.ts', is_dir: false, size: 77, type: 0 }], total: 1 } } });
    });
    await page.reload();
    await page.click('[data-testid=search-button]');
    await page.fill('.dialog input[name=keywords]', 'code');
    await page.click('.dialog button[type=submit]');
    await page.click('.dialog .hits button:has-text("code.ts")');
    await page.waitForURL(`${base}/docs/code.ts`);
    expect(asked).toEqual([{ parent: '/docs', keywords: 'code', scope: 0, page: 1, per_page: 100, password: '' }]);
    await page.unroute('**/api/fs/search');
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'search_index', value: 'none' }] })).code).toBe(200);
  });

  it('keeps a session whose token arrived while an answer to a token-less request was on its way', async () => {
    // The 401 to a request sent before the login must not end the session that began meanwhile.
    const other = await browser.newContext();
    const tab = await other.newPage();
    tab.setDefaultTimeout(10_000);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let answered!: (code: number) => void;
    const firstMe = new Promise<number>((r) => (answered = r));
    let asked!: () => void;
    const meAsked = new Promise<void>((r) => (asked = r));
    await tab.route('**/api/me', async (route) => {
      asked();
      const res = await route.fetch();
      const env = (await res.json()) as { code: number };
      await held;
      await route.fulfill({ response: res, json: env });
      answered(env.code);
    }, { times: 1 });
    await tab.goto(`${base}/@login`, { waitUntil: 'commit' });
    await meAsked;
    await tab.evaluate((t) => window.localStorage.setItem('token', t), await s.login());
    release();
    expect(await firstMe).toBe(401);
    // The login form shows once that answer has been handled (the app is ready after /api/me).
    await tab.locator('input[name=username]').waitFor();
    expect(await tab.evaluate(() => window.localStorage.getItem('token'))).toBeTruthy();
    await tab.goto(`${base}/docs`);
    await tab.locator('[data-testid=row][data-name="code.ts"]').waitFor();
    await other.close();
  });

  it('works at phone width in dark mode', async () => {
    const phone = await ctx.newPage();
    await phone.setViewportSize({ width: 390, height: 800 });
    await phone.goto(`${base}/photos`);
    await phone.locator('[data-testid=row]').first().waitFor();
    await phone.click('button[aria-label="Toggle dark mode"]');
    expect(await phone.evaluate(() => document.documentElement.classList.contains('dark'))).toBe(true);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(phone, '13-phone-dark');
    await phone.close();
    expect(pageErrors).toEqual([]);
  });
});
