import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { makeTree } from '../helpers/files.js';
import type { TestServer } from '../helpers/server.js';
import { serveRoot } from '../helpers/web-session.js';

/**
 * Share links as people meet them in the browser: the owner shares a selected folder with a
 * code and a limit and gets the link and the message of `share_summary_content`; a visitor
 * without an account gives the code, browses and downloads; the owner disables and deletes it
 * on "My shares" and the link stops. A visitor also meets the share's header and readme
 * (sanitised markdown), a protected folder's password prompt, and a shared archive.
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
    root = makeTree({ 'docs/report.txt': 'the report', 'docs/notes/n.txt': 'n', 'private.txt': 'not shared', 'more/locked/inner.txt': 'inner bytes', 'more/plain.txt': 'plain words inside' });
    const src = mkdtempSync(path.join(os.tmpdir(), 'atrium-share-ui-zip-'));
    writeFileSync(path.join(src, 'hello.txt'), 'hello from the shared zip');
    execFileSync('zip', ['-q', path.join(root, 'more/a.zip'), 'hello.txt'], { cwd: src });
    rmSync(src, { recursive: true, force: true });
    ({ s, admin, base } = await serveRoot(root));
    // Visitors have no account: the guest is off, as it is on a private site.
    const users = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content;
    const guest = users.find((u: any) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, password: '', disabled: true } })).code).toBe(200);
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
    // The message to copy is the share_summary_content template filled in, as OpenList's.
    const title = (await s.api('GET', '/api/public/settings')).data.site_title;
    expect(await page.locator('[data-testid=share-message]').inputValue()).toBe(`@admin shared "docs" from ${title}: ${link} , the share code is code-42`);
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
    expect((await list.locator('[data-testid=row] a.name').allInnerTexts()).map((x) => x.trim())).toEqual(['notes', 'report.txt']);
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

  it("renders the share's header and readme as sanitised markdown, and the summary setting as an admin wrote it", async () => {
    const saved = await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'share_summary_content', value: 'Get {{#each files}}{{filename this}}{{#unless @last}}, {{/unless}}{{/each}} at {{base_url}}/@s/{{id}}{{#if pwd}} (code {{pwd}}){{/if}}' }] });
    expect(saved.code).toBe(200);
    const made = await s.api('POST', '/api/share/create', {
      token: admin,
      body: { files: ['/more'], readme: '# Read me\n\nSome **bold** words <img src=x onerror="window.pwned=1"><script>window.pwned=2</script>', header: '## Top of the share' },
    });
    expect(made.code).toBe(200);
    const id = made.data.id as string;
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/@s/${id}`);
    await page.locator('[data-testid=share-list]').waitFor();
    await page.locator('.markdown h2:has-text("Top of the share")').waitFor();
    await page.locator('.markdown.readme h1:has-text("Read me")').waitFor();
    expect(await page.locator('.markdown.readme strong').innerText()).toBe('bold');
    expect(await page.locator('main.share-visit > h2').innerText()).toContain('🎁'); // share_icon
    expect(await page.locator('.markdown.readme script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    // On a file's page too.
    await page.click('a:has-text("plain.txt")');
    await page.locator('[data-testid=share-download]').waitFor();
    await page.locator('.markdown.readme h1:has-text("Read me")').waitFor();
    await page.locator('.markdown h2:has-text("Top of the share")').waitFor();
    await ctx.close();

    // "My shares" copies the message of the admin's own template.
    const owner = await loggedIn();
    await owner.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await owner.goto(`${base}/@manage/shares`);
    const line = owner.locator(`[data-share="${id}"]`);
    await line.waitFor();
    await line.locator('button:has-text("Copy message")').click();
    await owner.locator('text=Link copied').first().waitFor();
    expect(await owner.evaluate(() => navigator.clipboard.readText())).toBe(`Get more at ${base}/@s/${id}`);
    await owner.close();
  });

  it('a visitor opens a protected folder inside a share with its password, and a shared archive', async () => {
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/more/locked', password: 'inner-pw', p_sub: true } })).code).toBe(200);
    const on = [{ key: 'share_preview', value: 'true' }, { key: 'share_archive_preview', value: 'true' }];
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: on })).code).toBe(200);
    const made = await s.api('POST', '/api/share/create', { token: admin, body: { files: ['/more'], pwd: 'outer' } });
    const id = made.data.id as string;
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/@s/${id}`);
    await page.fill('input[name=code]', 'outer');
    await page.click('button[type=submit]');
    const list = page.locator('[data-testid=share-list]');
    await list.waitFor();
    expect((await list.locator('[data-testid=row] a.name').allInnerTexts()).map((x) => x.trim()).sort()).toEqual(['a.zip', 'locked', 'plain.txt']);
    await page.click('a:has-text("locked")');
    const prompt = page.locator('[data-testid=share-folder-password]');
    await prompt.waitFor();
    expect(await page.content()).not.toContain('inner.txt');
    await page.fill('input[name=folder_password]', 'nope');
    await page.click('[data-testid=share-folder-password] button[type=submit]');
    await page.locator('text=Wrong password').waitFor();
    await page.fill('input[name=folder_password]', 'inner-pw');
    await page.click('[data-testid=share-folder-password] button[type=submit]');
    await list.locator('a:has-text("inner.txt")').waitFor();

    // With share_preview, a shared file starts on its download (share_preview_download_by_default,
    // on by default) and is previewed on demand.
    await page.goto(`${base}/@s/${id}/plain.txt`);
    const download = page.locator('[data-testid=share-download]');
    await download.waitFor();
    expect(await download.getAttribute('href')).toMatch(new RegExp(`/sd/${id}/plain\\.txt\\?pwd=outer$`));
    expect(await page.locator('text=plain words inside').count()).toBe(0);
    await page.click('[data-testid=share-preview]');
    await page.locator('text=plain words inside').waitFor();

    // The shared archive opens like a folder at once with share_preview_archives_by_default; an
    // entry previews from /sad; nothing to extract.
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'share_preview_archives_by_default', value: 'true' }] })).code).toBe(200);
    await page.goto(`${base}/@s/${id}/a.zip`);
    const archive = page.locator('[data-testid=archive-view]');
    await archive.waitFor();
    await archive.locator('text=hello.txt').waitFor();
    expect(await archive.locator('button:has-text("Extract")').count()).toBe(0);
    await archive.locator('text=hello.txt').click();
    await page.locator('text=hello from the shared zip').waitFor();
    await ctx.close();
  });
});
