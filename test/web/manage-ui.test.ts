import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { makeTree } from '../helpers/files.js';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.js';
import { serveRoot } from '../helpers/web-session.js';

/**
 * The manage pages and previews that ui.test.ts leaves out, in chromium against the real server
 * (no stubbed routes): the search index (enable, build, progress, search from the header, hidden
 * entries kept from a plain user), a path rule with a folder password made in the metas page, a
 * SimpleHttp offline download from a loopback file server, and the PDF preview.
 */
const enabled = requireChromium('the manage-page browser tests');

/** A one-page PDF with a correct cross-reference table (offsets computed, not guessed). */
function minimalPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    '<< /Length 44 >>\nstream\nBT /F1 18 Tf 20 40 Td (Hello PDF) Tj ET\nendstream',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const TREE = {
  'docs/report-2026.txt': 'yearly report',
  'docs/one.pdf': minimalPdf(),
  'reports/': '',
  'hidden-report.txt': 'not for everyone',
  'vault/inside.txt': 'classified',
  'downloads/': '',
};
/** Every entry of TREE, folders included: what a full index build must count. */
const TREE_OBJECTS = new Set(Object.keys(TREE).flatMap((k) => k.replace(/\/$/, '').split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/')))).size;

describe.runIf(enabled)('manage pages and PDF preview in chromium', () => {
  let s: TestServer;
  let admin: string;
  let base: string;
  let root: string;
  let files: FileServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const payload = randomBytes(256 * 1024);
  const row = (p: Page, name: string) => p.locator(`[data-testid=row][data-name="${name}"]`);
  const login = async (p: Page, user: string, password: string) => {
    await p.goto(`${base}/@login`);
    await p.fill('input[name=username]', user);
    await p.fill('input[name=password]', password);
    await p.click('button[type=submit]');
    await p.waitForURL((u) => !u.pathname.startsWith('/@login'));
  };
  const searchFor = async (p: Page, keywords: string, viaKey = false) => {
    if (viaKey) await p.keyboard.press('/');
    else await p.click('[data-testid=search-button]');
    await p.fill('.dialog input[name=keywords]', keywords);
    await p.click('.dialog button[type=submit]');
  };
  /** Each hit as `name | parent · size`, read from its link and its muted line. */
  const hits = (p: Page) =>
    p.locator('.dialog .hits li').evaluateAll((lis) => lis.map((li) => `${li.querySelector('button')?.textContent?.trim()} | ${li.querySelector('.muted')?.textContent?.trim()}`));

  beforeAll(async () => {
    root = makeTree(TREE);
    ({ s, admin, base } = await serveRoot(root));
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/', hide: '^hidden-', h_sub: true } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'bob-pass-1', base_path: '/', permission: 0 } })).code).toBe(200);
    files = await startFileServer({ files: { '/payload.bin': { body: payload } } });
    browser = await launchChromium();
    ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (m) => m.type() === 'error' && console.log('[browser]', m.text()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await login(page, 'admin', ADMIN_PASSWORD);
  });

  afterAll(async () => {
    await browser?.close();
    await files?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('enables the index in its settings page, builds it and shows the progress reach done', async () => {
    await page.goto(`${base}/@manage/indexes`);
    await page.locator('select[name=search_index]').waitFor();
    expect(await page.locator('[data-testid=index-progress]').count()).toBe(0);
    await page.selectOption('select[name=search_index]', 'database');
    await page.click('button[type=submit]:has-text("Save")');
    await expect.poll(() => s.core.settings.get('search_index')).toBe('database');
    const progress = page.locator('[data-testid=index-progress]');
    await progress.waitFor();
    await page.click('button:has-text("Build index")');
    await expect.poll(() => progress.textContent(), { timeout: 20_000 }).toMatch(/· done · last built/);
    const server = (await s.api('GET', '/api/admin/index/progress', { token: admin })).data;
    expect(server).toMatchObject({ obj_count: TREE_OBJECTS, is_done: true, error: '' });
    expect(await progress.textContent()).toContain(`${TREE_OBJECTS} objects`);
    await screenshot(page, '40-index-built');
  });

  it('searches from the header: hits show parent and name, and a hit opens its folder or file', async () => {
    await page.goto(`${base}/`);
    await row(page, 'docs').waitFor();
    await searchFor(page, 'report');
    await expect.poll(() => hits(page)).toEqual(['hidden-report.txt | / · 16 B', 'report-2026.txt | /docs · 13 B', 'reports | /']);
    await screenshot(page, '41-search-hits');
    await page.click('.dialog .hits button:has-text("report-2026.txt")');
    await page.waitForURL(`${base}/docs/report-2026.txt`);
    await expect.poll(() => page.locator('[data-testid=preview-text]').textContent()).toContain('yearly report');
    // from a previewed file the search looks in the file's folder (not below the file itself)
    await searchFor(page, 'report');
    await expect.poll(() => hits(page)).toEqual(['report-2026.txt | /docs · 13 B']);
    await page.keyboard.press('Escape');
    await page.click('.crumbs a:first-child');
    await page.waitForURL(`${base}/`);
    await searchFor(page, 'reports');
    await page.click('.dialog .hits button:has-text("reports")');
    await page.waitForURL(`${base}/reports`);
    await page.locator('.empty').waitFor();
  });

  it('keeps hidden entries out of a plain user’s search', async () => {
    const other = await browser.newContext();
    const bob = await other.newPage();
    bob.setDefaultTimeout(15_000);
    await login(bob, 'bob', 'bob-pass-1');
    await row(bob, 'docs').waitFor();
    await searchFor(bob, 'report', true);
    await expect.poll(() => hits(bob)).toEqual(['report-2026.txt | /docs · 13 B', 'reports | /']);
    await screenshot(bob, '42-search-plain-user');
    await other.close();
  });

  it('creates a path rule with a folder password in the metas page, which a plain user then meets', async () => {
    await page.goto(`${base}/@manage/metas`);
    await page.locator('td', { hasText: '/' }).first().waitFor();
    await page.click('button:has-text("Add")');
    await page.fill('.dialog input[name=path]', '/vault');
    await page.fill('.dialog input[name=password]', 'open sesame');
    await page.locator('.dialog input[name=p_sub]').check();
    await screenshot(page, '43-meta-dialog');
    await page.click('.dialog button[type=submit]');
    await page.locator('td', { hasText: '/vault' }).waitFor();
    const metas = (await s.api('GET', '/api/admin/meta/list?page=1&per_page=100', { token: admin })).data.content;
    expect(metas.find((m: { path: string }) => m.path === '/vault')).toMatchObject({ password: 'open sesame', p_sub: true, write: false, hide: '' });

    const fresh = await browser.newContext();
    const bob = await fresh.newPage();
    bob.setDefaultTimeout(15_000);
    await login(bob, 'bob', 'bob-pass-1');
    await bob.goto(`${base}/vault`);
    const pw = bob.locator('input[name=folder-password]');
    await pw.waitFor();
    expect(await row(bob, 'inside.txt').count()).toBe(0);
    await pw.fill('open sesame');
    await bob.click('button:has-text("Open")');
    await row(bob, 'inside.txt').waitFor();
    await screenshot(bob, '44-meta-password-opened');
    await fresh.close();
  });

  it('adds a SimpleHttp offline download from its page; the task succeeds and the bytes land on disk', async () => {
    const allow = await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'offline_download_allow_private', value: 'true' }] });
    expect(allow.code, allow.message).toBe(200);
    await page.goto(`${base}/@manage/offline`);
    await page.locator('select[name=tool] option[value=SimpleHttp]').waitFor({ state: 'attached' });
    await page.fill('textarea[name=urls]', `${files.base}/payload.bin`);
    await page.fill('input[name=path]', '/downloads');
    await page.selectOption('select[name=tool]', 'SimpleHttp');
    await screenshot(page, '45-offline-form');
    await page.click('button[type=submit]:has-text("Add")');
    await page.waitForURL(`${base}/@manage/tasks`);
    // the tasks page opens on the offline download tab, where the new task is
    await expect.poll(() => page.locator('[role=tab][aria-selected=true]').textContent()).toBe('Offline downloads');
    const task = page.locator('[data-testid=task-row]', { hasText: 'payload.bin' });
    await expect.poll(() => task.textContent(), { timeout: 20_000 }).toContain('succeeded');
    await screenshot(page, '46-offline-task');
    const dest = path.join(root, 'downloads', 'payload.bin');
    await expect.poll(() => existsSync(dest) && readFileSync(dest).equals(payload), { timeout: 20_000 }).toBe(true);
    await page.getByRole('tab', { name: 'Offline transfers', exact: true }).click();
    await expect.poll(() => page.locator('[data-testid=task-row]', { hasText: 'payload.bin' }).textContent()).toContain('succeeded');
  });

  it('previews a PDF: the signed link answers application/pdf and the frame shows those bytes without a download', async () => {
    const downloads: string[] = [];
    page.on('download', (d) => downloads.push(d.suggestedFilename()));
    const pdfResponse = page.waitForResponse((r) => /^\/[dp]\/docs\/one\.pdf$/.test(new URL(r.url()).pathname));
    await page.goto(`${base}/docs/one.pdf`);
    const seen = await pdfResponse;
    expect(new URL(seen.url()).pathname + new URL(seen.url()).search).toMatch(/^\/[dp]\/docs\/one\.pdf\?sign=/);
    expect(seen.status()).toBe(200);
    expect(seen.headers()['content-type']).toBe('application/pdf');
    const href = await page.locator('a.button.primary', { hasText: 'Download' }).getAttribute('href');
    expect(href).toBe(seen.url());
    // the raw link says attachment (as AList's does), so the frame shows a blob of its bytes
    const frame = page.locator('[data-testid=preview-pdf]');
    await frame.waitFor();
    const framed = await frame.evaluate(async (el: HTMLIFrameElement) => {
      const blob = await (await fetch(el.src)).blob();
      return { src: el.src, type: blob.type, bytes: [...new Uint8Array(await blob.arrayBuffer())] };
    });
    expect(framed.src).toMatch(/^blob:/);
    expect(framed.type).toBe('application/pdf');
    expect(Buffer.from(framed.bytes).equals(minimalPdf())).toBe(true);
    // the old frame on the raw link turned into a download of one.pdf within a second
    await page.waitForTimeout(1000);
    expect(downloads).toEqual([]);
    await screenshot(page, '47-pdf-preview');
    expect(pageErrors).toEqual([]);
  });
});
