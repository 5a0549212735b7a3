import type { CDPSession } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

/**
 * Passkeys in chromium with the DevTools virtual authenticator (CDP WebAuthn domain): register on
 * the profile page, sign in with it on the login page, a cloned authenticator (counter moved
 * back) refused, delete, and the deleted passkey refused. The page is opened at localhost:
 * browsers accept no IP address as a relying party.
 */
describe.runIf(requireChromium('the passkey browser test'))('passkeys in the web UI', () => {
  let w: WebSession;
  let base: string;
  let cdp: CDPSession;
  let authenticatorId: string;

  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'webauthn_login_enabled', value: 'true' }] })).code).toBe(200);
    base = w.base.replace('127.0.0.1', 'localhost');
    cdp = await w.ctx.newCDPSession(w.page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
  });
  afterAll(() => w?.close());

  const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  const adminId = async () => (await w.s.core.repos.users.byUsername('admin'))!.id;
  const signOut = async () => {
    await w.page.goto(`${base}/@login`);
    await w.page.evaluate(() => window.localStorage.removeItem('token'));
    await w.page.reload();
  };

  it('registers a passkey on the profile page', async () => {
    await w.page.goto(`${base}/@login`);
    await w.page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await w.page.goto(`${base}/@manage/profile`);
    const card = w.page.locator('[data-testid=passkeys]');
    await card.locator('[data-testid=passkey-add]').click();
    const rows = card.locator('tbody tr');
    // an empty table shows one placeholder row ("—"): wait for the passkey's own row
    await expect.poll(() => rows.first().locator('td').first().textContent()).toBe('Passkey 1');
    expect(await rows.count()).toBe(1);
    // the authenticator holds a discoverable credential for localhost, the server its public key
    const held = await credentials();
    expect(held).toHaveLength(1);
    expect(held[0]!.isResidentCredential).toBe(true);
    expect(held[0]!.rpId).toBe('localhost');
    const stored = await w.s.core.repos.webauthn.ofUser(await adminId());
    expect(stored).toHaveLength(1);
    expect(Buffer.from(stored[0]!.credentialId, 'base64url').equals(Buffer.from(held[0]!.credentialId, 'base64'))).toBe(true);
    await card.scrollIntoViewIfNeeded();
    await screenshot(w.page, '72-passkeys');
  });

  it('signs in with it on the login page, and the counters agree', async () => {
    await signOut();
    await screenshot(w.page, '73-passkey-login');
    await w.page.locator('[data-testid=passkey-login]').click();
    await w.page.waitForURL((u) => !u.pathname.startsWith('/@login'));
    const token = await w.page.evaluate(() => window.localStorage.getItem('token'));
    expect(token).toBeTruthy();
    expect((await w.s.api('GET', '/api/me', { token: token! })).data.username).toBe('admin');
    const [held] = await credentials();
    const [stored] = await w.s.core.repos.webauthn.ofUser(await adminId());
    expect(held!.signCount).toBeGreaterThan(0);
    expect(stored!.signCount).toBe(held!.signCount);
    expect(stored!.lastUsedTime).toBeGreaterThan(0);
  });

  it('refuses a clone of the authenticator whose counter is behind', async () => {
    const [held] = await credentials();
    const stored = (await w.s.core.repos.webauthn.ofUser(await adminId()))[0]!.signCount;
    // the same key on a "second device" that has signed less often
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: held!.credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...held!, signCount: 0 } });
    await signOut();
    await w.page.locator('[data-testid=passkey-login]').click();
    await expect.poll(() => w.page.locator('[role=alert]').textContent()).toBe('passkey signature counter did not advance');
    expect(await w.page.evaluate(() => window.localStorage.getItem('token'))).toBeNull();
    expect((await w.s.core.repos.webauthn.ofUser(await adminId()))[0]!.signCount).toBe(stored);
  });

  it('deletes it on the profile page; it no longer signs in', async () => {
    await w.page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await w.page.goto(`${base}/@manage/profile`);
    const card = w.page.locator('[data-testid=passkeys]');
    await card.locator('tbody tr button.danger').click();
    await w.page.locator('.dialog button.danger').click();
    await expect.poll(() => card.locator('tbody tr button.danger').count()).toBe(0);
    expect(await w.s.core.repos.webauthn.ofUser(await adminId())).toEqual([]);
    // the authenticator still holds it (as a phone would); the server refuses it
    expect(await credentials()).toHaveLength(1);
    await signOut();
    await w.page.locator('[data-testid=passkey-login]').click();
    await expect.poll(() => w.page.locator('[role=alert]').textContent()).toMatch(/not registered/);
    expect(await w.page.evaluate(() => window.localStorage.getItem('token'))).toBeNull();
  });
});
