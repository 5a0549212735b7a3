import path from 'node:path';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { listenLoopback } from '../helpers/http.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';

const DIST = path.resolve('node_modules/@openlist-frontend/openlist-frontend/dist');

/**
 * OpenList's own front end (4.2.6, through `dist_dir`) adds a passkey on its profile page and signs
 * in with it, in chromium with the DevTools virtual authenticator: the wire of /api/authn/* as
 * that front end speaks it (options as JSON for parse*OptionsFromJSON, the `session` header,
 * `?username=` on the login calls).
 */
describe.runIf(requireChromium('the OpenList front end with passkeys'))('passkeys through the OpenList 4.2.6 front end', () => {
  let s: TestServer;
  let admin: string;
  let base: string;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!, { config: { dist_dir: DIST } });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'webauthn_login_enabled', value: 'true' }] })).code).toBe(200);
    base = (await listenLoopback(s.app)).replace('127.0.0.1', 'localhost');
    browser = await launchChromium();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    cdp = await ctx.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
  });

  /** /api/authn answers the page received, in order. */
  const authn: Array<{ path: string; query: string; code: number; message: string }> = [];
  const adminId = async () => (await s.core.repos.users.byUsername('admin'))!.id;

  it("adds a passkey from OpenList's profile page", async () => {
    // Each answer is read on its way to the page (a page that moves on may drop bodies it got).
    await page.route(
      (u) => u.pathname.startsWith('/api/authn/'),
      async (route) => {
        const res = await route.fetch();
        const text = await res.text();
        const body = JSON.parse(text);
        const u = new URL(route.request().url());
        authn.push({ path: u.pathname, query: u.search, code: body.code, message: body.message });
        await route.fulfill({ response: res, body: text });
      },
    );
    await page.goto(`${base}/@login`);
    await page.getByPlaceholder(/username/i).fill('admin');
    await page.getByPlaceholder(/password/i).fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Login' }).click();
    await page.waitForURL(`${base}/`);
    await page.goto(`${base}/@manage`);
    await page.getByRole('button', { name: 'Add a WebAuthn credential' }).click();
    await expect.poll(async () => (await s.core.repos.webauthn.ofUser(await adminId())).length).toBe(1);
    await page.reload();
    await page.getByText(/^Fingerprint: 01 02 03/).first().waitFor();
    await screenshot(page, 'ol-pk-profile');
    expect(authn.map((a) => `${a.path} ${a.code}`)).toEqual(
      expect.arrayContaining(['/api/authn/getcredentials 200', '/api/authn/webauthn_begin_registration 200', '/api/authn/webauthn_finish_registration 200']),
    );
  });

  it('opening its login page signs in with the passkey through conditional mediation (no user name)', async () => {
    await page.evaluate(() => window.localStorage.removeItem('token'));
    const before = authn.length;
    const counter = (await s.core.repos.webauthn.ofUser(await adminId()))[0]!.signCount;
    await page.goto(`${base}/@login`);
    // the front end asks for a passkey as the page opens; the virtual authenticator answers at once
    await page.waitForURL(`${base}/`);
    const token = await page.evaluate(() => window.localStorage.getItem('token'));
    expect((await s.api('GET', '/api/me', { token: token! })).data.username).toBe('admin');
    expect(authn.slice(before).map((a) => `${a.path} ${a.code}`)).toEqual(['/api/authn/webauthn_begin_login 200', '/api/authn/webauthn_finish_login 200']);
    expect((await s.core.repos.webauthn.ofUser(await adminId()))[0]!.signCount).toBeGreaterThan(counter);
  });

  it('signs in with the user name and the passkey switch of its login form', async () => {
    // without conditional mediation the page waits for the form
    await page.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    await page.evaluate(() => window.localStorage.removeItem('token'));
    await page.goto(`${base}/@login`);
    await page.getByPlaceholder(/username/i).fill('admin');
    // the fingerprint icon switches the form to passkey sign-in (the password field goes)
    await page.locator('path[d^="M63.28 202"]').locator('xpath=..').click();
    await page.getByPlaceholder(/password/i).waitFor({ state: 'detached' });
    const before = authn.length;
    const counter = (await s.core.repos.webauthn.ofUser(await adminId()))[0]!.signCount;
    await page.getByRole('button', { name: 'Login' }).click();
    await page.waitForURL(`${base}/`);
    const token = await page.evaluate(() => window.localStorage.getItem('token'));
    expect((await s.api('GET', '/api/me', { token: token! })).data.username).toBe('admin');
    expect(authn.slice(before).map((a) => `${a.path} ${a.code}`)).toEqual(['/api/authn/webauthn_begin_login 200', '/api/authn/webauthn_finish_login 200']);
    expect((await s.core.repos.webauthn.ofUser(await adminId()))[0]!.signCount).toBeGreaterThan(counter);
    expect(authn.slice(before).map((a) => a.query)).toEqual(['?username=admin', '?username=admin']);
    // no /api/authn answer other than 200 reached the page in the whole walk
    expect(authn.filter((a) => a.code !== 200)).toEqual([]);
  });
});
