import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the markdown and icon browser tests'))('markdown task lists and file-type icons', () => {
  let w: WebSession;
  const KINDS = { 'dir/': 'folder', 'a.md': 'markdown', 'b.ts': 'code', 'c.zip': 'archive', 'd.csv': 'sheet', 'e.pdf': 'pdf', 'f.txt': 'text', 'g.png': 'image', 'h.mp4': 'video', 'i.mp3': 'audio', 'j.bin': 'file' };
  beforeAll(async () => {
    const tree: Record<string, string> = { 'notes/todo.md': '# Todo\n\n- [ ] milk\n- [x] bread\n\n<input type="text" name="evil" value="x">\n' };
    for (const name of Object.keys(KINDS)) tree[`kinds/${name}`] = name.endsWith('/') ? '' : 'x';
    w = await openWebSession(tree);
  });
  afterAll(() => w?.close());

  it('renders GFM task lists as read-only checkboxes and keeps no other input', async () => {
    await w.page.goto(`${w.base}/notes/todo.md`);
    const boxes = w.page.locator('.md-preview input');
    await expect.poll(() => boxes.count()).toBe(2);
    expect(await boxes.evaluateAll((bs) => bs.map((b) => [(b as HTMLInputElement).type, (b as HTMLInputElement).checked, (b as HTMLInputElement).disabled]))).toEqual([
      ['checkbox', false, true],
      ['checkbox', true, true],
    ]);
    expect((await w.page.locator('.md-preview li.task-item').allTextContents()).map((s) => s.trim())).toEqual(['milk', 'bread']);
  });

  it('keeps the list in place when a selection shows its actions', async () => {
    await w.page.goto(`${w.base}/kinds`);
    await w.row('a.md').waitFor();
    const top = async () => (await w.row('a.md').boundingBox())!.y;
    const before = await top();
    await w.row('b.ts').locator('input[type=checkbox]').check();
    await w.page.locator('.selection-bar [data-action=rename]').waitFor();
    expect(await top()).toBe(before);
    await w.page.keyboard.press('Escape');
    await expect.poll(() => w.page.locator('.selection-bar').count()).toBe(0);
  });

  it('gives each kind of file its own icon and colour', async () => {
    await w.page.goto(`${w.base}/kinds`);
    await w.row('j.bin').waitFor();
    const seen = await w.page.locator('[data-testid=row]').evaluateAll((rows) =>
      rows.map((r) => {
        const svg = r.querySelector('.ficon svg')!;
        return [(r as HTMLElement).dataset.name, svg.getAttribute('data-kind'), getComputedStyle(svg).color, svg.querySelector('path')!.getAttribute('d')];
      }),
    );
    const byName = Object.fromEntries(seen.map(([n, kind]) => [n, kind]));
    expect(byName).toEqual(Object.fromEntries(Object.entries(KINDS).map(([n, k]) => [n.replace(/\/$/, ''), k])));
    expect(new Set(seen.map((s) => s[2])).size).toBe(Object.keys(KINDS).length);
    expect(new Set(seen.map((s) => s[3])).size).toBe(Object.keys(KINDS).length);
  });
});
