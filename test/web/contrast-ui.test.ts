import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

/**
 * Every visible element with text of its own, whose colour against the first opaque background
 * behind it is under WCAG AA (4.5:1, or 3:1 for large text). Disabled controls are exempt.
 */
const lowContrast = (page: Page) =>
  page.evaluate(() => {
    const rgb = (s: string) => (s.match(/[\d.]+/g) ?? []).map(Number);
    const lum = (c: number[]) => {
      const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(c[0]!) + 0.7152 * f(c[1]!) + 0.0722 * f(c[2]!);
    };
    const bgOf = (el: Element | null): number[] => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length >= 3 && (c.length < 4 || c[3]! > 0.9)) return c;
      }
      return rgb(getComputedStyle(document.body).backgroundColor);
    };
    const out: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim());
      if (!own || !(el as HTMLElement).checkVisibility() || el.closest('[disabled], .hljs, .art-video-player, svg, .cm-editor, option')) continue;
      const st = getComputedStyle(el);
      const fg = rgb(st.color);
      const bg = bgOf(el);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a! + 0.05) / (b! + 0.05);
      const large = parseFloat(st.fontSize) >= 24 || (parseFloat(st.fontSize) >= 18.66 && Number(st.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) out.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${el.textContent!.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return out;
  });

describe.runIf(requireChromium('the contrast browser tests'))('text contrast meets WCAG AA', () => {
  let w: WebSession;
  beforeAll(async () => {
    w = await openWebSession({ 'docs/a.txt': 'a', 'docs/sub/b.txt': 'b' });
    await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'off', password: 'p-1234567', disabled: true } });
  });
  afterAll(() => w?.close());

  it('the audit flags the old accent: white on #1890ff', async () => {
    await w.page.evaluate(() => window.localStorage.setItem('theme', 'light'));
    await w.page.goto(`${w.base}/@manage/users`);
    await w.page.locator('.manage section h1').waitFor();
    await w.page.addStyleTag({ content: 'a.button.primary, button.primary { background: #1890ff !important; }' });
    expect((await lowContrast(w.page)).join('\n')).toMatch(/^(a\.)?button\.primary "Add" 3\.\d\d$/m);
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: folder page with a selection, the manage users and storage pages`, async () => {
      await w.page.evaluate((t) => window.localStorage.setItem('theme', t), theme);
      await w.page.goto(`${w.base}/docs`);
      await w.row('a.txt').waitFor();
      await w.row('a.txt').locator('input[type=checkbox]').check();
      expect(await lowContrast(w.page)).toEqual([]);
      for (const p of ['users', 'storages', 'settings/site']) {
        await w.page.goto(`${w.base}/@manage/${p}`);
        await w.page.locator('.manage section h1').waitFor();
        await w.page.waitForTimeout(100);
        expect(await lowContrast(w.page), p).toEqual([]);
      }
    });
  }
});
