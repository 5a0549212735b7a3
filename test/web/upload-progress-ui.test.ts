// Issue #44 item 3: an upload's progress follows the bytes as they are sent — inside each chunk of
// a chunked upload (XHR upload progress per chunk request), and for a single PUT — with the bytes,
// the speed and the time left; the upload throttled (CDP) so it can be watched. The files land
// whole on disk.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { waitUntil } from '../helpers/wait.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const MB = 1024 * 1024;

interface Sample {
  at: number;
  value: number;
  detail: string;
  /** Requests of the upload answered so far. */
  answered: number;
}

/** Watches one upload's progress bar and detail line every 50 ms until it is done. */
async function watch(page: Page, name: string, answered: () => number): Promise<Sample[]> {
  const item = page.locator('[data-testid=upload-item]', { hasText: name });
  await item.waitFor();
  const t0 = Date.now();
  const samples: Sample[] = [];
  for (let i = 0; i < 1200; i++) {
    // one look at the item, waiting for nothing (the detail line goes when the upload is done)
    const seen = await item.evaluate((li) => ({
      value: li.querySelector('progress')!.value,
      detail: li.querySelector('[data-testid=upload-detail]')?.textContent ?? '',
      done: li.classList.contains('done'),
    }));
    samples.push({ at: Date.now() - t0, value: seen.value, detail: seen.detail, answered: answered() });
    if (seen.done) return samples;
    await page.waitForTimeout(50);
  }
  throw new Error(`${name} did not finish`);
}

describe.runIf(requireChromium('the upload progress browser tests'))('upload progress as the bytes go', () => {
  let w: WebSession;
  let scratch: string;
  let cdp: CDPSession;
  const file = (name: string, size: number) => {
    const data = Buffer.alloc(size);
    for (let i = 0; i + 4 <= size; i += 4096) data.writeUInt32BE(i, i);
    const p = path.join(scratch, name);
    writeFileSync(p, data);
    return { path: p, data };
  };
  const throttle = (bytesPerSecond: number) => cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'atrium-progress-ui-'));
    w = await openWebSession({ 'in/': '' });
    // 4 MB chunks: a 12 MiB file goes in three, all in flight at once
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'multipart_chunk_size', value: '4' }] })).code).toBe(200);
    cdp = await w.ctx.newCDPSession(w.page);
  });
  afterAll(async () => {
    await w?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('a chunked upload moves while its chunks are sent, with bytes, speed and time left', async () => {
    const big = file('chunked.bin', 12 * MB);
    let chunksAnswered = 0;
    w.page.on('requestfinished', (r) => r.url().includes('/api/fs/multipart/chunk') && chunksAnswered++);
    await w.page.goto(`${w.base}/in`);
    await throttle(3 * MB);
    await w.page.locator('[data-testid=upload-input]').setInputFiles(big.path);
    const samples = await watch(w.page, 'chunked.bin', () => chunksAnswered);
    await throttle(-1);
    // before any chunk was answered the bar already moved, in several steps: the bytes inside the chunks
    const early = new Set(samples.filter((s) => s.answered === 0 && s.value > 0 && s.value < 100).map((s) => s.value));
    expect(early.size, `progress before the first chunk's answer: ${[...early]}`).toBeGreaterThanOrEqual(3);
    // the detail line: bytes of the total, a speed and a time left, while it runs
    const running = samples.filter((s) => /\/s · /.test(s.detail));
    expect(running.length).toBeGreaterThan(3);
    expect(running.some((s) => /^[\d.]+ (KB|MB) \/ 12\.0 MB · [\d.]+ (KB|MB)\/s · \d+ s left$/.test(s.detail)), running.map((s) => s.detail).join(' | ')).toBe(true);
    // and the time left counts down
    const lefts = running.map((s) => Number(/(\d+) s left/.exec(s.detail)?.[1])).filter(Number.isFinite);
    expect(lefts.at(-1)!).toBeLessThan(lefts[0]!);
    await waitUntil(() => {
      try {
        return readFileSync(path.join(w.root, 'in/chunked.bin')).equals(big.data);
      } catch {
        return false;
      }
    }, 10_000);
  }, 90_000);

  it('a single PUT moves as its bytes are sent, with bytes, speed and time left', async () => {
    const small = file('single.bin', 3 * MB);
    let putAnswered = 0;
    w.page.on('requestfinished', (r) => r.url().endsWith('/api/fs/put') && putAnswered++);
    await w.page.goto(`${w.base}/in`);
    await throttle(1 * MB);
    await w.page.locator('[data-testid=upload-input]').setInputFiles(small.path);
    const samples = await watch(w.page, 'single.bin', () => putAnswered);
    await screenshot(w.page, '44-upload-progress');
    await throttle(-1);
    const early = new Set(samples.filter((s) => s.answered === 0 && s.value > 0 && s.value < 100).map((s) => s.value));
    expect(early.size, `progress before the PUT's answer: ${[...early]}`).toBeGreaterThanOrEqual(3);
    expect(samples.some((s) => /^[\d.]+ (KB|MB) \/ 3\.00 MB · [\d.]+ (KB|MB)\/s · \d+ s left$/.test(s.detail)), samples.map((s) => s.detail).join(' | ')).toBe(true);
    await waitUntil(() => {
      try {
        return readFileSync(path.join(w.root, 'in/single.bin')).equals(small.data);
      } catch {
        return false;
      }
    }, 10_000);
  }, 60_000);
});
