import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { freePort } from '../helpers/process.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';
import { type Receiver, signedBy, startReceiver, until } from '../hooks/receiver.js';

const PHONE = { width: 390, height: 844 };

describe.runIf(requireChromium('the hooks manage page browser test'))('the Hooks manage page', () => {
  let w: WebSession;
  let rx: Receiver;
  const hooks = async () => (await w.s.api('GET', '/api/admin/hook/list', { token: w.admin })).data.content as Array<Record<string, any>>;

  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' }, undefined, { core: { hooks: { backoffMs: [30, 30, 30], pollMs: 30, flushMs: 10 } } });
    await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'url_fetch_allow_private', value: 'true' }] });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await w?.close();
  });

  it('creates a hook from the form (operations chosen by keyboard too), edits it keeping its secret', async () => {
    await w.page.goto(`${w.base}/@manage/hooks`);
    await w.page.locator('.section-head button.primary').click();
    const dialog = w.page.locator('.dialog');
    await dialog.locator('input[name=name]').fill('to-receiver');
    await dialog.locator('textarea[name=paths]').fill('/docs/**\n/inbox/*.txt');
    await dialog.locator('textarea[name=users]').fill('admin');
    // upload is ticked for a new hook; keep it, add mkdir with the keyboard
    expect(await dialog.locator('input[name=event-upload]').isChecked()).toBe(true);
    await dialog.locator('input[name=event-mkdir]').focus();
    await w.page.keyboard.press('Space');
    await dialog.locator('input[name=url]').fill(rx.url);
    await dialog.locator('input[name=secret]').fill('ui-secret');
    await dialog.locator('button[type=submit]').click();
    await expect.poll(async () => (await hooks()).length).toBe(1);
    const [h] = await hooks();
    expect(h).toMatchObject({ name: 'to-receiver', events: ['upload', 'mkdir'], paths: ['/docs/**', '/inbox/*.txt'], users: ['admin'], disabled: false, action: { type: 'http', url: rx.url, secret: '', secret_set: true } });
    const row = w.page.locator('table.data tbody tr').filter({ hasText: 'to-receiver' });
    await expect.poll(() => row.textContent()).toContain('upload, mkdir');

    // Edit: the secret field starts empty and says it keeps the secret.
    await row.locator('.actions-cell button', { hasText: 'Edit' }).click();
    expect(await dialog.locator('input[name=secret]').inputValue()).toBe('');
    expect(await dialog.textContent()).toContain('Leave empty to keep the secret');
    await dialog.locator('textarea[name=paths]').fill('/docs/**');
    await dialog.locator('button[type=submit]').click();
    await expect.poll(async () => (await hooks())[0]!.paths).toEqual(['/docs/**']);
    // the stored secret still signs
    expect((await w.s.api('POST', '/api/fs/mkdir', { token: w.admin, body: { path: '/docs/new' } })).code).toBe(200);
    const hit = await until(() => rx.hits[0], 5000, 'the POST');
    expect(signedBy(hit, 'ui-secret')).toBe(true);
    await screenshot(w.page, '90-hooks');
  });

  it("shows a hook's dead letters and sends one again", async () => {
    const port = await freePort();
    const made = await w.s.api('POST', '/api/admin/hook/create', { token: w.admin, body: { name: 'down', events: ['remove'], action: { type: 'http', url: `http://127.0.0.1:${port}/x`, secret: 's' } } });
    expect(made.code, made.message).toBe(200);
    w.s.core.events.emit({ time: Date.now(), user: 'admin', front: 'api', op: 'remove', path: '/docs/old.txt', result: 'ok' });
    await expect.poll(async () => (await hooks()).find((h) => h.name === 'down')?.dead, { timeout: 10_000 }).toBe(1);
    await w.page.reload();
    const row = w.page.locator('table.data tbody tr').filter({ hasText: 'down' });
    await row.locator('button', { hasText: 'Dead letters (1)' }).click();
    const dialog = w.page.locator('.dialog');
    await expect.poll(() => dialog.textContent()).toContain('/docs/old.txt');
    expect(await dialog.textContent()).toMatch(/ECONNREFUSED/);
    const late = await startReceiver(port);
    try {
      await dialog.locator('button', { hasText: 'Send again' }).first().click();
      await until(() => late.hits[0], 5000, 'the letter sent again');
      await expect.poll(() => dialog.textContent()).toContain('No dead letters');
    } finally {
      await late.close();
    }
    await w.page.keyboard.press('Escape');
    await expect.poll(() => row.locator('button', { hasText: 'Dead letters (0)' }).count()).toBe(1);
  });

  it('at phone width the hooks are cards that fit the screen', async () => {
    const phone = await w.browser.newPage({ viewport: PHONE });
    try {
      await phone.goto(`${w.base}/@login`);
      await phone.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
      await phone.goto(`${w.base}/@manage/hooks`);
      const rows = phone.locator('table.data tbody tr');
      await rows.first().waitFor();
      await phone.waitForTimeout(50);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      expect(await rows.last().locator('td[data-label]').count()).toBeGreaterThan(2);
      const del = (await rows.last().locator('.actions-cell :text-is("Delete")').boundingBox())!;
      expect(del.x + del.width).toBeLessThanOrEqual(PHONE.width);
      await screenshot(phone, '91-phone-hooks');
    } finally {
      await phone.close();
    }
  });
});
