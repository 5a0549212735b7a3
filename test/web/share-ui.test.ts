import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { listenLoopback } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Share links as people meet them in the browser: the owner shares a selected folder with a
 * code and a limit and copies the link; a visitor without an account gives the code, browses
 * and downloads; the owner disables and deletes it on "My shares" and the link stops.
 */
const enabled = requireChromium('the share-link browser tests');

describe.runIf(enabled)('share links in the web UI', () => {
  let s: TestServer;
  let admin: string;
  let base: string;
  let root: string;
  let browser: Browser;
  let link = '';
  const row = (page: Page, name: string) => page.locator(`[data-testid=row][data-name="${name}"]`);

  beforeAll(async () => {
    root = makeTree({ 'docs/report.txt': 'the report', 'docs/notes/n.txt': 'n', 'private.txt': 'not shared' });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    const def = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content[0];
    expect((await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...def, ...localStorage('/', root) } })).code).toBe(200);
    // Visitors have no account: the guest is off, as it is on a private site.
    const users = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content;
    const guest = users.find((u: any) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, password: '', disabled: true } })).code).toBe(200);
    base = await listenLoopback(s.app);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  const loggedIn = async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/@login`);
    await page.fill('input[name=username]', 'admin');
    await page.fill('input[name=password]', 'admin-pass-1');
    await page.click('button[type=submit]');
    await row(page, 'docs').waitFor();
    return page;
  };

  it('the owner shares a selected folder with a code and a limit, and gets a link', async () => {
    const page = await loggedIn();
    await page.locator('input[type=checkbox][aria-label="docs"]').check();
    await page.click('button:has-text("Share")');
    await page.fill('input[name=pwd]', 'code-42');
    await page.fill('input[name=max_accessed]', '5');
    await page.click('button:has-text("Create link")');
    link = await page.locator('[data-testid=share-link]').inputValue();
    expect(link).toMatch(/\/@s\/[A-Za-z0-9]{22}$/);
    const shares = (await s.api('GET', '/api/share/list', { token: admin })).data.content;
    expect(shares).toHaveLength(1);
    expect(shares[0]).toMatchObject({ files: ['/docs'], pwd: 'code-42', max_accessed: 5 });
    await page.close();
  });

  it('a visitor gives the code, browses the shared folder and downloads a file', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(link);
    await page.fill('input[name=code]', 'wrong');
    await page.click('button[type=submit]');
    await page.locator('text=Wrong password').waitFor();
    await page.fill('input[name=code]', 'code-42');
    await page.click('button[type=submit]');
    const list = page.locator('[data-testid=share-list]');
    await list.waitFor();
    expect((await list.locator('tbody tr a').allInnerTexts()).map((x) => x.trim())).toEqual(['notes', 'report.txt']);
    expect(await page.content()).not.toContain('private.txt');
    await page.click('a:has-text("report.txt")');
    const dl = page.locator('[data-testid=share-download]');
    await dl.waitFor();
    const href = await dl.getAttribute('href');
    expect(href).toMatch(/\/sd\/[A-Za-z0-9]{22}\/report\.txt\?pwd=code-42$/);
    const body = await page.evaluate(async (u) => (await fetch(u!)).text(), href);
    expect(body).toBe('the report');
    await ctx.close();
  });

  it('"My shares" disables and deletes the link, and the visitor is refused at once', async () => {
    const page = await loggedIn();
    await page.goto(`${base}/@manage/shares`);
    const id = link.slice(link.lastIndexOf('/') + 1);
    const line = page.locator(`[data-share="${id}"]`);
    await line.waitFor();
    expect(await line.innerText()).toContain('/docs');
    await line.locator('button:has-text("Disable")').click();
    await line.locator('button:has-text("Enable")').waitFor();
    const visitor = await browser.newContext();
    const vpage = await visitor.newPage();
    vpage.setDefaultTimeout(15_000);
    await vpage.goto(link);
    await vpage.locator('text=This share is not available').waitFor();
    await line.locator('button:has-text("Enable")').click();
    await line.locator('button:has-text("Disable")').waitFor();
    await line.locator('button:has-text("Delete")').click();
    await page.locator('.dialog button:has-text("OK")').click();
    await page.locator('text=No shares yet').waitFor();
    expect((await s.api('GET', '/api/share/list', { token: admin })).data.total).toBe(0);
    await vpage.reload();
    await vpage.locator('text=the share does not exist').waitFor();
    await visitor.close();
    await page.close();
  });
});
