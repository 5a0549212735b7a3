// Issue #44 item 9: an admin who logs in to a fresh installation gets a first-run card with three
// links — add a storage, change the notice, make users — dismissible for good, shown to no one
// else, gone once the installation has users; at phone width and in German too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };

describe.runIf(requireChromium('the first-run card browser tests'))('the first-run card', () => {
  let w: WebSession;
  const card = () => w.page.locator('[data-testid=first-run]');

  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
  });
  afterAll(() => w?.close());

  it('points a fresh installation’s admin at the three first steps', async () => {
    await w.page.goto(`${w.base}/`);
    await card().waitFor();
    const links = await card().locator('a').evaluateAll((as) => as.map((a) => [a.textContent, new URL((a as HTMLAnchorElement).href).pathname]));
    expect(links).toEqual([
      ['Add a storage: the folders, buckets or servers to share', '/@manage/storages/add'],
      ['Change the notice shown above the files', '/@manage/settings/site'],
      ['Make accounts for the people who use it', '/@manage/users'],
    ]);
    // above the files and the notice, in the page's main part
    expect(await w.page.locator('main.container > [data-testid=first-run]').count()).toBe(1);
    await screenshot(w.page, '44-first-run');
    await card().locator('a', { hasText: 'Add a storage' }).click();
    await w.page.waitForURL(/@manage\/storages\/add$/);
    // not on other folders' pages
    await w.page.goto(`${w.base}/a.txt`);
    await w.page.locator('[data-testid=preview-name]').waitFor();
    expect(await card().count()).toBe(0);
  });

  it('fits a phone, and speaks German', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => (window.localStorage.setItem('token', t), window.localStorage.setItem('lang', 'de')), w.admin);
    await page.goto(`${w.base}/`);
    await page.locator('[data-testid=first-run]').waitFor();
    expect(await page.locator('[data-testid=first-run] h2').innerText()).toBe('Willkommen auf deinem neuen Dateiserver');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    await ctx.close();
  });

  it('is shown to no one but the admin: the guest does not see it', async () => {
    const guest = (await w.s.api('GET', '/api/admin/user/list', { token: w.admin })).data.content.find((u: { role: number }) => u.role === 1);
    expect((await w.s.api('POST', '/api/admin/user/update', { token: w.admin, body: { ...guest, disabled: false } })).code).toBe(200);
    const ctx = await w.browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/`);
    await page.locator('[data-testid=row]').first().waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.locator('[data-testid=first-run]').count()).toBe(0);
    await ctx.close();
    expect((await w.s.api('POST', '/api/admin/user/update', { token: w.admin, body: { ...guest, disabled: true } })).code).toBe(200);
  });

  it('is dismissed for good', async () => {
    await w.page.goto(`${w.base}/`);
    await card().locator('button', { hasText: 'Dismiss' }).click();
    expect(await card().count()).toBe(0);
    await w.page.reload();
    await w.page.locator('[data-testid=row]').first().waitFor();
    await w.page.waitForLoadState('networkidle');
    expect(await card().count()).toBe(0);
  });

  it('is gone once the installation has users', async () => {
    await w.page.evaluate(() => window.localStorage.removeItem('first-run-dismissed'));
    await w.page.goto(`${w.base}/`);
    await card().waitFor();
    expect((await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'someone', password: 'p-1234567', base_path: '/', permission: 0 } })).code).toBe(200);
    await w.page.reload();
    await w.page.locator('[data-testid=row]').first().waitFor();
    await w.page.waitForLoadState('networkidle');
    expect(await card().count()).toBe(0);
  });
});
