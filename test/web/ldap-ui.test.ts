import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from '../helpers/browser.js';
import { hasSlapd, LDAP_BASE, LDAP_MANAGER_DN, LDAP_MANAGER_PASSWORD, type Slapd, startSlapd } from '../helpers/slapd.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the LDAP login page test') && hasSlapd())('LDAP on the login page', () => {
  let w: WebSession;
  let dir: Slapd;
  beforeAll(async () => {
    dir = await startSlapd({ dana: 'dana-dir-pw' });
    w = await openWebSession({ 'a.txt': 'a' });
  });
  afterAll(async () => {
    await w?.close();
    await dir?.stop();
  });

  it('shows the LDAP toggle only when enabled, with the configured hint, and signs in through the directory', async () => {
    const ctx = await w.browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.locator('input[name=username]').waitFor();
    expect(await page.locator('input[name=ldap]').count()).toBe(0);

    const settings = { ldap_login_enabled: 'true', ldap_login_tips: 'Company account', ldap_server: dir.url, ldap_manager_dn: LDAP_MANAGER_DN, ldap_manager_password: LDAP_MANAGER_PASSWORD, ldap_user_search_base: LDAP_BASE };
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: Object.entries(settings).map(([key, value]) => ({ key, value })) })).code).toBe(200);
    await page.reload();
    const toggle = page.locator('label:has(input[name=ldap])');
    expect((await toggle.textContent())?.trim()).toBe('Company account');
    await page.fill('input[name=username]', 'dana');
    await page.fill('input[name=password]', 'wrong');
    await page.check('input[name=ldap]');
    await page.click('button[type=submit]');
    await expect.poll(() => page.locator('[role=alert]').textContent()).toBe('password is incorrect');
    await page.fill('input[name=password]', 'dana-dir-pw');
    await page.click('button[type=submit]');
    await page.waitForURL((u) => !u.pathname.startsWith('/@login'));
    expect((await w.s.core.repos.users.byUsername('dana'))?.allowLdap).toBe(true);
    await ctx.close();
  });

  it('the user dialog sets allow_ldap (on by default)', async () => {
    await w.page.goto(`${w.base}/@manage/users`);
    await w.page.click('button:has-text("Add")');
    await w.page.fill('.dialog input[name=username]', 'erin');
    await w.page.fill('.dialog input[name=password]', 'erin-pass-1');
    const allow = w.page.locator('.dialog input[name=allow_ldap]');
    expect(await allow.isChecked()).toBe(true);
    await allow.uncheck();
    await w.page.click('.dialog button[type=submit]');
    await w.page.locator('td', { hasText: 'erin' }).waitFor();
    expect((await w.s.core.repos.users.byUsername('erin'))?.allowLdap).toBe(false);
  });
});
