import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the app-password profile browser test'))('app passwords in the profile page', () => {
  let w: WebSession;
  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
  });
  afterAll(() => w?.close());

  it('creates one (secret shown once, and it opens the protocols), lists it, revokes it', async () => {
    await w.page.goto(`${w.base}/@manage/profile`);
    const card = w.page.locator('[data-testid=app-passwords]');
    await card.locator('input[name=name]').fill('phone');
    await card.locator('button[type=submit]').click();
    const secret = (await card.locator('[data-testid=app-password-secret]').textContent())!;
    expect(secret).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await w.s.core.accounts.checkPassword('admin', secret, '127.0.0.5')).username).toBe('admin');
    await w.page.reload();
    const rows = card.locator('tbody tr');
    // an empty table shows one placeholder row ("—") while loading: wait for the password's own row
    await expect.poll(() => rows.first().locator('td').first().textContent()).toBe('phone');
    expect(await rows.count()).toBe(1);
    // name, added, last used (a date now, not "Never")
    const cells = (await rows.first().locator('td').allTextContents()).slice(0, 3);
    expect(cells[0]).toBe('phone');
    expect(cells[2]).not.toBe('Never');
    expect(cells[2]).not.toBe('');
    await card.scrollIntoViewIfNeeded();
    await screenshot(w.page, '70-app-passwords');
    // a fresh page no longer shows the secret
    expect(await card.locator('[data-testid=app-password-secret]').count()).toBe(0);
    await card.locator('tbody tr button.danger').click();
    await w.page.locator('.dialog button.danger').click();
    await expect.poll(() => card.locator('tbody tr button.danger').count()).toBe(0);
    await expect.poll(async () => (await w.s.api('GET', '/api/me/app_password/list', { token: await w.s.login('admin', ADMIN_PASSWORD) })).data.total).toBe(0);
    await expect(w.s.core.accounts.checkPassword('admin', secret, '127.0.0.5')).rejects.toThrow('password is incorrect');
  });
});
