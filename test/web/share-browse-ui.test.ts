// Issue #44 item 2: a share's visitor gets the normal browser — breadcrumb from the share's top,
// list, grid with the share's own thumbnails (never a raw /d link of the creator's paths), photo
// wall, sort, the header and readme — in the browser's language, and it fits a phone.
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };
const png = (r: number) => sharp({ create: { width: 320, height: 200, channels: 3, background: { r, g: 90, b: 160 } } }).png().toBuffer();

describe.runIf(requireChromium('the share visitor browser tests'))("a share's visitor browses as in the file browser", () => {
  let w: WebSession;
  let id = '';
  const visitor = async (opts: { viewport?: { width: number; height: number }; locale?: string } = {}) => {
    const ctx = await w.browser.newContext({ viewport: opts.viewport ?? { width: 1200, height: 800 }, locale: opts.locale ?? 'en-US' });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    return { ctx, page };
  };
  const rows = (page: Page) => page.locator('[data-testid=share-list] [data-testid=row]');

  beforeAll(async () => {
    w = await openWebSession({
      'trip/one.png': await png(20),
      'trip/two.png': await png(200),
      'trip/notes.txt': 'notes of the trip',
      'trip/day2/three.png': await png(120),
      'trip/README.md': '# The trip\n\nPictures.',
    });
    const made = await w.s.api('POST', '/api/share/create', { token: w.admin, body: { files: ['/trip'], header: '## Holiday' } });
    expect(made.code).toBe(200);
    id = made.data.id;
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'share_preview', value: 'true' }] })).code).toBe(200);
  });
  afterAll(() => w?.close());

  it('lists with a breadcrumb from the share, sorts, goes in and back', async () => {
    const { ctx, page } = await visitor();
    // a share of one folder opens on that folder's entries
    await page.goto(`${w.base}/@s/${id}`);
    await rows(page).nth(3).waitFor();
    expect(await rows(page).evaluateAll((rs) => rs.map((r) => r.getAttribute('data-name')))).toEqual(['day2', 'notes.txt', 'one.png', 'README.md', 'two.png']);
    // no selection for a visitor
    expect(await page.locator('[data-testid=share-list] input[type=checkbox]:visible').count()).toBe(0);
    await page.locator('.markdown h2:has-text("Holiday")').waitFor();
    await page.locator('.markdown.readme h1:has-text("The trip")').waitFor();
    // sort by size, largest first (folders stay first): the 17-byte notes come last
    await page.selectOption('.toolbar select', 'size:desc');
    await expect.poll(async () => (await rows(page).evaluateAll((rs) => rs.map((r) => r.getAttribute('data-name')))).at(-1)).toBe('notes.txt');
    expect((await rows(page).evaluateAll((rs) => rs.map((r) => r.getAttribute('data-name'))))[0]).toBe('day2');
    await page.selectOption('.toolbar select', 'name:asc');
    // into a sub-folder and back by the crumbs
    await rows(page).filter({ hasText: 'day2' }).locator('a.name').click();
    await page.waitForURL(new RegExp(`/@s/${id}/day2$`));
    await rows(page).first().waitFor();
    const crumbs = await page.locator('.crumbs a').evaluateAll((as) => as.map((a) => [a.textContent!.trim(), new URL((a as HTMLAnchorElement).href).pathname]));
    expect(crumbs).toEqual([
      ['Shared files', `/@s/${id}`],
      ['day2', `/@s/${id}/day2`],
    ]);
    await page.click('.crumbs a:has-text("Shared files")');
    await page.waitForURL(new RegExp(`/@s/${id}$`));
    // a file's page has the crumbs back too
    await rows(page).filter({ hasText: 'notes.txt' }).locator('a.name').click();
    await page.locator('[data-testid=share-download], [data-testid=preview-text]').first().waitFor();
    expect(await page.locator('.crumbs a').count()).toBe(2);
    await page.click('.crumbs a:has-text("Shared files")');
    await rows(page).first().waitFor();
    await ctx.close();
  });

  it("grid and wall show the share's own thumbnails, never a raw link of the creator's paths", async () => {
    const { ctx, page } = await visitor();
    await page.goto(`${w.base}/@login`);
    await page.evaluate(() => window.localStorage.setItem('view', 'grid'));
    await page.goto(`${w.base}/@s/${id}`);
    const imgs = page.locator('[data-testid=share-list] [data-testid=cell] img');
    await imgs.nth(1).waitFor();
    const srcs = await imgs.evaluateAll((is) => is.map((i) => new URL((i as HTMLImageElement).src).pathname + new URL((i as HTMLImageElement).src).search));
    expect(srcs).toHaveLength(2);
    for (const src of srcs) expect(src).toMatch(new RegExp(`^/sd/${id}/(one|two)\\.png\\?(.*&)?type=thumb`));
    // the thumbnails load
    await expect.poll(() => imgs.evaluateAll((is) => is.every((i) => (i as HTMLImageElement).naturalWidth > 0))).toBe(true);
    await screenshot(page, '44-share-grid');
    await page.click('[data-testid=wall-toggle]');
    await page.locator('[data-testid=wall] .tile').nth(1).waitFor();
    expect(await page.locator('[data-testid=wall] img').evaluateAll((is) => is.every((i) => new URL((i as HTMLImageElement).src).pathname.startsWith('/sd/')))).toBe(true);
    await ctx.close();
  });

  it("speaks the visitor's language and fits a phone", async () => {
    const { ctx, page } = await visitor({ viewport: PHONE, locale: 'de-DE' });
    await page.goto(`${w.base}/@s/${id}`);
    await rows(page).first().waitFor();
    expect(await page.locator('.crumbs a').first().innerText()).toContain('Geteilte Dateien');
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('de');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    await screenshot(page, '44-share-phone');
    await ctx.close();
  });

  it('offers no trash link on a share page, even to a signed-in user', async () => {
    await w.page.goto(`${w.base}/@s/${id}`);
    await rows(w.page).first().waitFor();
    expect(await w.page.locator('[data-testid=trash-link]').count()).toBe(0);
  });
});
