import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { hasProgram } from '../helpers/daemons.js';
import { wav, webmClip } from '../helpers/media.js';
import type { TestServer } from '../helpers/server.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const enabled = requireChromium('the media and bulk-operation browser tests');
const hasFfmpeg = hasProgram('ffmpeg');
if (!hasFfmpeg) {
  if (process.env.CI) throw new Error('CI needs ffmpeg for the video preview test (.ci/packages.sh installs it)');
  console.warn('\n*** SKIPPING the video preview test: ffmpeg is not installed ***\n');
}

describe.runIf(enabled)('media previews and bulk operations in the web UI', () => {
  let w: WebSession;
  let s: TestServer;
  let base: string;
  let root: string;
  let scratch: string;
  let ctx: BrowserContext;
  let page: Page;
  const row = (name: string) => w.row(name);
  const waitForDisk = async (p: string, exists = true) => {
    for (let i = 0; i < 100 && existsSync(p) !== exists; i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(p), p).toBe(exists);
  };

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'atrium-media-'));
    w = await openWebSession({
      'media/sound.wav': wav(2),
      ...(hasFfmpeg ? { 'media/clip.webm': webmClip() } : {}),
      'bulk/report-1.txt': 'one',
      'bulk/report-2.txt': 'two',
      'bulk/keep.txt': 'keep',
      'copies/': '',
      'drop/': '',
      'documented/README.md': '# From the file\n\n<script>window.__pwned = 1</script>',
      'documented/other.txt': 'o',
    });
    ({ s, base, root, ctx, page } = w);
  });
  afterAll(async () => {
    await w?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('plays audio with the HTML5 player through the raw link', async () => {
    await page.goto(`${base}/media/sound.wav`);
    const audio = page.locator('[data-testid=preview-audio] video');
    await expect.poll(() => audio.evaluate((a: HTMLAudioElement) => a.readyState >= 1 && Math.round(a.duration))).toBe(2);
  });

  it.runIf(hasFfmpeg)('plays video with the HTML5 player, seeking with range requests', async () => {
    const ranges: string[] = [];
    page.on('request', (r) => r.url().includes('clip.webm') && r.headers().range && ranges.push(r.headers().range!));
    await page.goto(`${base}/media/clip.webm`);
    const video = page.locator('[data-testid=preview-video] video');
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.readyState >= 1 && v.videoWidth)).toBe(160);
    expect(ranges.length).toBeGreaterThan(0);
    await screenshot(page, '40-video');
  });

  it('batch-renames the selected files with a regular expression', async () => {
    await page.goto(`${base}/bulk`);
    await row('report-1.txt').locator('input[type=checkbox]').check();
    await row('report-2.txt').locator('input[type=checkbox]').check();
    await page.click('.actionbar button:has-text("Batch rename")');
    await page.fill('.dialog input[name=find]', '^report-(\\d)');
    await page.fill('.dialog input[name=replace]', 'summary-$1');
    await expect.poll(() => page.locator('.dialog .rename-preview li').allTextContents()).toEqual(['report-1.txt → summary-1.txt', 'report-2.txt → summary-2.txt']);
    await screenshot(page, '41-batch-rename');
    await page.click('.dialog button[type=submit]');
    await row('summary-2.txt').waitFor();
    await waitForDisk(path.join(root, 'bulk', 'summary-1.txt'));
    await waitForDisk(path.join(root, 'bulk', 'report-1.txt'), false);
    expect(existsSync(path.join(root, 'bulk', 'keep.txt'))).toBe(true);
  });

  it('copies several selected files at once (Ctrl+A selects all)', async () => {
    await page.locator('[data-testid=row]').first().waitFor();
    await page.keyboard.press('Control+a');
    await expect.poll(() => page.locator('[data-testid=selected-count]').textContent()).toBe('3 selected');
    await page.click('.actionbar button:has-text("Copy")');
    await page.click('.dialog button[data-path="/copies"]');
    await page.click('.dialog button:has-text("Choose this folder")');
    for (const name of ['keep.txt', 'summary-1.txt', 'summary-2.txt']) await waitForDisk(path.join(root, 'copies', name));
    expect(readFileSync(path.join(root, 'copies', 'summary-2.txt'), 'utf8')).toBe('two');
    expect(existsSync(path.join(root, 'bulk', 'keep.txt'))).toBe(true);
  });

  it('uploads a dropped file', async () => {
    await page.goto(`${base}/drop`);
    await page.locator('.empty').waitFor();
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped bytes'], 'dropped.txt', { type: 'text/plain' }));
      const target = document.querySelector('.browser')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await row('dropped.txt').waitFor();
    expect(readFileSync(path.join(root, 'drop', 'dropped.txt'), 'utf8')).toBe('dropped bytes');
  });

  it('cancels an upload in flight: nothing lands under the real name', async () => {
    const local = path.join(scratch, 'cancel-me.bin');
    writeFileSync(local, Buffer.alloc(8 * 1024 * 1024, 7));
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 512 * 1024 });
    await page.locator('[data-testid=upload-input]').setInputFiles(local);
    const item = page.locator('[data-testid=upload-item]', { hasText: 'cancel-me.bin' });
    await expect.poll(() => item.locator('progress').evaluate((p: HTMLProgressElement) => p.value)).toBeGreaterThan(0);
    await item.locator('button[aria-label=Cancel]').click();
    await expect.poll(() => item.locator('.status').textContent()).toBe('Canceled');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await page.waitForTimeout(500);
    expect(existsSync(path.join(root, 'drop', 'cancel-me.bin'))).toBe(false);
  });

  it('renders a README.md of the folder below the list and hides it by the hide_files setting', async () => {
    await page.goto(`${base}/documented`);
    await row('other.txt').waitFor();
    await expect.poll(() => page.locator('.readme h1').textContent()).toBe('From the file');
    expect(await page.locator('[data-testid=row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')))).toEqual(['other.txt']);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('adds an SSH key in the profile', async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl laptop';
    await page.goto(`${base}/@manage/profile`);
    // The profile has several key cards (SSH, S3, app passwords): this one is the SSH keys'.
    const card = page.locator('[data-testid=ssh-keys]');
    await card.locator('input[name=title]').fill('laptop');
    await card.locator('textarea[name=key]').fill(key);
    await card.locator('button:has-text("Add")').click();
    await expect.poll(() => card.locator('table.data').textContent()).toContain('SHA256:');
    const admin = await s.login();
    expect((await s.api('GET', '/api/me/sshkey/list', { token: admin })).data.content).toMatchObject([{ title: 'laptop' }]);
    await screenshot(page, '42-profile');
  });
});
