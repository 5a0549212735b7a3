import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, savedDownload, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const waitFor = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check(), what).toBe(true);
};

describe.runIf(requireChromium('the context menu browser tests'))('context menu on files and folders', () => {
  let w: WebSession;
  const menu = () => w.page.locator('[data-testid=context-menu]');
  const actions = () => menu().locator('[role=menuitem]').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.action));
  const choose = (action: string) => menu().locator(`[data-action=${action}]`).click();
  const disk = (...p: string[]) => path.join(w.root, ...p);

  beforeAll(async () => {
    w = await openWebSession({ 'work/a.txt': 'alpha', 'work/b.txt': 'bravo', 'work/c.txt': 'charlie', 'work/sub/inner.txt': 'in', 'work/target/': '' });
    await w.ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.base });
  });
  afterAll(() => w?.close());

  it('opens on right click with every action for a file, and none of the browser menu', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.row('a.txt').click({ button: 'right' });
    expect(await actions()).toEqual(['open', 'edit', 'download', 'rename', 'move', 'copy', 'copy_link', 'share', 'qr', 'delete']);
    expect(await menu().getAttribute('aria-label')).toBe('Actions for a.txt');
    // the menu takes the focus: a keyboard user can act at once
    expect(await w.page.evaluate(() => (document.activeElement as HTMLElement).dataset.action)).toBe('open');
    await screenshot(w.page, '60-context-menu');
    await w.page.keyboard.press('Escape');
    await expect.poll(() => menu().count()).toBe(0);
  });

  it('offers folder actions without download or link for a folder', async () => {
    await w.row('sub').click({ button: 'right' });
    expect(await actions()).toEqual(['open', 'download_zip', 'rename', 'move', 'copy', 'recursive_move', 'share', 'delete']);
    await choose('open');
    await w.row('inner.txt').waitFor();
    await w.page.goBack();
    await w.row('a.txt').waitFor();
  });

  it('downloads the file with the bytes on disk', async () => {
    await w.row('b.txt').click({ button: 'right' });
    const [download] = await Promise.all([w.page.waitForEvent('download'), choose('download')]);
    const saved = await savedDownload(download);
    expect(readFileSync(saved, 'utf8')).toBe('bravo');
    expect(download.suggestedFilename()).toBe('b.txt');
  });

  it('copies the raw link of one file, and the links of the selection', async () => {
    await w.row('a.txt').click({ button: 'right' });
    await choose('copy_link');
    await w.page.locator('.toast', { hasText: 'Link copied' }).waitFor();
    const one = await w.page.evaluate(() => navigator.clipboard.readText());
    expect(one.split('?')[0]).toBe(`${w.base}/d/work/a.txt`);
    expect((await fetch(one)).status).toBe(200);

    // a right click selects nothing: the selection is what the checkboxes say
    expect(await w.page.locator('[data-testid=selected-count]').count()).toBe(0);
    await w.row('a.txt').locator('input[type=checkbox]').check();
    await w.row('b.txt').locator('input[type=checkbox]').check();
    await w.row('b.txt').click({ button: 'right' });
    expect(await menu().getAttribute('aria-label')).toBe('2 selected');
    await choose('copy_links');
    await w.page.locator('.toast', { hasText: 'Copied 2 link(s)' }).waitFor();
    const lines = (await w.page.evaluate(() => navigator.clipboard.readText())).split('\n');
    expect(lines.map((l) => l.split('?')[0])).toEqual([`${w.base}/d/work/a.txt`, `${w.base}/d/work/b.txt`]);
    for (const l of lines) expect(await (await fetch(l)).text()).toMatch(/^(alpha|bravo)$/);
  });

  it('right click outside the selection acts on that entry alone, leaving the selection as it is', async () => {
    await w.row('c.txt').click({ button: 'right' });
    expect(await menu().getAttribute('aria-label')).toBe('Actions for c.txt');
    expect(await w.page.locator('[data-testid=selected-count]').textContent()).toBe('2 selected');
    expect(await w.page.locator('[data-testid=row].cursor').getAttribute('data-name')).toBe('c.txt');
    await choose('rename');
    await w.page.fill('.dialog input[name=value]', 'c2.txt');
    await w.page.click('.dialog button[type=submit]');
    await w.page.locator('.toast', { hasText: 'Renamed c.txt to c2.txt' }).waitFor();
    await waitFor(() => existsSync(disk('work', 'c2.txt')) && !existsSync(disk('work', 'c.txt')), 'renamed on disk');
    await w.row('c2.txt').waitFor();
  });

  it('copies and moves through the menu into a folder', async () => {
    await w.page.keyboard.press('Escape'); // clears the selection: the menu then acts on one file
    await expect.poll(() => w.page.locator('[data-testid=selected-count]').count()).toBe(0);
    await w.row('a.txt').click({ button: 'right' });
    await choose('copy');
    await w.page.click('.dialog button[data-path="/work/target"]');
    await w.page.click('.dialog button:has-text("Choose this folder")');
    await w.page.locator('.toast', { hasText: 'Copied 1 item(s) to /work/target' }).waitFor();
    await waitFor(() => existsSync(disk('work', 'target', 'a.txt')), 'copied on disk');
    expect(readFileSync(disk('work', 'target', 'a.txt'), 'utf8')).toBe('alpha');

    await w.row('b.txt').click({ button: 'right' });
    await choose('move');
    await w.page.click('.dialog button[data-path="/work/target"]');
    await w.page.click('.dialog button:has-text("Choose this folder")');
    await w.page.locator('.toast', { hasText: 'Moved 1 item(s) to /work/target' }).waitFor();
    await waitFor(() => existsSync(disk('work', 'target', 'b.txt')) && !existsSync(disk('work', 'b.txt')), 'moved on disk');
  });

  it('is reached from the keyboard (Shift+F10 on the cursor row) and deletes after the confirmation', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.row('c2.txt').waitFor();
    // no cursor bar before a key is pressed
    expect(await w.page.locator('[data-testid=row].cursor').count()).toBe(0);
    const names = await w.page.locator('[data-testid=row]').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.name));
    for (let i = 0; i < names.indexOf('c2.txt'); i++) await w.page.keyboard.press('ArrowDown');
    const cursorName = await w.page.locator('[data-testid=row].cursor').getAttribute('data-name');
    expect(cursorName).toBe('c2.txt');
    await w.page.keyboard.press('Shift+F10');
    expect(await menu().getAttribute('aria-label')).toBe(`Actions for ${cursorName}`);
    await w.page.keyboard.press('End');
    expect(await w.page.evaluate(() => (document.activeElement as HTMLElement).dataset.action)).toBe('delete');
    await w.page.keyboard.press('Enter');
    await w.page.locator('.dialog button.danger').click();
    await waitFor(() => !existsSync(disk('work', cursorName!)), 'deleted on disk');
    await expect.poll(() => w.row('c2.txt').count()).toBe(0);
    await w.row('a.txt').waitFor();
  });

  it('opens on a long press on touch screens', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.row('a.txt').waitFor();
    const box = (await w.row('a.txt').boundingBox())!;
    await w.row('a.txt').locator('.fname').evaluate((el, p) => {
      el.dispatchEvent(new PointerEvent('pointerdown', { pointerType: 'touch', clientX: p.x, clientY: p.y, bubbles: true }));
    }, { x: box.x + 60, y: box.y + 10 });
    await menu().waitFor({ timeout: 2000 });
    expect(await menu().getAttribute('aria-label')).toBe('Actions for a.txt');
    await w.page.keyboard.press('Escape');
    // a short touch is a tap, not a menu
    await w.row('a.txt').locator('.fname').evaluate((el) => {
      el.dispatchEvent(new PointerEvent('pointerdown', { pointerType: 'touch', bubbles: true }));
      el.dispatchEvent(new PointerEvent('pointerup', { pointerType: 'touch', bubbles: true }));
    });
    await new Promise((r) => setTimeout(r, 700));
    expect(await menu().count()).toBe(0);
  });
});
