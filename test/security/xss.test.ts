import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { listenLoopback } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Setting values an admin (or whoever got hold of the settings) can set are shown to every
 * visitor: the site title, the announcement (markdown), and file names and readmes in folders.
 * None of them may run script in the browser. (File names, folder readmes, path-rule readmes
 * and markdown previews are also covered by test/web/ui.test.ts and media-bulk-ui.test.ts.)
 */
const enabled = requireChromium('the XSS browser tests');
const PAYLOADS = [
  '<img src=x onerror="window.__pwned=\'img\'">',
  '<script>window.__pwned="script"</script>',
  '<svg onload="window.__pwned=\'svg\'"></svg>',
  '<a href="javascript:window.__pwned=\'href\'" id="jslink">click</a>',
  '<iframe srcdoc="<script>parent.__pwned=\'iframe\'</script>"></iframe>',
];

describe.runIf(enabled)('setting values and names never run script in the web UI', () => {
  let s: TestServer;
  let base: string;
  let browser: Browser;
  const dialogs: string[] = [];

  const visit = async (url: string): Promise<Page> => {
    const page = await browser.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(url);
    await page.waitForLoadState('networkidle');
    return page;
  };
  const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned);

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    const files = path.join(s.dataDir, 'files');
    mkdirSync(path.join(files, 'pub'), { recursive: true });
    writeFileSync(path.join(files, 'pub', `${'<svg onload=window.__pwned=1>'}.txt`), 'x');
    const save = await s.api('POST', '/api/admin/setting/save', {
      token: admin,
      body: [
        { key: 'site_title', value: `Files ${PAYLOADS[0]}` },
        { key: 'announcement', value: `# News\n\n${PAYLOADS.join('\n\n')}\n\n[md link](javascript:window.__pwned='md')` },
      ],
    });
    expect(save.code, save.message).toBe(200);
    const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: { role: number }) => u.role === 1);
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...guest, disabled: false } })).code).toBe(200);
    base = await listenLoopback(s.app);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.destroy();
  });

  it('the announcement and the site title are shown as text or sanitised markdown, never run', async () => {
    const page = await visit(`${base}/`);
    await page.locator('.announcement').waitFor();
    expect(await page.locator('.announcement h1').textContent()).toBe('News');
    // Clicking what is left of the links does not run them either.
    for (const link of await page.locator('.announcement a').all()) await link.click({ trial: false }).catch(() => undefined);
    expect(await pwned(page)).toBeUndefined();
    expect(await page.locator('.announcement script, .announcement iframe, .announcement [onerror], .announcement [onload]').count()).toBe(0);
    expect(await page.locator('header').textContent()).toContain('<img src=x onerror=');
    // The injected <title> carries the value as text (escaped at serve time), not as markup.
    expect(await page.title()).toContain('<img src=x onerror=');
    expect(await page.locator('head img').count()).toBe(0);

    const login = await visit(`${base}/@login`);
    expect(await login.locator('h1').textContent()).toContain('<img src=x onerror=');
    expect(await pwned(login)).toBeUndefined();

    const folder = await visit(`${base}/pub`);
    await folder.getByText('<svg onload=window.__pwned=1>.txt').waitFor();
    expect(await pwned(folder)).toBeUndefined();
    expect(dialogs).toEqual([]);
  });
});
