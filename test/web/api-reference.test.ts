import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium, screenshot } from '../helpers/browser.js';
import { atrium, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';

const run = requireChromium('the API reference page test');

describe.skipIf(!run)('API reference page', () => {
  let data: string;
  let server: ServerProcess;
  let browser: Browser;
  beforeAll(async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-apiref-'));
    await atrium('admin', 'set', 'admin-pass-1', '--data', data);
    server = await startServerProcess(data, await freePort());
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(data, { recursive: true, force: true });
  });

  it('lists every tag of the OpenAPI document and opens one to its operations, loading nothing from elsewhere', async () => {
    const spec = (await (await fetch(`${server.base}/api/openapi.json`)).json()) as { tags: Array<{ name: string }>; paths: Record<string, Record<string, { tags: string[] }>> };
    const fsOperations = Object.values(spec.paths).flatMap((item) => Object.values(item)).filter((op) => op.tags[0] === 'fs').length;
    expect(fsOperations).toBeGreaterThan(20);
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.base}/openapi`);
    await page.waitForSelector('.opblock-tag', { timeout: 30_000 });
    expect(await page.locator('.information-container').textContent()).toContain('Atrium API');
    expect(await page.locator('.opblock-tag').count()).toBe(spec.tags.length);

    await page.locator('.opblock-tag[data-tag="fs"]').click();
    await page.waitForFunction((n) => document.querySelectorAll('.opblock').length >= n, fsOperations, { timeout: 30_000 });
    expect(await page.locator('.opblock').count()).toBe(fsOperations);
    expect(await page.locator('.opblock-summary-path', { hasText: /^\/api\/fs\/list$/ }).count()).toBe(2);
    // An operation opens to its parameters and the documented answer.
    await page.locator('.opblock-get .opblock-summary-path', { hasText: /^\/api\/fs\/list$/ }).click();
    await page.waitForSelector('.opblock.is-open .parameters');
    expect(await page.locator('.opblock.is-open .parameters').textContent()).toContain('per_page');
    await screenshot(page, 'api-reference');
    expect(errors).toEqual([]);
    expect(requested.filter((u) => !u.startsWith(server.base) && !u.startsWith('data:'))).toEqual([]);
    await page.close();
  });
});
