import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the S3 access key profile browser test'))('S3 access keys in the profile page', () => {
  let w: WebSession;
  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
  });
  afterAll(() => w?.close());

  it('creates one (id and secret shown once), lists it, deletes it after asking', async () => {
    await w.page.goto(`${w.base}/@manage/profile`);
    const card = w.page.locator('[data-testid=s3-keys]');
    await card.locator('input[name=title]').fill('backup box');
    await card.locator('button[type=submit]').click();
    const shown = card.locator('p.muted code');
    await expect.poll(() => shown.count()).toBe(2);
    const [id, secret] = await shown.allTextContents();
    const listed = (await w.s.api('GET', '/api/me/s3key/list', { token: w.admin })).data.content;
    expect(listed).toMatchObject([{ title: 'backup box', access_key_id: id }]);
    expect(secret!.length).toBeGreaterThan(16);
    // the form cleared, and the table shows the key by title and id
    expect(await card.locator('input[name=title]').inputValue()).toBe('');
    const row = card.locator('tbody tr').filter({ hasText: 'backup box' });
    await expect.poll(() => row.locator('td code').textContent()).toBe(id);

    await w.page.reload();
    // a fresh page no longer shows the secret
    await expect.poll(() => row.count()).toBe(1);
    expect(await card.locator('p.muted code').count()).toBe(0);
    // Delete asks first, naming the key; Cancel keeps it
    await row.locator('button.danger').click();
    await expect.poll(() => w.page.locator('.dialog').textContent()).toContain('backup box?');
    await w.page.locator('.dialog button:not(.danger)').first().click();
    await expect.poll(() => w.page.locator('.dialog').count()).toBe(0);
    expect(await row.count()).toBe(1);
    expect((await w.s.api('GET', '/api/me/s3key/list', { token: w.admin })).data.content).toHaveLength(1);
    await row.locator('button.danger').click();
    await w.page.locator('.dialog button.danger').click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await w.s.api('GET', '/api/me/s3key/list', { token: w.admin })).data.content ?? []).toEqual([]);
  });
});
