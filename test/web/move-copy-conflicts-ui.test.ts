// Issue #44 item 4: the move and copy dialogs offer what OpenList's do for a name already at the
// destination — overwrite, skip existing, merge folders (copy) — sent as `overwrite`,
// `skip_existing`, `merge` on /api/fs/copy and /api/fs/move, and the recursive move's
// `conflict_policy` on /api/fs/recursive_move. Checked in the request bodies and on disk.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { waitUntil } from '../helpers/wait.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };

describe.runIf(requireChromium('the move/copy conflict browser tests'))('move and copy: names already there', () => {
  let w: WebSession;
  const bodies: Array<{ route: string; body: Record<string, unknown> }> = [];
  const disk = (...p: string[]) => path.join(w.root, ...p);
  const read = (...p: string[]) => readFileSync(disk(...p), 'utf8');
  const last = (route: string) => bodies.filter((b) => b.route === route).at(-1)?.body;

  /** Ticks `names` in `dir`, runs the selection bar's `action`, picks `dst` and `choice`. */
  async function transfer(dir: string, names: string[], action: 'copy' | 'move', dst: string, choice?: string) {
    await w.page.goto(`${w.base}${dir}`);
    for (const n of names) await w.row(n).locator('input[type=checkbox]').check();
    await w.page.click(`.selection-bar [data-action=${action}]`);
    const dialog = w.page.locator('.dialog');
    await dialog.locator(`button[data-path="${dst}"]`).click();
    // "stop" is chosen to begin with
    expect(await dialog.locator('input[name=conflict][value=stop]').isChecked()).toBe(true);
    if (choice) await dialog.locator(`input[name=conflict][value=${choice}]`).check();
    await dialog.locator('button:has-text("Choose this folder")').click();
    await dialog.waitFor({ state: 'detached' });
  }

  beforeAll(async () => {
    w = await openWebSession({
      'src/a.txt': 'new a',
      'src/b.txt': 'new b',
      'src/dir/inner1.txt': 'i1',
      'src/dir/sub/deep.txt': 'deep',
      'dst/a.txt': 'old a',
      'dst/dir/inner0.txt': 'i0',
      'msrc/x.txt': 'new x',
      'msrc/y.txt': 'new y',
      'mdst/x.txt': 'old x',
      'nest/one/1.txt': 'new 1',
      'nest/two/2.txt': 'new 2',
      'flat/1.txt': 'old 1',
    });
    w.page.on('request', (r: Request) => {
      const m = /\/api\/fs\/(copy|move|recursive_move)$/.exec(r.url());
      if (m) bodies.push({ route: m[1]!, body: r.postDataJSON() });
    });
  });
  afterAll(() => w?.close());

  it('copy: stop sends no choice and replaces nothing', async () => {
    await transfer('/src', ['a.txt'], 'copy', '/dst');
    await w.page.locator('.toast.error').waitFor();
    expect(last('copy')).toEqual({ src_dir: '/src', dst_dir: '/dst', names: ['a.txt'], password: '', dst_password: '' });
    expect(read('dst', 'a.txt')).toBe('old a');
  });

  it('copy: skip existing carries the other names and keeps what is there', async () => {
    await transfer('/src', ['a.txt', 'b.txt'], 'copy', '/dst', 'skip');
    await w.page.locator('.toast:has-text("Copied 2 item(s) to /dst")').waitFor();
    expect(last('copy')).toMatchObject({ names: ['a.txt', 'b.txt'], skip_existing: true });
    expect(last('copy')).not.toHaveProperty('overwrite');
    await waitUntil(() => existsSync(disk('dst', 'b.txt')));
    expect(read('dst', 'b.txt')).toBe('new b');
    expect(read('dst', 'a.txt')).toBe('old a');
  });

  it('copy: overwrite replaces it', async () => {
    await transfer('/src', ['a.txt'], 'copy', '/dst', 'overwrite');
    await w.page.locator('.toast:has-text("Copied 1 item(s) to /dst")').waitFor();
    expect(last('copy')).toMatchObject({ names: ['a.txt'], overwrite: true });
    await waitUntil(() => read('dst', 'a.txt') === 'new a');
  });

  it('copy: merge folders copies into the folder what it lacks', async () => {
    await transfer('/src', ['dir'], 'copy', '/dst', 'merge');
    await w.page.locator('.toast:has-text("Copied 1 item(s) to /dst")').waitFor();
    expect(last('copy')).toMatchObject({ names: ['dir'], merge: true });
    await waitUntil(() => existsSync(disk('dst', 'dir', 'sub', 'deep.txt')) && existsSync(disk('dst', 'dir', 'inner1.txt')), 10_000);
    expect(read('dst', 'dir', 'inner0.txt')).toBe('i0');
    expect(read('dst', 'dir', 'sub', 'deep.txt')).toBe('deep');
  });

  it('move: overwrite and skip existing (merge is a copy choice), sent as the fields', async () => {
    await w.page.goto(`${w.base}/msrc`);
    await w.row('x.txt').locator('input[type=checkbox]').check();
    await w.page.click('.selection-bar [data-action=move]');
    expect(await w.page.locator('.dialog input[name=conflict]').evaluateAll((xs) => xs.map((x) => (x as HTMLInputElement).value))).toEqual(['stop', 'overwrite', 'skip']);
    await w.page.keyboard.press('Escape');
    await transfer('/msrc', ['x.txt', 'y.txt'], 'move', '/mdst', 'skip');
    await w.page.locator('.toast:has-text("Moved 2 item(s) to /mdst")').waitFor();
    expect(last('move')).toMatchObject({ names: ['x.txt', 'y.txt'], skip_existing: true });
    await waitUntil(() => existsSync(disk('mdst', 'y.txt')));
    expect(read('mdst', 'x.txt')).toBe('old x');
    expect(existsSync(disk('msrc', 'y.txt'))).toBe(false);
    await transfer('/msrc', ['x.txt'], 'move', '/mdst', 'overwrite');
    await w.page.locator('.toast:has-text("Moved 1 item(s) to /mdst")').waitFor();
    expect(last('move')).toMatchObject({ names: ['x.txt'], overwrite: true });
    await waitUntil(() => read('mdst', 'x.txt') === 'new x');
  });

  it("recursive move: a folder's files go flat into another, with conflict_policy", async () => {
    await w.page.goto(`${w.base}/`);
    await w.row('nest').click({ button: 'right' });
    await w.page.click('.context-menu [data-action=recursive_move]');
    const dialog = w.page.locator('.dialog');
    await dialog.locator('button[data-path="/flat"]').click();
    await dialog.locator('input[name=conflict][value=skip]').check();
    await dialog.locator('button:has-text("Choose this folder")').click();
    await w.page.locator('.toast:has-text("Moved the files of nest to /flat")').waitFor();
    expect(last('recursive_move')).toEqual({ src_dir: '/nest', dst_dir: '/flat', conflict_policy: 'skip', password: '', dst_password: '' });
    await waitUntil(() => existsSync(disk('flat', '2.txt')));
    expect(read('flat', '2.txt')).toBe('new 2');
    expect(read('flat', '1.txt')).toBe('old 1');
  });

  it('the dialog fits a phone, its choices on screen', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await page.goto(`${w.base}/src`);
    await page.locator('[data-testid=row][data-name="b.txt"] input[type=checkbox]').check();
    await page.click('.selection-bar [data-action=copy]');
    const radios = page.locator('.dialog input[name=conflict]');
    await radios.first().waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    for (const label of await page.locator('.dialog .conflict-choice label').all()) {
      const box = (await label.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    }
    await screenshot(page, '44-copy-conflicts-phone');
    await ctx.close();
  });
});
