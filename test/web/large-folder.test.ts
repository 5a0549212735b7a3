import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDriver } from '../../src/drivers/registry.js';
import { type Driver, driverConfig, ObjectNotFound, type Obj } from '../../src/drivers/types.js';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { listenLoopback } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** A folder of 100 000 entries, listed from memory (writing that many files would take longer than the test). */
const COUNT = 100_000;
const nameOf = (i: number) => `entry-${String(i).padStart(6, '0')}.txt`;
registerDriver({
  config: driverConfig({ name: 'TestManyEntries', localSort: true, noUpload: true }),
  additional: [],
  create: (addition): Driver => {
    const modified = new Date(1700000000000);
    const entries: Obj[] = Array.from({ length: COUNT }, (_, i) => ({ name: nameOf(i), size: i, isDir: false, modified }));
    return {
      init: async () => undefined,
      drop: async () => undefined,
      addition: () => addition,
      list: async (p) => {
        if (p !== '/') throw new ObjectNotFound();
        return entries;
      },
      get: async (p) => {
        if (p === '/') return { name: '', size: 0, isDir: true, modified };
        throw new ObjectNotFound();
      },
      link: async () => {
        throw new ObjectNotFound();
      },
    };
  },
});

const enabled = requireChromium('the large-folder browser test');

describe.runIf(enabled)('a folder of 100 000 entries in the browser', { timeout: 180_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let base: string;
  const rowsInDom = () => page.locator('[data-testid=row]').count();
  const visibleNames = () =>
    page.locator('[data-testid=row]').evaluateAll((rows) =>
      rows.filter((r) => {
        const b = r.getBoundingClientRect();
        return b.bottom > 0 && b.top < window.innerHeight;
      }).map((r) => r.getAttribute('data-name')),
    );

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    const body = { mount_path: '/many', driver: 'TestManyEntries', addition: '{}', cache_expiration: 30 };
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body })).code).toBe(200);
    base = await listenLoopback(s.app);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // The first listing of 100 000 entries is rendered while the rest of the suite loads the
    // 2 cores too: give page steps room (the assertions on rows and scrolling are unchanged).
    page.setDefaultTimeout(90_000);
    page.on('pageerror', (e) => console.log('[browser error]', e.message));
    await page.goto(`${base}/@login`);
    await page.evaluate((t) => localStorage.setItem('token', t), admin);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
  });

  it('renders only the rows near the viewport and scrolls to any of them', async () => {
    await page.goto(`${base}/many`);
    await page.locator(`[data-testid=row][data-name="${nameOf(0)}"]`).waitFor();
    expect(await rowsInDom()).toBeLessThan(80);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height).toBeGreaterThan(COUNT * 40);

    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await expect.poll(visibleNames).toContain(nameOf(COUNT - 1));
    expect(await rowsInDom()).toBeLessThan(80);
    await screenshot(page, '20-large-folder-end');

    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
    await expect.poll(async () => (await visibleNames()).some((n) => /^entry-0(49|50)\d{3}\.txt$/.test(n ?? ''))).toBe(true);

    // sorting the whole folder client-side keeps the same small DOM
    await page.selectOption('select[aria-label=Sort]', 'name:desc');
    await page.evaluate(() => window.scrollTo(0, 0));
    await expect.poll(visibleNames).toContain(nameOf(COUNT - 1));
    expect(await rowsInDom()).toBeLessThan(80);
  });

  it('moves the keyboard cursor through the list', async () => {
    await page.selectOption('select[aria-label=Sort]', 'name:asc');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.locator(`[data-testid=row][data-name="${nameOf(0)}"]`).waitFor();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.locator('[data-testid=row].cursor').getAttribute('data-name')).toBe(nameOf(3));
    await page.keyboard.press(' ');
    await expect.poll(() => page.locator('[data-testid=selected-count]').textContent()).toBe('1 selected');
  });
});
