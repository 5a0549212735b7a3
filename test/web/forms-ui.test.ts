import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

/** snake_case words (wire keys such as mount_path, native_proxy) in a text. */
const wireKeys = (text: string) => text.match(/\b[a-z0-9]+(?:_[a-z0-9]+)+\b/g) ?? [];

describe.runIf(requireChromium('the manage form browser tests'))('manage forms speak to humans', () => {
  let w: WebSession;
  beforeAll(async () => {
    w = await openWebSession({ 'a.txt': 'a' });
  });
  afterAll(() => w?.close());

  const legends = () => w.page.locator('fieldset.field-group legend').allTextContents();

  it('storage form: labels, help and values in words, grouped, no wire keys or Go terms', async () => {
    await w.page.goto(`${w.base}/@manage/storages/add`);
    await w.page.locator('select[name=driver] option[value=Local]').waitFor({ state: 'attached' });
    await w.page.selectOption('select[name=driver]', 'Local');
    await w.page.locator('input[name=root_folder_path]').waitFor();
    expect(await legends()).toEqual(['Basics', 'Listing', 'Links and downloads', 'Local settings']);
    const form = await w.page.locator('form').innerText();
    expect(wireKeys(form)).toEqual([]);
    expect(form).not.toMatch(/goroutine/i);
    for (const label of ['Mount path', 'Cache lifetime (minutes)', 'WebDAV downloads', 'Download proxy address', 'Root folder', 'Thumbnails made at once']) expect(form).toContain(label);
    expect(await w.page.locator('select[name=webdav_policy] option').allTextContents()).toEqual(['Through the download proxy', 'Through this server']);
    expect(await w.page.locator('select[name=extract_folder] option').allTextContents()).toEqual(['—', 'Folders first', 'Folders last']);
    // the help is tied to its field for screen readers
    const describedBy = await w.page.locator('input[name=mount_path]').getAttribute('aria-describedby');
    expect(await w.page.locator(`#${describedBy}`).textContent()).toContain('Where the storage appears');
    // values still go over the wire as keys
    expect(await w.page.locator('select[name=webdav_policy]').inputValue()).toBe('native_proxy');
    await screenshot(w.page, '63-storage-form');
  });

  it('every settings page shows labels instead of keys', async () => {
    for (const group of ['site', 'style', 'preview', 'global', 'offline', 'sso', 'ldap', 's3']) {
      await w.page.goto(`${w.base}/@manage/settings/${group}`);
      await w.page.locator('form .field').first().waitFor();
      expect(wireKeys(await w.page.locator('form').innerText()), group).toEqual([]);
    }
    await w.page.goto(`${w.base}/@manage/settings/site`);
    expect(await w.page.locator('label[for=f-site_title]').innerText()).toBe('Site title');
    expect(await w.page.locator('select[name=pagination_type] option').allTextContents()).toEqual(['All at once', 'Pages', 'A "load more" button', 'More while scrolling']);
  });

  it('the path rule form is grouped and labelled', async () => {
    await w.page.goto(`${w.base}/@manage/metas`);
    await w.page.click('button:has-text("Add")');
    await w.page.locator('.dialog input[name=path]').waitFor();
    expect(await legends()).toEqual(['Access', 'Uploads', 'Hidden entries', 'Readme and header']);
    expect(wireKeys(await w.page.locator('.dialog').innerText())).toEqual([]);
  });
});
