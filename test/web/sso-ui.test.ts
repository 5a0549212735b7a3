// Single sign-on in chromium against a real OpenID provider (npm oidc-provider) on loopback:
// binding on the profile page, the SSO button of the login page (popup and compatibility mode),
// unbinding.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { atProvider, type OidcPeer, startOidcProvider } from '../helpers/oidc.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the single sign-on browser test'))('single sign-on in the web UI', () => {
  let w: WebSession;
  let op: OidcPeer;
  let dana: string;
  const save = async (items: Record<string, string>) => {
    const r = await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: Object.entries(items).map(([key, value]) => ({ key, value })) });
    expect(r.code, r.message).toBe(200);
  };
  const signedInAs = () => w.page.evaluate(async () => {
    const r = await fetch('/api/me', { headers: { authorization: localStorage.getItem('token') ?? '' } });
    return ((await r.json()) as { data?: { username?: string } }).data?.username;
  });

  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
    op = await startOidcProvider(
      [`${w.base}/api/auth/sso_callback?method=sso_get_token`, `${w.base}/api/auth/sso_callback?method=get_sso_id`, `${w.base}/api/auth/sso_get_token`, `${w.base}/api/auth/get_sso_id`],
      { 'dana-sub': { name: 'Dana D.', preferred_username: 'dana' } },
    );
    await save({ sso_login_enabled: 'true', sso_login_platform: 'OIDC', sso_endpoint_name: op.issuer, sso_client_id: op.clientId, sso_client_secret: op.clientSecret });
    expect((await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'dana', password: 'dana-pass-1', permission: 1 } })).code).toBe(200);
    dana = await w.s.login('dana', 'dana-pass-1');
  });
  afterAll(async () => {
    await op?.close();
    await w?.close();
  });

  it('binds the identity from the profile page through the provider popup', async () => {
    await w.page.evaluate((t) => localStorage.setItem('token', t), dana);
    await w.page.goto(`${w.base}/@manage/profile`);
    const card = w.page.locator('[data-testid=sso]');
    const [popup] = await Promise.all([w.page.waitForEvent('popup'), card.locator('button[name=sso-bind]').click()]);
    expect(popup.url().startsWith(`${op.issuer}/`)).toBe(true);
    await atProvider(popup, 'dana-sub');
    await card.locator('button[name=sso-unbind]').waitFor();
    expect((await w.s.core.repos.users.byUsername('dana'))!.ssoId).toBe('dana-sub');
    await screenshot(w.page, '80-sso-profile');
  });

  it('the login page shows the SSO button; a click signs the bound account in', async () => {
    await w.page.evaluate(() => localStorage.removeItem('token'));
    await w.page.goto(`${w.base}/@login`);
    const button = w.page.locator('button[name=sso]');
    expect(await button.textContent()).toBe('Sign in with SSO');
    await screenshot(w.page, '81-sso-login');
    const [popup] = await Promise.all([w.page.waitForEvent('popup'), button.click()]);
    await atProvider(popup, 'dana-sub');
    await w.page.waitForURL(`${w.base}/`);
    expect(await signedInAs()).toBe('dana');
  });

  it('compatibility mode: the page itself goes to the provider and comes back signed in, the token out of the address', async () => {
    await save({ sso_compatibility_mode: 'true' });
    try {
      await w.page.evaluate(() => localStorage.removeItem('token'));
      await w.page.goto(`${w.base}/@login`);
      await w.page.locator('button[name=sso]').click();
      await w.page.waitForURL(`${w.base}/`, { timeout: 15_000 }).catch(async () => atProvider(w.page, 'dana-sub'));
      await w.page.waitForURL(`${w.base}/`);
      expect(w.page.url()).not.toContain('token=');
      expect(await signedInAs()).toBe('dana');
    } finally {
      await save({ sso_compatibility_mode: 'false' });
    }
  });

  it('unbinds from the profile page; the button is gone when SSO is off', async () => {
    await w.page.goto(`${w.base}/@manage/profile`);
    const card = w.page.locator('[data-testid=sso]');
    await card.locator('button[name=sso-unbind]').click();
    await w.page.locator('.dialog button.danger').click();
    await card.locator('button[name=sso-bind]').waitFor();
    expect((await w.s.core.repos.users.byUsername('dana'))!.ssoId).toBe('');
    // The unbound identity no longer signs in: the provider's window says why, and so does the login page.
    await w.page.evaluate(() => localStorage.removeItem('token'));
    await w.page.goto(`${w.base}/@login`);
    const [popup] = await Promise.all([w.page.waitForEvent('popup'), w.page.locator('button[name=sso]').click()]);
    void atProvider(popup, 'dana-sub').catch(() => undefined);
    await expect.poll(() => w.page.locator('.login .error').textContent()).toMatch(/no account is bound to this single sign-on identity/);
    expect(await popup.locator('body').textContent()).toMatch(/Single sign-on failed: no account is bound/);
    await popup.close();
    expect(await w.page.evaluate(() => localStorage.getItem('token'))).toBeNull();
    await save({ sso_login_enabled: 'false' });
    await w.page.evaluate(() => localStorage.removeItem('token'));
    await w.page.goto(`${w.base}/@login`);
    await w.page.locator('input[name=username]').waitFor();
    expect(await w.page.locator('button[name=sso]').count()).toBe(0);
  });
});
