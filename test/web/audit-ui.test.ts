import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpEvent } from '../../src/audit/events.js';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the audit log page browser tests'))('the Audit log manage page', () => {
  let w: WebSession;
  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
    const t = Date.now() - 3_600_000;
    const events: OpEvent[] = Array.from({ length: 60 }, (_, i) => ({ time: t + i * 1000, user: 'carol', front: 'webdav', op: 'upload', path: `/up/${i}.txt`, bytes: 2048, result: 'ok', ip: '10.1.2.3' }));
    events.push({ time: t + 90_000, user: 'mallory', front: 'sftp', op: 'remove', path: '/secret/plan.txt', result: 'Forbidden', ip: '10.6.6.6' });
    await w.s.core.repos.auditEvents.insert(events);
  });
  afterAll(() => w?.close());

  it('lists events newest first, filters from the keyboard, and pages', async () => {
    await w.page.goto(`${w.base}/@manage/audit`);
    const rows = w.page.locator('table.data tbody tr');
    await rows.first().waitFor();
    await w.page.locator('table.data tbody tr', { hasText: 'mallory' }).waitFor();
    // the page's own sign-in of the admin may come first; mallory's remove is the newest inserted
    const texts = await rows.allInnerTexts();
    expect(texts.findIndex((r) => r.includes('mallory'))).toBeLessThan(texts.findIndex((r) => r.includes('/up/59.txt')));
    expect(await rows.count()).toBe(50);

    // keyboard only: type the user, choose the result, submit with Enter
    await w.page.locator('input[name=audit-user]').focus();
    await w.page.keyboard.type('mallory');
    await w.page.locator('select[name=audit-result]').selectOption('Forbidden');
    await w.page.locator('input[name=audit-user]').press('Enter');
    await w.page.waitForFunction(() => document.querySelectorAll('table.data tbody tr').length === 1);
    expect(await rows.first().innerText()).toMatch(/mallory\s+sftp\s+remove\s+\/secret\/plan\.txt[\s\S]*Forbidden\s+10\.6\.6\.6/);
    await screenshot(w.page, '92-audit-filtered');

    await w.page.getByRole('button', { name: 'Clear' }).click();
    await w.page.locator('input[name=audit-path]').fill('/up');
    await w.page.getByRole('button', { name: 'Apply filters' }).click();
    await w.page.getByText('Page 1 of 2 (60 events)').waitFor();
    await w.page.getByRole('button', { name: 'Next page' }).click();
    await w.page.getByText('Page 2 of 2 (60 events)').waitFor();
    expect(await rows.count()).toBe(10);
    expect(await rows.last().innerText()).toContain('/up/0.txt');
    expect(await w.page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
  });

  it('shows every event as a card with named fields at phone width', async () => {
    const phone = await w.browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto(`${w.base}/@login`);
    await phone.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await phone.goto(`${w.base}/@manage/audit`);
    const row = phone.locator('table.data tbody tr', { hasText: 'mallory' });
    await row.waitFor();
    await phone.waitForTimeout(50);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await row.locator('td[data-label]').count()).toBe(9);
    await screenshot(phone, '93-phone-audit');
    await phone.close();
  });
});
