// OpenList's own front end (npm @openlist-frontend/openlist-frontend 4.2.6, served through
// dist_dir) signing in and binding with single sign-on against Atrium and a real OpenID provider
// (npm oidc-provider) on loopback: the popup, the postMessage it listens for, and the
// POST /api/me/update it makes with the sso_id it receives.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { listenLoopback } from '../helpers/http.js';
import { atProvider, type OidcPeer, startOidcProvider } from '../helpers/oidc.js';
import { startServer, type TestServer } from '../helpers/server.js';

const DIST = path.resolve('node_modules/@openlist-frontend/openlist-frontend/dist');

describe.runIf(requireChromium('the OpenList front end single sign-on test'))('single sign-on from the OpenList 4.2.6 front end', () => {
  let s: TestServer;
  let op: OidcPeer;
  let base: string;
  let browser: Browser;
  let page: Page;
  let admin: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!, { config: { dist_dir: DIST } });
    admin = await s.login();
    base = await listenLoopback(s.app);
    op = await startOidcProvider([`${base}/api/auth/sso_callback?method=sso_get_token`, `${base}/api/auth/sso_callback?method=get_sso_id`], {
      'dana-sub': { name: 'Dana D.', preferred_username: 'dana' },
    });
    const items = { sso_login_enabled: 'true', sso_login_platform: 'OIDC', sso_endpoint_name: op.issuer, sso_client_id: op.clientId, sso_client_secret: op.clientSecret };
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: Object.entries(items).map(([key, value]) => ({ key, value })) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'dana', password: 'dana-pass-1', permission: 1 } })).code).toBe(200);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await op?.close();
    await s?.destroy();
  });

  it('binds from its profile page: the ticket it posts to /api/me/update binds the identity', async () => {
    await page.goto(`${base}/@login`);
    await page.evaluate((t) => localStorage.setItem('token', t), await s.login('dana', 'dana-pass-1'));
    await page.goto(`${base}/@manage`);
    const connect = page.getByRole('button', { name: 'Connect to Single Sign-On Platform' });
    const [popup] = await Promise.all([page.waitForEvent('popup'), connect.click()]);
    await atProvider(popup, 'dana-sub');
    await page.getByRole('button', { name: 'Disconnect from Single Sign-On Platform' }).waitFor();
    await expect.poll(async () => (await s.core.repos.users.byUsername('dana'))!.ssoId).toBe('dana-sub');
  });

  it('signs in with the SSO icon of its login page', async () => {
    await page.evaluate(() => localStorage.removeItem('token'));
    await page.goto(`${base}/@login`);
    await page.getByPlaceholder(/username/i).waitFor();
    // The icon after the language and colour-mode switches (OpenList renders the SSO icon last).
    const icons = page.locator('svg[cursor=pointer], svg.hope-icon').filter({ visible: true });
    const popupPromise = page.waitForEvent('popup');
    let popup: Page | undefined;
    for (let i = (await icons.count()) - 1; i >= 0 && !popup; i--) {
      await icons.nth(i).click();
      popup = await Promise.race([popupPromise, new Promise<undefined>((r) => setTimeout(() => r(undefined), 1500))]);
    }
    expect(popup, 'no popup opened from the login page icons').toBeTruthy();
    await atProvider(popup!, 'dana-sub');
    await page.waitForURL(`${base}/`);
    const me = await page.evaluate(async () => (await (await fetch('/api/me', { headers: { authorization: localStorage.getItem('token') ?? '' } })).json()).data.username);
    expect(me).toBe('dana');
  });
});
