import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const png = (width: number, height: number, r: number) => sharp({ create: { width, height, channels: 3, background: { r, g: 120, b: 200 } } }).png().toBuffer();

describe.runIf(requireChromium('the image viewer browser tests'))('image viewer and photo wall', () => {
  let w: WebSession;
  const img = () => w.page.locator('[data-testid=preview-image]');
  const transform = () => img().evaluate((e) => (e as HTMLElement).style.transform);

  beforeAll(async () => {
    w = await openWebSession({ 'pics/a-wide.png': await png(400, 200, 10), 'pics/b-tall.png': await png(200, 400, 90), 'pics/c-square.png': await png(300, 300, 180), 'pics/notes.txt': 'n' });
  });
  afterAll(() => w?.close());

  it('zooms with the buttons, the wheel and the keys, pans a zoomed image, rotates and resets', async () => {
    await w.page.goto(`${w.base}/pics/a-wide.png`);
    await expect.poll(() => img().evaluate((e: HTMLImageElement) => e.naturalWidth)).toBe(400);
    await w.page.click('button[aria-label="Zoom in"]');
    expect(await w.page.locator('[data-testid=zoom]').textContent()).toBe('125%');
    expect(await transform()).toContain('scale(1.25)');
    const box = (await w.page.locator('.gallery').boundingBox())!;
    await w.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await w.page.mouse.wheel(0, -100);
    await expect.poll(() => w.page.locator('[data-testid=zoom]').textContent()).toBe('156%');
    // a drag moves the zoomed image (and does not switch images)
    await w.page.mouse.down();
    await w.page.mouse.move(box.x + box.width / 2 + 80, box.y + box.height / 2 + 30, { steps: 5 });
    await w.page.mouse.up();
    expect(await transform()).toContain('translate(80px, 30px)');
    expect(w.page.url()).toMatch(/a-wide\.png$/);
    await w.page.click('button[aria-label="Rotate"]');
    expect(await transform()).toContain('rotate(90deg)');
    await w.page.keyboard.press('r');
    expect(await transform()).toContain('rotate(180deg)');
    await w.page.keyboard.press('0');
    expect(await transform()).toBe('translate(0px, 0px) rotate(0deg) scale(1)');
    await w.page.keyboard.press('+');
    expect(await w.page.locator('[data-testid=zoom]').textContent()).toBe('125%');
    await w.page.keyboard.press('-');
    expect(await w.page.locator('[data-testid=zoom]').textContent()).toBe('100%');
  });

  it('draws the fullscreen and rotate buttons as icons, not as a glyph the font may lack', async () => {
    for (const label of ['Fullscreen', 'Rotate']) {
      const button = w.page.locator(`button[aria-label="${label}"]`);
      expect((await button.textContent())!.trim(), label).toBe('');
      const path = button.locator('svg path');
      expect((await path.getAttribute('d'))!.length, label).toBeGreaterThan(10);
      const box = await path.evaluate((p: SVGPathElement) => {
        const b = p.getBBox();
        return { width: b.width, height: b.height };
      });
      expect(box.width, label).toBeGreaterThan(10);
      expect(box.height, label).toBeGreaterThan(10);
    }
  });

  it('goes fullscreen and back', async () => {
    await w.page.click('button[aria-label="Fullscreen"]');
    await expect.poll(() => w.page.evaluate(() => document.fullscreenElement?.className ?? '')).toContain('gallery');
    await w.page.keyboard.press('f');
    await expect.poll(() => w.page.evaluate(() => document.fullscreenElement === null)).toBe(true);
  });

  it('swipes to the next and previous image', async () => {
    const box = (await w.page.locator('.gallery').boundingBox())!;
    const swipe = async (from: number, to: number) => {
      await w.page.mouse.move(box.x + from, box.y + box.height / 2);
      await w.page.mouse.down();
      await w.page.mouse.move(box.x + to, box.y + box.height / 2 + 5, { steps: 6 });
      await w.page.mouse.up();
    };
    await swipe(box.width / 2 + 100, box.width / 2 - 100);
    await w.page.waitForURL(/b-tall\.png$/);
    await expect.poll(() => img().evaluate((e: HTMLImageElement) => e.naturalHeight)).toBe(400);
    await swipe(box.width / 2 - 100, box.width / 2 + 100);
    await w.page.waitForURL(/a-wide\.png$/);
  });

  it('lays a picture folder out as a photo wall, each tile as wide as its picture', async () => {
    await w.page.goto(`${w.base}/pics`);
    await w.page.click('[data-testid=wall-toggle]');
    const tiles = w.page.locator('[data-testid=wall] .tile');
    await expect.poll(() => tiles.count()).toBe(3);
    await expect.poll(() => tiles.evaluateAll((ts) => ts.every((t) => (t.querySelector('img') as HTMLImageElement).complete))).toBe(true);
    const widths = Object.fromEntries(await tiles.evaluateAll((ts) => ts.map((t) => [(t as HTMLElement).dataset.name, t.getBoundingClientRect().width])));
    const heights = await tiles.evaluateAll((ts) => ts.map((t) => Math.round(t.getBoundingClientRect().height)));
    expect(new Set(heights).size).toBe(1);
    // 2:1, 1:2 and 1:1 pictures on one row of the same height
    expect(widths['a-wide.png'] / widths['b-tall.png']).toBeCloseTo(4, 0);
    expect(widths['c-square.png'] / widths['b-tall.png']).toBeCloseTo(2, 0);
    expect(await w.page.locator('.wall-note').textContent()).toContain('1 other');
    await screenshot(w.page, '64-photo-wall');
    await tiles.first().click();
    await w.page.waitForURL(/a-wide\.png$/);
    // a folder without pictures shows its list even with the wall chosen
    await w.page.goto(`${w.base}/`);
    await w.row('pics').waitFor();
    expect(await w.page.locator('[data-testid=wall-toggle]').count()).toBe(0);
    // back to the list for the other tests
    await w.page.goto(`${w.base}/pics`);
    await w.page.click('[data-testid=wall-toggle]');
    await w.row('notes.txt').waitFor();
  });
});
