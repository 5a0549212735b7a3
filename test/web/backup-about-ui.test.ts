// The Backup & restore, About and Other manage pages, the FTP and Traffic settings groups, the
// tab titles and the drivers' translated help texts (pages/manage/Backup.tsx, About.tsx, ...).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, savedDownload, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';
import { VERSION } from '../../src/version.js';

const PHONE = { width: 390, height: 844 };

describe.runIf(requireChromium('the backup and about pages browser test'))('Backup & restore, About, settings groups, tab titles', () => {
  let w: WebSession;
  const setting = async (key: string) => (await w.s.api('GET', `/api/admin/setting/get?key=${key}`, { token: w.admin })).data.value as string;
  const noOverflow = async () => expect(await w.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);

  beforeAll(async () => {
    w = await openWebSession({ 'docs/a.txt': 'a', 'b.txt': 'b' });
  });
  afterAll(async () => {
    await w?.close();
  });

  it('downloads an export through the page: a backup file with the users and storages', async () => {
    await w.page.goto(`${w.base}/@manage/backup`);
    const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.locator('button', { hasText: 'Download backup' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^atrium-backup-\d{4}-\d{2}-\d{2}\.json$/);
    const file = JSON.parse(readFileSync(await savedDownload(download), 'utf8'));
    expect(file.atrium).toMatchObject({ version: VERSION.atrium, format: 1 });
    expect(file.users.map((u: any) => u.username).sort()).toEqual(['admin', 'guest']);
    expect(file.storages.map((s: any) => s.mount_path)).toEqual(['/']);
    expect(file.settings.length).toBeGreaterThan(50);
  });

  it('restores a changed export from a file and shows the report per section', async () => {
    const file = (await w.s.inject({ method: 'GET', url: '/api/admin/backup/export', headers: { authorization: w.admin } })).json();
    file.settings.find((s: any) => s.key === 'site_title').value = 'Restored Site';
    file.storages.push({ ...file.storages[0], id: 77, mount_path: '/extra', remark: 'added by the restore' });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-backup-ui-'));
    const changed = path.join(dir, 'changed.json');
    writeFileSync(changed, JSON.stringify(file));
    await w.page.goto(`${w.base}/@manage/backup`);
    await w.page.locator('input[name=backup]').setInputFiles(changed);
    await w.page.locator('form button[type=submit]', { hasText: 'Restore' }).click();
    await w.page.locator('.dialog button', { hasText: 'OK' }).click();
    const report = w.page.locator('[data-testid=backup-report]');
    await report.waitFor();
    const cells = async (section: string) => (await report.locator(`tr[data-section=${section}] td`).allTextContents()).slice(1);
    expect(await cells('storages')).toEqual(['1', '1', '—']);
    expect(await cells('users')).toEqual(['0', '2', '0']);
    expect(await cells('settings')).toEqual(['—', '1', '0']);
    // the change holds on the server
    expect((await w.s.api('GET', '/api/public/settings')).data.site_title).toBe('Restored Site');
    const storages = (await w.s.api('GET', '/api/admin/storage/list', { token: w.admin })).data.content;
    expect(storages.find((s: any) => s.mount_path === '/extra')).toMatchObject({ remark: 'added by the restore', status: 'work' });
    await screenshot(w.page, '95-backup-restore');
  });

  it('refuses a file that is not a backup with the server\'s reason', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-backup-ui-'));
    const other = path.join(dir, 'package.json');
    writeFileSync(other, JSON.stringify({ name: 'not-a-backup', version: '1.0.0' }));
    await w.page.locator('input[name=backup]').setInputFiles(other);
    await w.page.locator('form button[type=submit]', { hasText: 'Restore' }).click();
    await w.page.locator('.dialog button', { hasText: 'OK' }).click();
    await expect.poll(() => w.page.locator('.toast.error').last().textContent()).toMatch(/^not a backup file/);
  });

  it('About shows the version, the database engine and Node.js', async () => {
    await w.page.goto(`${w.base}/@manage/about`);
    const value = (key: string) => w.page.locator(`.about-list [data-key=${key}] dd`).textContent();
    await expect.poll(() => value('version')).toBe(VERSION.atrium);
    expect(await value('database')).toBe(w.s.core.db.type);
    expect(await value('node')).toBe(process.version);
    expect(await w.page.locator('a', { hasText: 'API reference' }).getAttribute('href')).toBe('/openapi');
  });

  it('the Traffic group saves a speed limit; the FTP group is shown; Other shows and resets the admin token', async () => {
    await w.page.goto(`${w.base}/@manage/settings/traffic`);
    const speed = w.page.locator('input[name=max_client_download_speed]');
    await speed.waitFor();
    expect(await w.page.locator('label[for=f-max_client_download_speed]').textContent()).toContain('Download speed to clients (KiB/s)');
    await speed.fill('4096');
    await w.page.locator('button[type=submit]', { hasText: 'Save' }).click();
    await expect.poll(() => setting('max_client_download_speed')).toBe('4096');
    expect(await setting('max_server_upload_speed')).toBe('-1');
    await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'max_client_download_speed', value: '-1' }] });

    await w.page.goto(`${w.base}/@manage/settings/ftp`);
    await w.page.locator('input[name=ftp_public_host]').waitFor();
    expect(await w.page.locator('input[name=ftp_mandatory_tls]').count()).toBe(1);
    await w.page.goto(`${w.base}/@manage/settings/other`);
    await expect.poll(() => w.page.locator('input[name=token]').inputValue()).toBe(w.s.core.settings.get('token'));
    const old = w.s.core.settings.get('token');
    await w.page.locator('button', { hasText: 'Reset token' }).click();
    await w.page.locator('.dialog button', { hasText: 'OK' }).click();
    await expect.poll(() => w.s.core.settings.get('token')).not.toBe(old);
    await expect.poll(() => w.page.locator('input[name=token]').inputValue()).toBe(w.s.core.settings.get('token'));
    // the page's own session holds
    expect((await w.page.evaluate(() => fetch('/api/me', { headers: { Authorization: localStorage.getItem('token') ?? '' } }).then((r) => r.json()))).data.username).toBe('admin');
  });

  it('the tab title names the page: manage pages and the folder on screen', async () => {
    const title = (t: string) => expect.poll(() => w.page.title()).toBe(t);
    await w.page.goto(`${w.base}/@manage/storages`);
    await title('Storages | Manage | Restored Site');
    // following the menu changes it too
    await w.page.locator('nav.side a', { hasText: 'Traffic' }).click();
    await title('Traffic | Manage | Restored Site');
    await w.page.locator('nav.side a', { hasText: 'About' }).click();
    await title('About | Manage | Restored Site');
    await w.page.locator('nav.side a', { hasText: 'Backup & restore' }).click();
    await title('Backup & restore | Manage | Restored Site');
    await w.page.goto(`${w.base}/docs`);
    await w.row('a.txt').waitFor();
    await title('docs | Restored Site');
    await w.page.goto(`${w.base}/`);
    await title('Restored Site');
  });

  it("shows a driver's help translated in the chosen language, as the field's help text", async () => {
    await w.page.goto(`${w.base}/@manage/storages/add`);
    await w.page.locator('select[name=driver]').selectOption('Local');
    const help = w.page.locator('#f-directory_size-help');
    await expect.poll(() => help.textContent()).toBe('Show the size of each folder (the files below it); this might impact host performance');
    await w.page.evaluate(() => window.localStorage.setItem('lang', 'de'));
    await w.page.reload();
    await w.page.locator('select[name=driver]').selectOption('Local');
    await expect.poll(() => help.textContent()).toBe('Die Größe jedes Ordners (der Dateien darunter) anzeigen; das kann den Rechner belasten');
    expect(await w.page.locator('#f-directory_size').getAttribute('aria-describedby')).toBe('f-directory_size-help');
    // the field's label is translated too, and the help is no label text
    expect(await w.page.locator('label', { has: w.page.locator('#f-directory_size') }).textContent()).not.toContain('Größe jedes');
    // the settings groups shown here have their labels and help in German too
    await w.page.goto(`${w.base}/@manage/settings/traffic`);
    await expect.poll(() => w.page.locator('#f-max_client_download_speed-help').textContent()).toBe('KiB/s, von allen Übertragungen geteilt; -1 heißt unbegrenzt');
    expect(await w.page.locator('label[for=f-max_client_download_speed]').textContent()).toContain('Download-Geschwindigkeit zu Clients (KiB/s)');
    expect(await w.page.title()).toBe('Datenverkehr | Verwalten | Restored Site');
    await w.page.evaluate(() => window.localStorage.setItem('lang', 'en'));
  });

  it('fits a 390 px screen: backup (and its report), about, traffic, other', async () => {
    await w.page.setViewportSize(PHONE);
    for (const page of ['backup', 'about', 'settings/traffic', 'settings/other']) {
      await w.page.goto(`${w.base}/@manage/${page}`);
      await w.page.locator('.section-head h1').waitFor();
      await w.page.waitForTimeout(50);
      await noOverflow();
    }
    await screenshot(w.page, '96-phone-about');
    // and the restore's report, a table of cards at this width
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-backup-ui-'));
    const same = path.join(dir, 'same.json');
    writeFileSync(same, (await w.s.inject({ method: 'GET', url: '/api/admin/backup/export', headers: { authorization: w.admin } })).body);
    await w.page.goto(`${w.base}/@manage/backup`);
    await w.page.locator('input[name=backup]').setInputFiles(same);
    await w.page.locator('form button[type=submit]').click();
    await w.page.locator('.dialog button', { hasText: 'OK' }).click();
    await w.page.locator('[data-testid=backup-report] tr[data-section=passkeys]').waitFor();
    await noOverflow();
    await screenshot(w.page, '97-phone-backup-report');
  });
});
