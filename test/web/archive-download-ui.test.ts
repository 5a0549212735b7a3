import { readFileSync } from 'node:fs';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { requireChromium, savedDownload, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

/** name → bytes of every file entry of a zip (folders end with /). */
function unzip(file: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out: Record<string, string> = {};
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) return (out[e.fileName] = ''), zip.readEntry();
        zip.openReadStream(e, (err2, rs) => {
          if (err2) return reject(err2);
          const chunks: Buffer[] = [];
          rs.on('data', (c: Buffer) => chunks.push(c));
          rs.on('end', () => ((out[e.fileName] = Buffer.concat(chunks).toString('utf8')), zip.readEntry()));
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

describe.runIf(requireChromium('the folder download browser tests'))('download a folder or a selection as one zip, QR code of a link', () => {
  let w: WebSession;
  const TREE = { 'box/album/one.jpg': 'ONE', 'box/album/two/three.jpg': 'THREE', 'box/album/nothing/': '', 'box/readme.txt': 'read me', 'box/other.txt': 'other' };

  beforeAll(async () => {
    w = await openWebSession(TREE);
  });
  afterAll(() => w?.close());

  it('downloads the selection (a folder and a file) as one zip whose bytes match the disk', async () => {
    await w.page.goto(`${w.base}/box`);
    await w.row('album').locator('input[type=checkbox]').check();
    await w.row('readme.txt').locator('input[type=checkbox]').check();
    const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.click('.actionbar button[data-action=download_zip]')]);
    expect(download.suggestedFilename()).toBe('box.zip');
    await w.page.locator('.toast', { hasText: 'Downloading 3 file(s)' }).waitFor();
    const files = await unzip(await savedDownload(download));
    expect(files).toEqual({ 'album/one.jpg': 'ONE', 'album/two/three.jpg': 'THREE', 'album/nothing/': '', 'readme.txt': 'read me' });
    for (const [name, bytes] of Object.entries(files)) if (bytes) expect(readFileSync(`${w.root}/box/${name}`, 'utf8')).toBe(bytes);
  });

  it('downloads one folder from its context menu', async () => {
    await w.page.keyboard.press('Escape'); // clears the selection
    await expect.poll(() => w.page.locator('[data-testid=selected-count]').count()).toBe(0);
    await w.row('album').click({ button: 'right' });
    const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.click('[data-testid=context-menu] [data-action=download_zip]')]);
    expect(download.suggestedFilename()).toBe('album.zip');
    expect(Object.keys(await unzip(await savedDownload(download))).sort()).toEqual(['album/nothing/', 'album/one.jpg', 'album/two/three.jpg']);
  });

  it('shows the QR code of a file link, the same code the link encodes', async () => {
    await w.row('other.txt').click({ button: 'right' });
    await w.page.click('[data-testid=context-menu] [data-action=qr]');
    const link = await w.page.locator('.dialog .qr input').inputValue();
    expect(link.split('?')[0]).toBe(`${w.base}/d/box/other.txt`);
    expect(await (await fetch(link)).text()).toBe('other');
    // the modules drawn are those the qrcode package encodes for this link
    const drawn = await w.page.locator('[data-testid=qr] path').evaluateAll((ps) => ps.map((p) => p.getAttribute('d')));
    const expected = [...(await QRCode.toString(link, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' })).matchAll(/ d="([^"]+)"/g)].map((m) => m[1]);
    expect(drawn).toEqual(expected);
    expect(drawn.join('').length).toBeGreaterThan(200);
    await screenshot(w.page, '62-qr');
    await w.page.keyboard.press('Escape');
  });
});
