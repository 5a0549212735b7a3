// The Trash page (issue #42, its web part): reached from a folder's toolbar, it lists what was
// deleted on that folder's storage (a user: their own; an admin: all), restores where it was or
// into a chosen folder (a name already taken is asked about: replace or skip), deletes for good;
// checked on disk, by keyboard, at phone width as cards, and in German.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRASH_DIR } from '../../src/fs/trash.js';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { localStorage } from '../helpers/files.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };
const PASS = 'alice-pass-1';

describe.runIf(requireChromium('the trash page browser tests'))('the Trash page', () => {
  let w: WebSession;
  const disk = (rel: string) => path.join(w.root, rel);
  /** Names inside the storage's trash folder on disk. */
  const trashedNames = () => (existsSync(disk(TRASH_DIR)) ? readdirSync(disk(TRASH_DIR)).flatMap((id) => readdirSync(disk(`${TRASH_DIR}/${id}`))) : []);
  const remove = (dir: string, names: string[], token = w.admin) => w.s.api('POST', '/api/fs/remove', { token, body: { dir, names } });
  const rows = (page: Page = w.page) => page.locator('[data-testid=trash-row]');
  const restoreBodies: unknown[] = [];

  beforeAll(async () => {
    w = await openWebSession({
      'docs/a.txt': 'a bytes',
      'docs/b.txt': 'b bytes',
      'docs/c.txt': 'old c',
      'docs/sub/inner.txt': 'inner',
      'docs/keep.txt': 'keep',
      'other/x.txt': 'x',
      'alice/mine.txt': 'mine',
    });
    const def = (await w.s.api('GET', '/api/admin/storage/list', { token: w.admin })).data.content[0];
    expect((await w.s.api('POST', '/api/admin/storage/update', { token: w.admin, body: { ...def, ...localStorage('/', w.root, { trash: 'on' }) } })).code).toBe(200);
    // read, write, rename, move, copy, remove
    expect((await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'alice', password: PASS, base_path: '/', permission: 0xff } })).code).toBe(200);
    w.page.on('request', (r: Request) => r.url().endsWith('/api/fs/trash/restore') && restoreBodies.push(r.postDataJSON()));
  });
  afterAll(() => w?.close());

  it("is reached from the folder's toolbar and lists what was deleted there", async () => {
    expect((await remove('/docs', ['a.txt', 'sub'])).code).toBe(200);
    expect(existsSync(disk('docs/a.txt'))).toBe(false);
    await w.page.goto(`${w.base}/docs`);
    await w.row('b.txt').waitFor();
    // a delete from the file list goes to the trash too
    await w.row('b.txt').locator('input[type=checkbox]').check();
    await w.page.click('.selection-bar [data-action=delete]');
    await w.page.click('.dialog button.danger');
    await w.row('b.txt').waitFor({ state: 'detached' });
    expect(trashedNames().sort()).toEqual(['a.txt', 'b.txt', 'sub']);
    await w.page.click('[data-testid=trash-link]');
    await w.page.waitForURL(/\/@trash\/docs$/);
    await rows().first().waitFor();
    // newest first
    const names = await rows().evaluateAll((rs) => rs.map((r) => r.getAttribute('data-name')));
    expect(names[0]).toBe('b.txt');
    expect(names.slice(1).sort()).toEqual(['a.txt', 'sub']);
    const a = rows().and(w.page.locator('[data-name="a.txt"]'));
    expect(await a.locator('td').nth(2).innerText()).toBe('/docs');
    expect(await a.locator('td').nth(5).innerText()).toBe('admin');
    expect(await w.page.title()).toMatch(/^Trash \| /);
    await screenshot(w.page, '42-trash-desktop');
  });

  it('restores where it was, with the same bytes, and deletes for good', async () => {
    await w.page.goto(`${w.base}/@trash/docs`);
    await rows().first().waitFor();
    await rows().and(w.page.locator('[data-name="a.txt"]')).locator('[data-action=restore]').click();
    await rows().and(w.page.locator('[data-name="a.txt"]')).waitFor({ state: 'detached' });
    expect(readFileSync(disk('docs/a.txt'), 'utf8')).toBe('a bytes');
    expect(restoreBodies.at(-1)).toMatchObject({ conflict_policy: 'cancel' });
    await rows().and(w.page.locator('[data-name="b.txt"]')).locator('[data-action=purge]').click();
    await w.page.click('.dialog button.danger');
    await rows().and(w.page.locator('[data-name="b.txt"]')).waitFor({ state: 'detached' });
    expect(trashedNames()).toEqual(['sub']);
    expect(existsSync(disk('docs/b.txt'))).toBe(false);
  });

  it('asks about a name already taken: skip keeps what is there, replace puts the old one back', async () => {
    expect((await remove('/docs', ['c.txt'])).code).toBe(200);
    writeFileSync(disk('docs/c.txt'), 'new c');
    await w.page.goto(`${w.base}/@trash/docs`);
    const c = () => rows().and(w.page.locator('[data-name="c.txt"]'));
    await c().locator('[data-action=restore]').click();
    await w.page.locator('.dialog :text("Names already taken")').waitFor();
    expect(await w.page.locator('.dialog p').innerText()).toContain('/docs/c.txt');
    await w.page.click('.dialog [data-policy=skip]');
    await w.page.locator('.toast:has-text("Restored 0 of 1")').waitFor();
    expect(restoreBodies.at(-1)).toMatchObject({ conflict_policy: 'skip' });
    expect(readFileSync(disk('docs/c.txt'), 'utf8')).toBe('new c');
    await c().locator('[data-action=restore]').click();
    await w.page.click('.dialog [data-policy=overwrite]');
    await w.page.locator('.toast:has-text("Restored 1 of 1")').waitFor();
    expect(restoreBodies.at(-1)).toMatchObject({ conflict_policy: 'overwrite' });
    expect(readFileSync(disk('docs/c.txt'), 'utf8')).toBe('old c');
    // what was there went into the trash in its turn
    await c().waitFor();
    expect(trashedNames().sort()).toEqual(['c.txt', 'sub']);
    // Cancel asks nothing of the server
    const before = restoreBodies.length;
    await c().locator('[data-action=restore]').click();
    await w.page.click('.dialog button:text-is("Cancel")');
    await w.page.waitForTimeout(200);
    expect(restoreBodies.length).toBe(before);
  });

  it('restores a selection into a chosen folder', async () => {
    await w.page.goto(`${w.base}/@trash/docs`);
    await rows().first().waitFor();
    await w.page.check('[data-testid=trash-select-all]');
    expect(await w.page.locator('[data-testid=trash-selected]').innerText()).toBe('2 selected');
    await w.page.click('[data-action=restore-selected-to]');
    await w.page.click('.dialog button[data-path="/other"]');
    await w.page.click('.dialog button.primary');
    await w.page.locator('[data-testid=trash-empty]').waitFor();
    expect(restoreBodies.at(-1)).toMatchObject({ dst_dir: '/other' });
    expect(readFileSync(disk('other/c.txt'), 'utf8')).toBe('new c');
    expect(readFileSync(disk('other/sub/inner.txt'), 'utf8')).toBe('inner');
    expect(trashedNames()).toEqual([]);
  });

  it('shows a user only what they deleted', async () => {
    expect((await remove('/docs', ['keep.txt'])).code).toBe(200);
    const alice = await w.s.login('alice', PASS);
    expect((await remove('/alice', ['mine.txt'], alice)).code).toBe(200);
    const ctx = await w.browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), alice);
    await page.goto(`${w.base}/alice`);
    await page.locator('[data-testid=trash-link]').click();
    await rows(page).first().waitFor();
    expect(await rows(page).evaluateAll((rs) => rs.map((r) => r.getAttribute('data-name')))).toEqual(['mine.txt']);
    await ctx.close();
    // the admin sees both
    await w.page.goto(`${w.base}/@trash`);
    await rows().nth(1).waitFor();
    expect((await rows().evaluateAll((rs) => rs.map((r) => r.getAttribute('data-name')))).sort()).toEqual(['keep.txt', 'mine.txt']);
  });

  it('is keyboard reachable: Tab to a row, Space selects, Enter restores', async () => {
    await w.page.goto(`${w.base}/@trash`);
    await rows().first().waitFor();
    const focused = () => w.page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return `${el?.getAttribute('data-action') ?? ''}|${el?.getAttribute('aria-label') ?? ''}|${el?.closest('tr')?.getAttribute('data-name') ?? ''}`;
    });
    let at = '';
    for (let i = 0; i < 30 && !at.startsWith('|Select keep.txt'); i++) {
      await w.page.keyboard.press('Tab');
      at = await focused();
    }
    expect(at).toBe('|Select keep.txt|keep.txt');
    await w.page.keyboard.press('Space');
    await w.page.locator('[data-testid=trash-selected]').waitFor();
    for (let i = 0; i < 10 && !at.startsWith('restore|'); i++) {
      await w.page.keyboard.press('Tab');
      at = await focused();
    }
    expect(at).toBe('restore||keep.txt');
    await w.page.keyboard.press('Enter');
    await rows().and(w.page.locator('[data-name="keep.txt"]')).waitFor({ state: 'detached' });
    expect(readFileSync(disk('docs/keep.txt'), 'utf8')).toBe('keep');
  });

  it('at phone width: cards with their buttons on screen, nothing wider than the screen', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await page.goto(`${w.base}/@trash/alice`);
    await rows(page).first().waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    expect(await page.locator('table.data thead').isVisible()).toBe(false);
    expect(await rows(page).first().locator('td[data-label]').count()).toBeGreaterThan(5);
    for (const action of ['restore', 'restore-to', 'purge']) {
      const box = (await rows(page).first().locator(`[data-action=${action}]`).boundingBox())!;
      expect(box.x, action).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, action).toBeLessThanOrEqual(PHONE.width);
    }
    await screenshot(page, '42-trash-phone');
    // and in German
    await page.evaluate(() => window.localStorage.setItem('lang', 'de'));
    await page.goto(`${w.base}/@trash/alice`);
    await rows(page).first().waitFor();
    expect(await page.locator('main.trash h1').innerText()).toBe('Papierkorb');
    expect(await rows(page).first().locator('[data-action=purge]').innerText()).toBe('Endgültig löschen');
    await ctx.close();
  });
});
