import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const waitFor = async (check: () => boolean, what: string, ms = 10_000) => {
  for (let i = 0; i < ms / 50 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check(), what).toBe(true);
};

describe.runIf(requireChromium('the work-from-the-folder browser tests'))('working from the folder one is in', () => {
  let w: WebSession;
  let files: FileServer;
  const disk = (...p: string[]) => path.join(w.root, ...p);
  const toast = (text: string) => w.page.locator('.toast', { hasText: text }).waitFor();

  beforeAll(async () => {
    w = await openWebSession({ 'work/a.txt': 'alpha', 'work/code.ts': 'const x = 1;\n', 'work/r1.txt': '1', 'work/r2.txt': '2', 'work/r3.txt': '3', 'work/r4.txt': '4', 'deep/one/two/': '', 'deep/side/': '' });
    files = await startFileServer({ files: { '/fetched.bin': { body: Buffer.from('offline bytes') } } });
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'offline_download_allow_private', value: 'true' }] })).code).toBe(200);
  });
  afterAll(async () => {
    await files?.close();
    await w?.close();
  });

  it('shows the folder in the tab title', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.row('a.txt').waitFor();
    expect(await w.page.title()).toBe('work | Atrium');
    await w.page.goto(`${w.base}/`);
    await expect.poll(() => w.page.title()).toBe('Atrium');
  });

  it('creates a text file here and edits it in the editor, saved with Ctrl+S', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.page.click('.actionbar button:has-text("New text file")');
    await w.page.fill('.dialog input[name=value]', 'notes.md');
    await w.page.click('.dialog button[type=submit]');
    await toast('Created notes.md');
    await waitFor(() => existsSync(disk('work', 'notes.md')), 'created on disk');
    const editor = w.page.locator('[data-testid=editor] .cm-content');
    await editor.waitFor();
    await editor.click();
    await w.page.keyboard.type('# Shopping\n\n- [ ] milk');
    await w.page.keyboard.press('Control+s');
    await toast('Saved notes.md');
    await waitFor(() => readFileSync(disk('work', 'notes.md'), 'utf8') === '# Shopping\n\n- [ ] milk', 'saved on disk');
    await screenshot(w.page, '68-editor');
    await w.page.click('[data-testid=editor] button:has-text("Close editor")');
    await w.page.locator('.md-preview h1', { hasText: 'Shopping' }).waitFor();
  });

  it('refuses a new file under an existing name, leaving the file alone', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.page.click('.actionbar button:has-text("New text file")');
    await w.page.fill('.dialog input[name=value]', 'a.txt');
    await w.page.click('.dialog button[type=submit]');
    await w.page.locator('.toast.error', { hasText: 'a.txt already exists' }).waitFor();
    expect(readFileSync(disk('work', 'a.txt'), 'utf8')).toBe('alpha');
  });

  it('edits an existing file from its context menu and shows the saved text', async () => {
    await w.row('code.ts').click({ button: 'right' });
    await w.page.click('[data-testid=context-menu] [data-action=edit]');
    const editor = w.page.locator('[data-testid=editor] .cm-content');
    await editor.waitFor();
    await expect.poll(() => editor.innerText()).toContain('const x = 1;');
    await editor.click();
    await w.page.keyboard.press('Control+a');
    await w.page.keyboard.type('const y = 2;');
    expect(await w.page.locator('[data-testid=editor]').innerText()).toContain('Unsaved changes');
    await w.page.click('[data-testid=editor] button:has-text("Save")');
    await toast('Saved code.ts');
    await waitFor(() => readFileSync(disk('work', 'code.ts'), 'utf8') === 'const y = 2;', 'saved on disk');
    await w.page.click('[data-testid=editor] button:has-text("Close editor")');
    await expect.poll(() => w.page.locator('[data-testid=preview-text]').innerText()).toContain('const y = 2;');
  });

  it('starts an offline download into this folder', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.page.click('.actionbar button:has-text("Offline download")');
    expect(await w.page.locator('.dialog h2').textContent()).toBe('Download into /work');
    await w.page.locator('.dialog select[name=tool] option[value=SimpleHttp]').waitFor({ state: 'attached' });
    await w.page.selectOption('.dialog select[name=tool]', 'SimpleHttp');
    expect(await w.page.locator('.dialog select[name=delete_policy] option').first().textContent()).toBe('Delete after the upload succeeded');
    await w.page.fill('.dialog textarea[name=urls]', `${files.base}/fetched.bin`);
    await w.page.click('.dialog button[type=submit]');
    await toast('Started 1 download(s) into /work');
    await waitFor(() => existsSync(disk('work', 'fetched.bin')) && readFileSync(disk('work', 'fetched.bin'), 'utf8') === 'offline bytes', 'downloaded into the folder', 20_000);
  });

  it('selects a range with shift-click', async () => {
    await w.page.goto(`${w.base}/work`);
    await w.row('r1.txt').locator('input[type=checkbox]').click();
    await w.row('r4.txt').locator('input[type=checkbox]').click({ modifiers: ['Shift'] });
    await expect.poll(() => w.page.locator('[data-testid=selected-count]').textContent()).toBe('4 selected');
    expect(await w.page.locator('[data-testid=row].selected').evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.name))).toEqual(['r1.txt', 'r2.txt', 'r3.txt', 'r4.txt']);
  });

  it('moves the selection with a folder tree, making a folder on the way', async () => {
    await w.page.click('.actionbar button[data-action=move]');
    const tree = w.page.locator('.dialog [role=tree]');
    // the tree opens along the path: /, and /work's siblings are listed
    await tree.locator('button[data-path="/deep"]').waitFor();
    expect(await tree.locator('button[data-path="/deep/one"]').count()).toBe(0);
    await tree.locator('li:has(> .tree-row button[data-path="/deep"]) > .tree-row .twist').click();
    // from the keyboard: → opens the focused folder, ↓ goes to the next one shown, Enter chooses
    await tree.locator('button[data-path="/deep/one"]').focus();
    await w.page.keyboard.press('ArrowRight');
    await tree.locator('button[data-path="/deep/one/two"]').waitFor();
    await w.page.keyboard.press('ArrowDown');
    expect(await w.page.evaluate(() => (document.activeElement as HTMLElement).dataset.path)).toBe('/deep/one/two');
    await w.page.keyboard.press('Enter');
    expect(await w.page.locator('[data-testid=picker-path]').textContent()).toBe('/deep/one/two');
    await w.page.click('.dialog button:has-text("New folder here")');
    await w.page.fill('.dialog input[name=folder]', 'three');
    await w.page.press('.dialog input[name=folder]', 'Enter');
    await waitFor(() => existsSync(disk('deep', 'one', 'two', 'three')), 'folder made in the picker');
    // the new folder is chosen and on screen
    await tree.locator('button[data-path="/deep/one/two/three"]').waitFor();
    expect(await w.page.locator('[data-testid=picker-path]').textContent()).toBe('/deep/one/two/three');
    await screenshot(w.page, '69-tree-picker');
    await w.page.click('.dialog button:has-text("Choose this folder")');
    await toast('Moved 4 item(s) to /deep/one/two/three');
    for (const n of ['r1.txt', 'r2.txt', 'r3.txt', 'r4.txt']) await waitFor(() => existsSync(disk('deep', 'one', 'two', 'three', n)) && !existsSync(disk('work', n)), n);
  });
});
