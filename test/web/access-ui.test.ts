import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpNow } from '../../src/auth/totp.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { makeTree } from '../helpers/files.js';
import type { TestServer } from '../helpers/server.js';
import { serveRoot } from '../helpers/web-session.js';

/**
 * Access rules as a person meets them in the browser: a user without write rights, a
 * password-protected folder, hidden entries, the 2FA prompt at login, guest browsing.
 */
const enabled = requireChromium('the access-rule browser tests');

describe.runIf(enabled)('access rules in the web UI', () => {
  let s: TestServer;
  let admin: string;
  let base: string;
  let root: string;
  let browser: Browser;
  const row = (page: Page, name: string) => page.locator(`[data-testid=row][data-name="${name}"]`);
  const names = (page: Page) => page.locator('[data-testid=row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')));
  const login = async (page: Page, user: string, password: string) => {
    await page.goto(`${base}/@login`);
    await page.fill('input[name=username]', user);
    await page.fill('input[name=password]', password);
    await page.click('button[type=submit]');
  };

  beforeAll(async () => {
    root = makeTree({ 'open.txt': 'o', 'hidden-note.txt': 'h', 'secret/inside.txt': 'classified', 'public/readme.txt': 'for all' });
    ({ s, admin, base } = await serveRoot(root));
    for (const meta of [
      { path: '/', hide: '^hidden-', h_sub: true },
      { path: '/secret', password: 'open sesame', p_sub: true },
    ]) {
      expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: meta })).code).toBe(200);
    }
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'bob', password: 'bob-pass-1', base_path: '/', permission: 0 } })).code).toBe(200);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('shows a user without write rights no upload or folder buttons, and hides entries by the rules', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await login(page, 'bob', 'bob-pass-1');
    await row(page, 'open.txt').waitFor();
    expect(await names(page)).toEqual(['public', 'secret', 'open.txt']);
    expect(await page.locator('button:has-text("New folder")').count()).toBe(0);
    expect(await page.locator('[data-testid=upload-input]').count()).toBe(1);
    expect(await page.locator('button:has-text("Files")').count()).toBe(0);
    await page.close();
  });

  it('asks for the folder password, refuses a wrong one and opens with the right one', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await login(page, 'bob', 'bob-pass-1');
    await row(page, 'secret').waitFor();
    await row(page, 'secret').locator('a').click();
    const pw = page.locator('input[name=folder-password]');
    await pw.waitFor();
    expect(await row(page, 'inside.txt').count()).toBe(0);
    await pw.fill('wrong');
    await page.click('button:has-text("Open")');
    await expect.poll(() => page.locator('[role=alert]').textContent()).toBe('Wrong password');
    expect(await row(page, 'inside.txt').count()).toBe(0);
    await expect.poll(() => pw.isVisible()).toBe(true);
    await screenshot(page, '30-folder-password');
    await pw.fill('open sesame');
    await page.click('button:has-text("Open")');
    await row(page, 'inside.txt').waitFor();
    // a file below it opens with the remembered password
    await row(page, 'inside.txt').locator('a').click();
    await expect.poll(() => page.locator('[data-testid=preview-text]').textContent()).toContain('classified');
    await page.close();
  });

  it('asks for the 2FA code after the password once 2FA is on', async () => {
    const bob = await s.login('bob', 'bob-pass-1');
    const { secret } = (await s.api('POST', '/api/auth/2fa/generate', { token: bob })).data;
    expect((await s.api('POST', '/api/auth/2fa/verify', { token: bob, body: { code: totpNow(secret), secret } })).code).toBe(200);
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await login(page, 'bob', 'bob-pass-1');
    const otp = page.locator('input[name=otp]');
    await otp.waitFor();
    await screenshot(page, '31-login-2fa');
    // the code of the next step: the one used to verify cannot be replayed
    await otp.fill(totpNow(secret, Date.now() + 30_000));
    await page.click('button[type=submit]');
    await row(page, 'open.txt').waitFor();
    await page.close();
  });

  it('lets visitors browse as the guest when the guest is enabled', async () => {
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: { role: number }) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false, base_path: '/public' } })).code).toBe(200);
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/`);
    await row(page, 'readme.txt').waitFor();
    expect(await names(page)).toEqual(['readme.txt']);
    expect(await page.locator('header a:has-text("Log in")').count()).toBe(1);
    expect(await page.locator('header a:has-text("Manage")').count()).toBe(0);
    await screenshot(page, '32-guest');
    await page.close();
  });
});
