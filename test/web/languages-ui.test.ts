import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webI18n, webLocale } from '../helpers/web-dictionaries.js';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

/** Text of every visible text node (trimmed, non-empty) plus visible aria-labels and placeholders. */
const visibleTexts = (page: Page) =>
  page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent?.trim();
      if (!text || !el || el.closest('script, style, option') || !el.checkVisibility()) continue;
      out.push(text);
    }
    for (const el of document.querySelectorAll('[aria-label], [placeholder], [title]')) {
      if (!(el as HTMLElement).checkVisibility()) continue;
      for (const a of ['aria-label', 'placeholder', 'title']) if (el.getAttribute(a)) out.push(el.getAttribute(a)!);
    }
    return out;
  });

describe.runIf(requireChromium('the language browser tests'))('languages', () => {
  let w: WebSession;
  let english: Record<string, string>;
  let zhCN: Record<string, string>;
  /** Visible English strings of the dictionary, but those a translation keeps as they are (OK, LDAP, S3…). */
  const stillEnglish = (texts: string[], dict: Record<string, string>) => {
    const kept = new Set(Object.entries(english).filter(([k, v]) => dict[k] === v).map(([, v]) => v));
    const all = new Set(Object.values(english).filter((v) => !kept.has(v)));
    return texts.filter((t) => all.has(t) || all.has(t.replace(/ \*$/, '')));
  };

  beforeAll(async () => {
    const { english: ui, fields } = await webI18n();
    english = { ...fields, ...ui };
    zhCN = await webLocale('zh-CN');
    w = await openWebSession({ 'docs/a.txt': 'a', 'docs/sub/b.txt': 'b' });
  });
  afterAll(() => w?.close());

  it('follows the browser language when nothing was chosen', async () => {
    const ctx = await w.browser.newContext({ locale: 'de-DE' });
    const page = await ctx.newPage();
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await page.goto(`${w.base}/docs`);
    await page.locator('[data-testid=row][data-name="a.txt"]').waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('de');
    expect(await page.locator('button', { hasText: 'Neuer Ordner' }).count()).toBe(1);
    expect(await page.locator('[data-testid=language]').inputValue()).toBe('de');
    await ctx.close();
  });

  it('switches every visible string of the folder page, its menu and the manage forms', async () => {
    await w.page.goto(`${w.base}/docs`);
    await w.row('a.txt').waitFor();
    const before = await visibleTexts(w.page);
    expect(before).toContain('New folder');
    await w.page.selectOption('[data-testid=language]', 'zh-CN');
    await w.page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
    await w.row('a.txt').waitFor();
    expect(stillEnglish(await visibleTexts(w.page), zhCN)).toEqual([]);
    expect(await w.page.locator('button', { hasText: '新建文件夹' }).count()).toBe(1);

    await w.row('a.txt').click({ button: 'right' });
    expect(stillEnglish(await visibleTexts(w.page), zhCN)).toEqual([]);
    expect(await w.page.locator('[data-testid=context-menu] [data-action=rename]').textContent()).toBe('重命名');
    await w.page.keyboard.press('Escape');
    await screenshot(w.page, '67-zh-CN-folder');

    await w.page.goto(`${w.base}/@manage/storages/add`);
    await w.page.locator('select[name=driver] option[value=Local]').waitFor({ state: 'attached' });
    await w.page.selectOption('select[name=driver]', 'Local');
    await w.page.locator('input[name=root_folder_path]').waitFor();
    expect(stillEnglish(await visibleTexts(w.page), zhCN)).toEqual([]);
    expect(await w.page.locator('label[for=f-mount_path]').innerText()).toContain('挂载路径');

    for (const page of ['tasks', 'users', 'groups', 'metas', 'hooks', 'profile', 'settings/site', 'settings/style', 'settings/preview', 'settings/global', 'settings/offline', 'settings/sso', 'settings/ldap', 'settings/s3', 'settings/ftp', 'settings/traffic', 'settings/other', 'backup', 'about']) {
      await w.page.goto(`${w.base}/@manage/${page}`);
      await w.page.locator('.manage section h1').waitFor();
      await w.page.waitForTimeout(100);
      // the users "admin" and "guest" are names (data), not the role words they spell
      const texts = (await visibleTexts(w.page)).filter((x) => page !== 'users' || !['admin', 'guest'].includes(x));
      expect(stillEnglish(texts, zhCN), page).toEqual([]);
      if (page === 'users') expect(texts).toEqual(expect.arrayContaining(['管理员', '访客']));
    }

    // and back: the choice is kept across loads
    await w.page.selectOption('[data-testid=language]', 'en');
    await w.page.waitForFunction(() => document.documentElement.lang === 'en');
    await w.page.goto(`${w.base}/docs`);
    await w.page.locator('button', { hasText: 'New folder' }).waitFor();
  });
});
