import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the upload safety browser tests'))('uploads never replace a file unasked', () => {
  let w: WebSession;
  const disk = (...p: string[]) => readFileSync(path.join(w.root, ...p), 'utf8');
  const upload = (files: Array<{ name: string; text: string }>) =>
    w.page.locator('[data-testid=upload-input]').setInputFiles(files.map((f) => ({ name: f.name, mimeType: 'text/plain', buffer: Buffer.from(f.text) })));
  const item = (name: string) => w.page.locator('[data-testid=upload-item]', { hasText: name });

  beforeAll(async () => {
    w = await openWebSession({ 'up/keep.txt': 'original', 'up/a.txt': 'A', 'up/b.txt': 'B' });
  });
  afterAll(() => w?.close());

  it('has "overwrite existing files" off by default', async () => {
    await w.page.goto(`${w.base}/up`);
    const box = w.page.locator('.upload-options label', { hasText: 'Overwrite existing files' }).locator('input');
    expect(await box.isChecked()).toBe(false);
  });

  it('asks before replacing, and keeps the file when told to', async () => {
    await upload([{ name: 'keep.txt', text: 'replacement' }]);
    const dialog = w.page.locator('[data-testid=replace-dialog]');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('keep.txt already exists here');
    await screenshot(w.page, '72-replace-question');
    // the safe answer has the focus
    expect(await w.page.evaluate(() => document.activeElement?.textContent)).toBe('Keep the existing one');
    await w.page.keyboard.press('Enter');
    await expect.poll(() => item('keep.txt').locator('.status').textContent()).toBe('Kept the existing file');
    expect(disk('up', 'keep.txt')).toBe('original');
  });

  it('replaces when the user says so', async () => {
    await upload([{ name: 'keep.txt', text: 'replacement' }]);
    await w.page.locator('[data-testid=replace-dialog] button:has-text("Replace")').click();
    await expect.poll(() => disk('up', 'keep.txt')).toBe('replacement');
  });

  it('answers once for a whole batch, and uploads new files without asking', async () => {
    await w.page.click('button:has-text("Clear finished")');
    // the folder's names are looked up once for the batch, not once per file
    const lookups: string[] = [];
    const seen = (r: { url(): string; postData(): string | null }) => {
      const route = new URL(r.url()).pathname;
      if (/\/api\/fs\/(list|get)$/.test(route)) lookups.push(`${route} ${JSON.parse(r.postData() ?? '{}').path}`);
    };
    w.page.on('request', seen);
    await upload([
      { name: 'a.txt', text: 'new A' },
      { name: 'b.txt', text: 'new B' },
      { name: 'c.txt', text: 'new C' },
    ]);
    const dialog = w.page.locator('[data-testid=replace-dialog]');
    await dialog.waitFor();
    await dialog.locator('input[name=all]').check();
    await dialog.locator('button:has-text("Keep the existing one")').click();
    await expect.poll(() => item('c.txt').locator('.status').textContent()).toBe('Done');
    await expect.poll(() => w.page.locator('[data-testid=upload-item] .status').allTextContents()).toEqual(['Kept the existing file', 'Kept the existing file', 'Done']);
    expect(await dialog.count()).toBe(0);
    expect([disk('up', 'a.txt'), disk('up', 'b.txt'), disk('up', 'c.txt')]).toEqual(['A', 'B', 'new C']);
    w.page.off('request', seen);
    // no question per file: only the folder itself is looked up (before the uploads, and to refresh it after)
    expect(lookups.filter((l) => !l.endsWith(' /up'))).toEqual([]);
    expect(lookups).toContain('/api/fs/list /up');
  });

  it('replaces without asking when the user ticked "overwrite existing files"', async () => {
    await w.page.locator('.upload-options label', { hasText: 'Overwrite existing files' }).locator('input').check();
    await upload([{ name: 'a.txt', text: 'forced A' }]);
    await expect.poll(() => disk('up', 'a.txt')).toBe('forced A');
    expect(await w.page.locator('[data-testid=replace-dialog]').count()).toBe(0);
  });
});
