// Issue #44 item 1: at phone width (390 × 844) no page is wider than the screen, and the header's
// controls (search, language, theme, Manage, Log out) are all on it — on every file page and every
// manage page, in English and in the language with the longest labels (Spanish), search shown.
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { webmClip } from '../helpers/media.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };
const png = (width: number, height: number, r: number) => sharp({ create: { width, height, channels: 3, background: { r, g: 120, b: 200 } } }).png().toBuffer();

/** The page's width and every header control that reaches past the screen's right edge. */
async function measure(page: Page): Promise<{ width: number; clipped: string[]; controls: number }> {
  await page.waitForTimeout(150);
  return page.evaluate(() => {
    const controls = [...document.querySelectorAll<HTMLElement>('header.top button, header.top a, header.top select')].filter((e) => e.offsetParent !== null);
    const clipped = controls.filter((e) => e.getBoundingClientRect().right > window.innerWidth || e.getBoundingClientRect().left < 0).map((e) => e.getAttribute('aria-label') ?? e.textContent ?? e.tagName);
    return { width: document.documentElement.scrollWidth, clipped, controls: controls.length };
  });
}

describe.runIf(requireChromium('the phone-width layout browser tests'))('every page fits a phone (390 px)', () => {
  let w: WebSession;
  let shareId = '';
  const filePages: Array<[string, string]> = [
    ['/', '[data-testid=row]'],
    ['/pics', '[data-testid=row]'],
    ['/notes.txt', 'pre.code'],
    ['/code-with-a-rather-long-name-for-a-phone-screen.ts', 'pre.code'],
    ['/README.md', '.markdown'],
    ['/pics/a-wide.png', '.gallery img'],
    ['/clip.webm', '.media-player'],
    ['/data.bin', '.unsupported'],
  ];
  const managePages = [
    'settings/site', 'settings/style', 'settings/preview', 'settings/global', 'settings/offline', 'settings/sso', 'settings/ldap', 'settings/s3',
    'storages', 'storages/add', 'storages/edit/1', 'users', 'groups', 'metas', 'hooks', 'sync', 'audit', 'indexes', 'offline', 'tasks', 'shares', 'profile',
  ];

  beforeAll(async () => {
    w = await openWebSession(
      {
        'notes.txt': 'some notes\n'.repeat(20),
        'code-with-a-rather-long-name-for-a-phone-screen.ts': `export const aVeryLongIdentifierName = ${JSON.stringify('x'.repeat(200))};\n`,
        'README.md': '# Read me\n\nA readme with a [link](https://example.invalid/a/very/long/path/that/does/not/wrap/easily/at/all).',
        'pics/a-wide.png': await png(1600, 400, 10),
        'pics/b.png': await png(300, 300, 90),
        'clip.webm': webmClip(),
        'data.bin': Buffer.alloc(64, 1),
        'a-folder-with-a-name-long-enough-to-need-an-ellipsis-on-a-phone/x.txt': 'x',
      },
      PHONE,
    );
    // the search button is in the header when the index is on: the widest header there is
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'search_index', value: 'database' }] })).code).toBe(200);
    const made = await w.s.api('POST', '/api/share/create', { token: w.admin, body: { files: ['/pics'] } });
    expect(made.code).toBe(200);
    shareId = made.data.id;
  });
  afterAll(() => w?.close());

  for (const lang of ['en', 'es']) {
    it(`${lang}: every file page, in list, grid and wall`, async () => {
      await w.page.evaluate((l) => (localStorage.setItem('lang', l), localStorage.setItem('view', 'list')), lang);
      for (const [p, ready] of filePages) {
        await w.page.goto(`${w.base}${p}`);
        await w.page.locator(ready).first().waitFor();
        const m = await measure(w.page);
        expect(m, p).toEqual({ width: PHONE.width, clipped: [], controls: 6 });
      }
      for (const view of ['grid', 'wall']) {
        await w.page.evaluate((v) => localStorage.setItem('view', v), view);
        await w.page.goto(`${w.base}/pics`);
        await w.page.locator(view === 'grid' ? '.cell' : '.wall .tile').first().waitFor();
        expect(await measure(w.page), view).toEqual({ width: PHONE.width, clipped: [], controls: 6 });
      }
      await w.page.evaluate(() => localStorage.setItem('view', 'list'));
      await w.page.goto(`${w.base}/`);
      await w.page.locator('[data-testid=row]').first().waitFor();
      await screenshot(w.page, `44-phone-header-${lang}`);
    });

    it(`${lang}: every manage page`, async () => {
      await w.page.evaluate((l) => localStorage.setItem('lang', l), lang);
      for (const sub of managePages) {
        await w.page.goto(`${w.base}/@manage/${sub}`);
        await w.page.locator('.manage section > *').first().waitFor();
        await w.page.waitForLoadState('networkidle');
        const m = await measure(w.page);
        // the manage pages have no search button: language, theme, Manage, Log out and the logo link
        expect(m, sub).toEqual({ width: PHONE.width, clipped: [], controls: 5 });
      }
    });

    it(`${lang}: the login page, a share's visitor page and a plain user with a long name`, async () => {
      const ctx = await w.browser.newContext({ viewport: PHONE });
      const page = await ctx.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${w.base}/@login`);
      await page.evaluate((l) => localStorage.setItem('lang', l), lang);
      await page.goto(`${w.base}/@login`);
      await page.locator('form input').first().waitFor();
      expect((await measure(page)).width).toBe(PHONE.width);
      expect((await measure(page)).clipped).toEqual([]);
      await page.goto(`${w.base}/@s/${shareId}`);
      await page.locator('[data-testid=share-list]').waitFor();
      expect((await measure(page)).width).toBe(PHONE.width);
      expect((await measure(page)).clipped).toEqual([]);
      const name = `someone-with-a-really-long-user-name-${lang}`;
      expect((await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: name, password: 'p-1234567', base_path: '/', permission: 0 } })).code).toBe(200);
      await page.evaluate((t) => localStorage.setItem('token', t), await w.s.login(name, 'p-1234567'));
      await page.goto(`${w.base}/`);
      await page.locator('[data-testid=row]').first().waitFor();
      const m = await measure(page);
      expect(m).toEqual({ width: PHONE.width, clipped: [], controls: 6 });
      // the user's name is the profile link's label, shown as an icon
      expect(await page.locator(`header a[aria-label="${name}"]`).count()).toBe(1);
      await ctx.close();
    });
  }

  it('desktop keeps the words in the header', async () => {
    const page = await w.ctx.newPage();
    await page.setViewportSize({ width: 1200, height: 800 });
    await page.evaluate(() => localStorage.setItem('lang', 'en')).catch(() => undefined);
    await page.goto(`${w.base}/`);
    await page.evaluate(() => localStorage.setItem('lang', 'en'));
    await page.goto(`${w.base}/`);
    await page.locator('[data-testid=row]').first().waitFor();
    expect(await page.locator('header.top button:has-text("Log out")').isVisible()).toBe(true);
    expect(await page.locator('header.top a:has-text("Manage")').isVisible()).toBe(true);
    await page.close();
  });
});
