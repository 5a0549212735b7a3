import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { listenLoopback } from '../helpers/http.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

/** The archive view in a real browser: open a zip like a folder, preview an entry, extract it. */
const enabled = requireChromium('the archive UI browser test');

describe.runIf(enabled)('archives in the web UI', () => {
  let s: TestServer;
  let root: string;
  let base: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const src = makeTree({ 'hello.txt': 'hello from the zip\n', 'docs/readme.md': '# inside the archive\n' });
    root = makeTree({ 'box/': '' });
    execFileSync('zip', ['-q', '-r', path.join(root, 'box', 'pack.zip'), 'hello.txt', 'docs'], { cwd: src });
    rmSync(src, { recursive: true, force: true });
    s = await startServer(BACKENDS[0]!);
    const token = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/z', root) })).code).toBe(200);
    base = await listenLoopback(s.app);
    browser = await launchChromium();
    const ctx = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    page = await ctx.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/@login`);
    await page.fill('input[name=username]', 'admin');
    await page.fill('input[name=password]', ADMIN_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL((u) => !u.pathname.startsWith('/@login'));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('opens a zip like a folder, previews an entry and extracts it here with progress', async () => {
    await page.goto(`${base}/z/box/pack.zip`);
    await page.locator('[data-testid=archive-view]').waitFor();
    const names = () => page.locator('[data-testid=archive-entry]').allTextContents();
    await expect.poll(async () => (await names()).map((n) => n.trim())).toEqual(['docs', 'hello.txt']);
    await page.locator('[data-testid=archive-entry]', { hasText: 'docs' }).click();
    await page.locator('[data-testid=archive-entry]', { hasText: 'readme.md' }).click();
    await expect.poll(() => page.locator('[data-testid=archive-preview] pre').textContent()).toBe('# inside the archive\n');
    await screenshot(page, 'archive-01-preview');
    await page.getByRole('button', { name: 'Extract here' }).click();
    for (let i = 0; i < 200 && !existsSync(path.join(root, 'box', 'docs', 'readme.md')); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(path.join(root, 'box', 'docs', 'readme.md'), 'utf8')).toBe('# inside the archive\n');
    await expect.poll(() => page.locator('body').textContent(), { timeout: 10_000 }).toContain('Extracted to /z/box');
  });
});
