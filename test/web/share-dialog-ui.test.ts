// Issue #44 item 5: the share dialog takes what the API does — a custom id (for users with the
// CUSTOM_SHARE_ID bit), a header and a description (readme) — and the visitor's page shows them.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };
const SHARE = 1 << 14;
const PASS = 'sharer-pass-1';

describe.runIf(requireChromium('the share dialog browser tests'))('the share dialog', () => {
  let w: WebSession;
  const openDialog = async (page: Page, name: string) => {
    await page.goto(`${w.base}/`);
    await page.locator(`[data-testid=row][data-name="${name}"] input[type=checkbox]`).check();
    await page.click('.selection-bar [data-action=share]');
    await page.locator('.dialog input[name=pwd]').waitFor();
  };

  beforeAll(async () => {
    w = await openWebSession({ 'docs/a.txt': 'a', 'other/b.txt': 'b' });
    expect((await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'sharer', password: PASS, base_path: '/', permission: SHARE } })).code).toBe(200);
  });
  afterAll(() => w?.close());

  it('makes a link with a custom id, a header and a description, shown to the visitor', async () => {
    await openDialog(w.page, 'docs');
    await w.page.fill('.dialog input[name=id]', 'our-docs');
    await w.page.fill('.dialog textarea[name=header]', '## Welcome, visitor');
    await w.page.fill('.dialog textarea[name=readme]', '# About these files\n\nSome **notes**.');
    await screenshot(w.page, '44-share-dialog');
    await w.page.click('.dialog button:has-text("Create link")');
    const link = await w.page.locator('[data-testid=share-link]').inputValue();
    expect(link).toBe(`${w.base}/@s/our-docs`);
    const share = (await w.s.api('GET', '/api/share/get', { token: w.admin, query: { id: 'our-docs' } })).data;
    expect(share).toMatchObject({ id: 'our-docs', files: ['/docs'], header: '## Welcome, visitor', readme: '# About these files\n\nSome **notes**.' });
    const ctx = await w.browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(link);
    await page.locator('[data-testid=share-list]').waitFor();
    await page.locator('.markdown h2:has-text("Welcome, visitor")').waitFor();
    expect(await page.locator('.markdown.readme h1').innerText()).toBe('About these files');
    expect(await page.locator('.markdown.readme strong').innerText()).toBe('notes');
    await ctx.close();
  });

  it('refuses a custom id the server does not take, with its reason, and makes no share', async () => {
    await openDialog(w.page, 'other');
    await w.page.fill('.dialog input[name=id]', 'not a valid id!');
    await w.page.click('.dialog button:has-text("Create link")');
    await w.page.locator('.toast.error:has-text("share id can only contain")').waitFor();
    expect(await w.page.locator('[data-testid=share-link]').count()).toBe(0);
    const ids = (await w.s.api('GET', '/api/share/list', { token: w.admin })).data.content.map((s: { id: string }) => s.id);
    expect(ids).toEqual(['our-docs']);
    await w.page.keyboard.press('Escape');
  });

  it('offers no custom id without the CUSTOM_SHARE_ID bit: a random one', async () => {
    const ctx = await w.browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), await w.s.login('sharer', PASS));
    await openDialog(page, 'other');
    expect(await page.locator('.dialog input[name=id]').count()).toBe(0);
    await page.fill('.dialog textarea[name=readme]', 'plain words');
    await page.click('.dialog button:has-text("Create link")');
    expect(await page.locator('[data-testid=share-link]').inputValue()).toMatch(/\/@s\/[A-Za-z0-9]{22}$/);
    await ctx.close();
  });

  it('fits a phone', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await openDialog(page, 'docs');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    for (const field of ['input[name=id]', 'textarea[name=header]', 'textarea[name=readme]', 'button:has-text("Create link")']) {
      const box = (await page.locator(`.dialog ${field}`).boundingBox())!;
      expect(box.x + box.width, field).toBeLessThanOrEqual(PHONE.width);
    }
    await ctx.close();
  });
});
