import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { makeTree } from '../helpers/files.js';
import type { TestServer } from '../helpers/server.js';
import { serveRoot } from '../helpers/web-session.js';

/** The budget of the issue: the first load of the file list under 300 KB of JavaScript, gzipped. */
const BUDGET = 300 * 1024;
const DIST = path.resolve('dist/web');
const gz = (b: Buffer) => gzipSync(b, { level: 9 }).length;

describe('JavaScript budget of the first load', () => {
  it('keeps what index.html loads (entry script and preloads) under 300 KB gzipped', () => {
    const html = readFileSync(path.join(DIST, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    const total = scripts.reduce((n, f) => n + gz(readFileSync(path.join(DIST, f))), 0);
    console.log(`first-load JS (static): ${scripts.join(', ')} = ${(total / 1024).toFixed(1)} KB gzipped`);
    expect(total).toBeLessThan(BUDGET);
  });

  describe.runIf(requireChromium('the browser-measured JS budget'))('measured in chromium', () => {
    let s: TestServer;
    let browser: Browser;
    afterAll(async () => {
      await browser?.close();
      await s?.destroy();
    });

    it('loads a folder with a readme, logged in, with under 300 KB of JavaScript gzipped', async () => {
      const root = makeTree({ 'a.txt': 'a', 'sub/b.txt': 'b' });
      const served = await serveRoot(root);
      s = served.s;
      const { admin, base } = served;
      expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/', readme: '# Hello', r_sub: true } })).code).toBe(200);
      browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(`${base}/@login`);
      await page.evaluate((t) => window.localStorage.setItem('token', t), admin);
      const scripts: string[] = [];
      page.on('response', (r) => r.request().resourceType() === 'script' && scripts.push(new URL(r.url()).pathname));
      await page.goto(`${base}/sub`);
      await page.locator('[data-testid=row][data-name="b.txt"]').waitFor();
      await page.locator('.readme h1').waitFor();
      const files = [...new Set(scripts)];
      const total = files.reduce((n, f) => n + gz(readFileSync(path.join(DIST, f))), 0);
      console.log(`first-load JS (browser, list + readme): ${files.join(', ')} = ${(total / 1024).toFixed(1)} KB gzipped`);
      expect(files.some((f) => f.includes('markdown'))).toBe(true);
      expect(total).toBeLessThan(BUDGET);
    });
  });
});
