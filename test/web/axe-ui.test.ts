import { createRequire } from 'node:module';
import sharp from 'sharp';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from '../helpers/browser.js';
import { localStorage as localStorageOf } from '../helpers/files.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

/**
 * axe-core over every page of the web UI, in both themes, at desktop and at phone width: no
 * violation of impact serious or critical. The pages are found as a user finds them: the links
 * of the header, the folder toolbar and the manage menu (so a page added to the menu is checked
 * from then on), and the ones no menu links to (a preview, the storage form, the login page and
 * a share's visitor page).
 */
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const VIEWPORTS = { desktop: { width: 1200, height: 800 }, phone: { width: 390, height: 844 } } as const;
const png = (r: number) => sharp({ create: { width: 64, height: 48, channels: 3, background: { r, g: 120, b: 200 } } }).png().toBuffer();

interface Found {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** The page's serious and critical violations as axe reports them. */
async function violations(page: Page): Promise<Found[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.map(String).join(' ')) }));
  });
}

/** Opens `route` (in the light theme) and waits for the app to have drawn it: the network quiet, no "Loading…". */
async function open(page: Page, base: string, route: string) {
  await page.evaluate(() => window.localStorage.setItem('theme', 'light'));
  await page.setViewportSize(VIEWPORTS.desktop);
  await page.goto(`${base}${route}`);
  await page.waitForLoadState('networkidle');
  await page.waitForFunction(() => document.querySelector('header, main, form') && !/Loading…/.test(document.body.innerText));
}

/** Two frames and a moment: a resized or re-themed page has laid itself out again (the virtual rows, the grid's columns). */
const settle = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50)))));

/**
 * The serious and critical violations on `route` in each theme at each width, one line each: the
 * page is loaded once, light at desktop width, then made narrow, switched to dark with the
 * header's toggle (as a user does; it is kept for the next load as the choice), and widened again.
 */
async function auditRoute(page: Page, base: string, route: string): Promise<string[]> {
  await open(page, base, route);
  const found: string[] = [];
  const steps = [['light', 'desktop'], ['light', 'phone'], ['dark', 'phone'], ['dark', 'desktop']] as const;
  for (const [theme, size] of steps) {
    if (theme === 'dark' && size === 'phone') await page.locator('header button[aria-label="Toggle dark mode"]').evaluate((b) => (b as HTMLButtonElement).click());
    await page.setViewportSize(VIEWPORTS[size]);
    await settle(page);
    expect(await page.evaluate(() => document.documentElement.classList.contains('dark')), `${route} ${theme}`).toBe(theme === 'dark');
    for (const v of await violations(page)) found.push(`${route} [${theme}, ${size}]: ${v.id} (${v.impact}: ${v.help}) at ${v.targets.join(', ')}`);
  }
  return found;
}

const failure = (found: string[]) => `axe found serious or critical violations:\n${found.join('\n')}`;

describe.runIf(requireChromium('the accessibility (axe) browser tests'))('accessibility: axe finds no serious or critical violation', () => {
  let w: WebSession;
  let share = '';
  let visitor: BrowserContext;
  /** App paths of the pages a logged-in admin reaches. */
  const routes = new Set<string>();

  beforeAll(async () => {
    w = await openWebSession({
      'docs/a.txt': 'some text',
      'docs/notes.md': '# Notes\n\n- [x] done\n- [ ] to do\n',
      'docs/sub/b.txt': 'b',
      'pics/p.png': await png(40),
    });
    const def = (await w.s.api('GET', '/api/admin/storage/list', { token: w.admin })).data.content[0];
    expect((await w.s.api('POST', '/api/admin/storage/update', { token: w.admin, body: { ...def, ...localStorageOf('/', w.root, { trash: 'on' }) } })).code).toBe(200);
    // a readme with a task list (its checkboxes) on the listing
    expect((await w.s.api('POST', '/api/admin/meta/create', { token: w.admin, body: { path: '/docs', readme: '# Read me\n\n- [x] first\n- [ ] second\n', r_sub: false } })).code).toBe(200);
    const made = await w.s.api('POST', '/api/share/create', { token: w.admin, body: { files: ['/docs'] } });
    expect(made.code).toBe(200);
    share = made.data.id;
    // deleted a file so the trash has a row
    expect((await w.s.api('POST', '/api/fs/remove', { token: w.admin, body: { dir: '/docs', names: ['sub'] } })).code).toBe(200);

    // the pages linked from the header, the folder's toolbar and the manage menu
    await open(w.page, w.base, '/docs');
    await w.row('a.txt').waitFor();
    const appPath = (u: string) => decodeURI(new URL(u).pathname);
    const add = (hrefs: string[]) => hrefs.filter((u) => new URL(u).origin === new URL(w.base).origin).forEach((u) => routes.add(appPath(u)));
    add(await w.page.locator('header a[href], .toolbar a[href]').evaluateAll((as) => as.map((x) => (x as HTMLAnchorElement).href)));
    await open(w.page, w.base, '/@manage/settings/site');
    add(await w.page.locator('#manage-nav a[href]').evaluateAll((as) => as.map((x) => (x as HTMLAnchorElement).href)));
    expect(routes.size).toBeGreaterThan(15);
    for (const p of ['/docs', '/docs/a.txt', '/docs/notes.md', '/pics/p.png', '/@manage/storages/add', `/@manage/storages/edit/${def.id}`]) routes.add(p);
    visitor = await w.browser.newContext();
  });
  afterAll(async () => {
    await visitor?.close();
    await w?.close();
  });

  it('file pages: a listing with a readme, the previews, the trash, in both themes at desktop and phone width', async () => {
    const found: string[] = [];
    for (const route of [...routes].filter((r) => !r.startsWith('/@manage')).sort()) found.push(...(await auditRoute(w.page, w.base, route)));
    expect(found, failure(found)).toEqual([]);
  }, 600_000);

  it('every manage page, in both themes at desktop and phone width', async () => {
    const found: string[] = [];
    for (const route of [...routes].filter((r) => r.startsWith('/@manage')).sort()) found.push(...(await auditRoute(w.page, w.base, route)));
    expect(found, failure(found)).toEqual([]);
  }, 600_000);

  it('without an account: the login page and a share visitor page, in both themes at desktop and phone width', async () => {
    const page = await visitor.newPage();
    await page.goto(`${w.base}/@login`);
    const found = [...(await auditRoute(page, w.base, '/@login')), ...(await auditRoute(page, w.base, `/@s/${share}`))];
    await page.close();
    expect(found, failure(found)).toEqual([]);
  }, 600_000);
});
