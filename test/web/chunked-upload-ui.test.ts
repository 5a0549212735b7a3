import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const enabled = requireChromium('the chunked upload browser test');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.runIf(enabled)('chunked uploads in the web UI', () => {
  let w: WebSession;
  let base: string;
  let root: string;
  let scratch: string;
  let ctx: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'atrium-chunked-ui-'));
    w = await openWebSession({ 'in/': '' });
    ({ base, root, ctx, page } = w);
    // 1 MB chunks: a 6 MiB file goes in 7 of them (the test's own page load reads the setting).
    await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'multipart_chunk_size', value: '1' }] });
    page.setDefaultTimeout(20_000);
  });
  afterAll(async () => {
    await w?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('sends a file larger than the chunk size in chunks, pauses and resumes it, and continues it after a page reload', async () => {
    const local = path.join(scratch, 'large.bin');
    const data = Buffer.alloc(6 * 1024 * 1024 + 5);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32BE(i, i);
    writeFileSync(local, data);
    const chunks: string[] = [];
    // Chunk requests in flight at once: three, as OpenList's web front end sends them.
    let inFlight = 0;
    let mostInFlight = 0;
    const isChunk = (r: { url(): string }) => r.url().includes('/api/fs/multipart/chunk');
    page.on('request', (r) => {
      if (!isChunk(r)) return;
      chunks.push(r.headers()['x-chunk-index']!);
      mostInFlight = Math.max(mostInFlight, ++inFlight);
    });
    // Chunks the server answered.
    const acked = new Set<string>();
    page.on('requestfinished', (r) => {
      if (!isChunk(r)) return;
      inFlight--;
      acked.add(r.headers()['x-chunk-index']!);
    });
    page.on('requestfailed', (r) => isChunk(r) && inFlight--);
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1024 * 1024 });
    await page.goto(`${base}/in`);
    await page.locator('[data-testid=upload-input]').setInputFiles(local);
    const item = page.locator('[data-testid=upload-item]', { hasText: 'large.bin' });
    await expect.poll(() => chunks.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(mostInFlight).toBe(3);
    // Pause once the server holds the first chunk (the three share the 1 MB/s link).
    await expect.poll(() => acked.has('0'), { timeout: 20_000 }).toBe(true);
    await item.locator('[data-testid=upload-pause]').click();
    await expect.poll(() => item.locator('.status').textContent()).toContain('Paused');
    const sentWhilePaused = chunks.length;
    await page.waitForTimeout(1500);
    expect(chunks.length).toBe(sentWhilePaused);
    expect(existsSync(path.join(root, 'in', 'large.bin'))).toBe(false);
    // Resume goes on from what the server holds, then pause again.
    await item.locator('[data-testid=upload-pause]').click();
    await expect.poll(() => chunks.length, { timeout: 20_000 }).toBeGreaterThan(sentWhilePaused);
    // Resumed with what the server did not hold: never the first chunk again.
    expect(chunks.slice(sentWhilePaused)).not.toContain('0');
    await item.locator('[data-testid=upload-pause]').click();
    await expect.poll(() => item.locator('.status').textContent()).toContain('Paused');
    expect(existsSync(path.join(root, 'in', 'large.bin'))).toBe(false);

    // A reload loses the page's upload; choosing the file again continues it on the server.
    await page.reload();
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const before = chunks.length;
    await page.locator('[data-testid=upload-input]').setInputFiles(local);
    await expect.poll(() => existsSync(path.join(root, 'in', 'large.bin')), { timeout: 30_000 }).toBe(true);
    expect(sha(readFileSync(path.join(root, 'in', 'large.bin')))).toBe(sha(data));
    // Only the chunks the server did not hold were sent again.
    expect(chunks.length - before).toBeLessThan(7);
    expect(new Set(chunks.slice(before)).has('0')).toBe(false);
  }, 90_000);
});
