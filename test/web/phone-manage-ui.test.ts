import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };

describe.runIf(requireChromium('the phone-width manage browser tests'))('manage pages at phone width (390 px)', () => {
  let w: WebSession;
  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' }, PHONE);
    // long values are what pushed the tables wide
    await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'someone-with-a-rather-long-name', password: 'p-1234567', base_path: '/a/very/long/base/path/for/this/user', permission: 0 } });
    await w.s.api('POST', '/api/admin/meta/create', { token: w.admin, body: { path: '/a/very/long/path/with/a/rule', password: 'x', write: true, hide: '^secret' } });
  });
  afterAll(() => w?.close());

  for (const [page, rowSelector] of [
    ['storages', '[data-testid=storage-row]'],
    ['users', 'table.data tbody tr'],
    ['metas', 'table.data tbody tr'],
  ] as const) {
    it(`${page}: nothing wider than the screen, Edit and Delete on screen`, async () => {
      await w.page.goto(`${w.base}/@manage/${page}`);
      const rows = w.page.locator(rowSelector);
      await rows.first().waitFor();
      await w.page.waitForTimeout(50);
      expect(await w.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      for (const label of ['Edit', 'Delete']) {
        const button = rows.last().locator(`.actions-cell :text-is("${label}")`);
        const box = (await button.boundingBox())!;
        expect(box.x, label).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, label).toBeLessThanOrEqual(PHONE.width);
      }
      // each card names its fields
      expect(await rows.last().locator('td[data-label]').count()).toBeGreaterThan(2);
      await screenshot(w.page, `65-phone-${page}`);
    });
  }

  it('folds the manage menu into one button', async () => {
    await w.page.goto(`${w.base}/@manage/users`);
    const nav = w.page.locator('nav.side');
    const toggle = w.page.locator('button.menu-toggle');
    await toggle.waitFor();
    expect(await nav.isVisible()).toBe(false);
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const links = nav.locator('a');
    expect(await links.count()).toBeGreaterThan(8);
    // every entry fits, none clipped
    for (const box of await links.evaluateAll((as) => as.map((a) => a.getBoundingClientRect().right))) expect(box).toBeLessThanOrEqual(PHONE.width);
    await screenshot(w.page, '66-phone-menu');
    await nav.locator('a', { hasText: 'Metas' }).click();
    await w.page.waitForURL(/@manage\/metas$/);
    expect(await nav.isVisible()).toBe(false);
  });

  it('keeps the desktop menu open at desktop width', async () => {
    const desk = await w.browser.newPage({ viewport: { width: 1200, height: 800 } });
    await desk.goto(`${w.base}/@login`);
    await desk.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await desk.goto(`${w.base}/@manage/users`);
    await desk.locator('nav.side a').first().waitFor();
    expect(await desk.locator('button.menu-toggle').isVisible()).toBe(false);
    expect(await desk.locator('table.data thead').isVisible()).toBe(true);
    await desk.close();
  });
});
