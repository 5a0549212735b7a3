import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { BACKENDS } from './backends.js';
import { launchChromium } from './browser.js';
import { localStorage, makeTree } from './files.js';
import { listenLoopback } from './http.js';
import { startServer, type TestServer, type TestServerOptions } from './server.js';

/** A server whose root storage is a fresh local tree, and a chromium page logged in as the admin. */
export interface WebSession {
  s: TestServer;
  base: string;
  root: string;
  admin: string;
  browser: Browser;
  ctx: BrowserContext;
  page: Page;
  row(name: string): ReturnType<Page['locator']>;
  close(): Promise<void>;
}

/** A server whose root storage is the local folder `root`, listening on loopback at `base`, and the admin's token. */
export async function serveRoot(root: string, server: TestServerOptions = {}): Promise<{ s: TestServer; admin: string; base: string }> {
  const s = await startServer(BACKENDS[0]!, server);
  try {
    const admin = await s.login();
    const def = (await s.api('GET', '/api/admin/storage/list', { token: admin })).data.content[0];
    expect((await s.api('POST', '/api/admin/storage/update', { token: admin, body: { ...def, ...localStorage('/', root) } })).code).toBe(200);
    return { s, admin, base: await listenLoopback(s.app) };
  } catch (err) {
    await s.destroy();
    throw err;
  }
}

export async function openWebSession(tree: Record<string, string | Buffer>, viewport = { width: 1200, height: 800 }, server: TestServerOptions = {}): Promise<WebSession> {
  const root = makeTree(tree);
  const { s, admin, base } = await serveRoot(root, server);
  const browser = await launchChromium();
  const ctx = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${base}/@login`);
  await page.evaluate((t) => window.localStorage.setItem('token', t), admin);
  return {
    s,
    base,
    root,
    admin,
    browser,
    ctx,
    page,
    row: (name) => page.locator(`[data-testid=row][data-name="${name}"]`),
    async close() {
      await browser.close();
      await s.destroy();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
