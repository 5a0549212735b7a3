// Office documents open in the online office (issue #43, its web part): the page POSTs the WOPI
// access_token and access_token_ttl as a form into an iframe at the editor's address (WOPISrc in
// its query), as WOPI hosts do. The office here is a fake one the test serves on loopback: its
// discovery lists the office extensions, and its editor page records what it was posted and calls
// CheckFileInfo and GetFile back with the token, showing what they answered.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const EXTS = ['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'doc', 'xls', 'ppt', 'rtf', 'csv'];
const PHONE = { width: 390, height: 844 };
const PASS = 'reader-pass-1';

interface Posted {
  office: string;
  action: string;
  wopiSrc: string;
  lang: string;
  method: string;
  contentType: string;
  form: Record<string, string>;
  fileInfo: Record<string, unknown>;
  bytes: number;
}

/** A discovery XML with a view and an edit action per extension, as Collabora's (placeholders, entities). */
const discovery = (base: string, office: string, exts: string[]) => `<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery><net-zone name="external-http"><app name="${office}">
${exts.map((e) => `<action name="view" ext="${e}" urlsrc="${base}/${office}/view?&lt;ui=UI_LLCC&amp;&gt;"/><action name="edit" ext="${e}" requires="locks,update" urlsrc="${base}/${office}/edit?&lt;ui=UI_LLCC&amp;&gt;"/>`).join('\n')}
</app></net-zone></wopi-discovery>`;

/** The fake office: discovery, and an editor page that records the POST and calls the host back. */
async function fakeOffice(): Promise<{ base: string; posted: Posted[]; close(): Promise<void> }> {
  const posted: Posted[] = [];
  let base = '';
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, base);
    const [, office, action] = url.pathname.split('/');
    if (action === 'discovery') {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(discovery(base, office!, office === 'Other' ? ['odt'] : EXTS));
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    const form = Object.fromEntries(new URLSearchParams(body));
    const wopiSrc = url.searchParams.get('WOPISrc') ?? '';
    const token = encodeURIComponent(form.access_token ?? '');
    const info = await fetch(`${wopiSrc}?access_token=${token}`);
    const fileInfo = info.ok ? ((await info.json()) as Record<string, unknown>) : { status: info.status };
    const contents = await fetch(`${wopiSrc}/contents?access_token=${token}`);
    const bytes = contents.ok ? (await contents.arrayBuffer()).byteLength : -contents.status;
    posted.push({ office: office!, action: action!, wopiSrc, lang: url.searchParams.get('ui') ?? '', method: req.method!, contentType: req.headers['content-type'] ?? '', form, fileInfo, bytes });
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      `<!doctype html><title>fake office</title><h1 id="name">${String(fileInfo.BaseFileName)}</h1><p id="write">${String(fileInfo.UserCanWrite)}</p><p id="bytes">${bytes}</p><p id="office">${office}/${action}</p>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, posted, close: () => new Promise((r) => server.close(() => r())) };
}

/** The office's frame once its page answered. */
async function officeFrame(page: Page): Promise<Frame> {
  const el = page.locator('iframe[data-testid=office-frame]');
  await el.waitFor();
  const frame = (await el.elementHandle())!;
  for (let i = 0; i < 100; i++) {
    const f = await frame.contentFrame();
    if (f && (await f.locator('#name').count())) return f;
    await page.waitForTimeout(100);
  }
  throw new Error('the office page did not load in the frame');
}

describe.runIf(requireChromium('the online office browser tests'))('office documents in the online office (WOPI)', () => {
  let w: WebSession;
  let office: Awaited<ReturnType<typeof fakeOffice>>;
  const tree: Record<string, string> = { 'notes.txt': 'plain text' };
  for (const e of EXTS) tree[`docs/report.${e}`] = `${e} document bytes`;

  const setSettings = async (pairs: Record<string, string>) => {
    const r = await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: Object.entries(pairs).map(([key, value]) => ({ key, value })) });
    expect(r.code).toBe(200);
  };

  beforeAll(async () => {
    office = await fakeOffice();
    w = await openWebSession(tree);
    await setSettings({
      wopi_enabled: 'true',
      url_fetch_allow_private: 'true',
      wopi_services: JSON.stringify([
        { name: 'Office', discovery_url: `${office.base}/Office/discovery`, extensions: [] },
        { name: 'Other', discovery_url: `${office.base}/Other/discovery`, extensions: ['odt'] },
      ]),
    });
    // a reader: read bits only, no write
    expect((await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'reader', password: PASS, base_path: '/', permission: 0 } })).code).toBe(200);
  });
  afterAll(async () => {
    await w?.close();
    await office?.close();
  });

  it('opens a document for editing: the form POSTs the token and its expiry to the editor, with WOPISrc', async () => {
    office.posted.length = 0;
    await w.page.goto(`${w.base}/docs/report.docx`);
    const frame = await officeFrame(w.page);
    expect(await frame.locator('#name').innerText()).toBe('report.docx');
    expect(await frame.locator('#write').innerText()).toBe('true');
    expect(await frame.locator('#bytes').innerText()).toBe(String('docx document bytes'.length));
    expect(await w.page.locator('[data-testid=office-mode]').innerText()).toBe('Editing');
    expect(office.posted).toHaveLength(1);
    const p = office.posted[0]!;
    expect(p).toMatchObject({ office: 'Office', action: 'edit', method: 'POST', contentType: 'application/x-www-form-urlencoded', lang: 'en' });
    expect(p.wopiSrc).toMatch(new RegExp(`^${w.base}/api/wopi/files/[\\w-]+$`));
    expect(Object.keys(p.form).sort()).toEqual(['access_token', 'access_token_ttl']);
    expect(p.form.access_token!.length).toBeGreaterThan(20);
    expect(Number(p.form.access_token_ttl)).toBeGreaterThan(Date.now());
    // the token is posted, never in the frame's address
    expect(await w.page.locator('iframe[data-testid=office-frame]').getAttribute('src')).toBeNull();
    expect(p.wopiSrc).not.toContain(p.form.access_token!);
    await screenshot(w.page, '43-office-edit');
  });

  it('opens every office document type the service lists; other files keep their own preview', async () => {
    for (const e of EXTS) {
      office.posted.length = 0;
      await w.page.goto(`${w.base}/docs/report.${e}`);
      const frame = await officeFrame(w.page);
      expect(await frame.locator('#name').innerText(), e).toBe(`report.${e}`);
      expect(office.posted.map((p) => p.wopiSrc.length > 0 && p.action)).toEqual(['edit']);
    }
    await w.page.goto(`${w.base}/notes.txt`);
    await w.page.locator('[data-testid=preview-text]').waitFor();
    expect(await w.page.locator('iframe[data-testid=office-frame]').count()).toBe(0);
  });

  it('offers the services that open a type, and opens it again in the one chosen', async () => {
    office.posted.length = 0;
    await w.page.goto(`${w.base}/docs/report.odt`);
    await officeFrame(w.page);
    const select = w.page.locator('[data-testid=office-service]');
    expect(await select.locator('option').allInnerTexts()).toEqual(['Office', 'Other']);
    await select.selectOption('Other');
    await expect.poll(() => office.posted.map((p) => p.office)).toEqual(['Office', 'Other']);
    const frame = await officeFrame(w.page);
    await expect.poll(() => frame.locator('#office').innerText()).toBe('Other/edit');
    // a type only one service opens has no choice to make
    await w.page.goto(`${w.base}/docs/report.xlsx`);
    await officeFrame(w.page);
    expect(await select.count()).toBe(0);
  });

  it('opens read-only for a user without the write bit, and in their language', async () => {
    const ctx = await w.browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => (window.localStorage.setItem('token', t), window.localStorage.setItem('lang', 'de')), await w.s.login('reader', PASS));
    office.posted.length = 0;
    await page.goto(`${w.base}/docs/report.docx`);
    const frame = await officeFrame(page);
    expect(await frame.locator('#write').innerText()).toBe('false');
    expect(await page.locator('[data-testid=office-mode]').innerText()).toBe('Nur lesen');
    expect(office.posted[0]).toMatchObject({ action: 'view', lang: 'de' });
    await ctx.close();
  });

  it("opens a shared document read-only for the share's visitor", async () => {
    await setSettings({ share_preview: 'true' });
    const made = await w.s.api('POST', '/api/share/create', { token: w.admin, body: { files: ['/docs'], pwd: 'code-1' } });
    expect(made.code).toBe(200);
    const ctx = await w.browser.newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@s/${made.data.id}`);
    await page.fill('input[name=code]', 'code-1');
    await page.click('button[type=submit]');
    await page.locator('[data-testid=share-list]').waitFor();
    office.posted.length = 0;
    await page.click('a:has-text("report.pptx")');
    await page.locator('[data-testid=share-preview], iframe[data-testid=office-frame], .error').first().waitFor();
    if (await page.locator('[data-testid=share-preview]').count()) await page.click('[data-testid=share-preview]');
    await screenshot(page, '43-office-share');
    const frame = await officeFrame(page);
    expect(await frame.locator('#name').innerText()).toBe('report.pptx');
    expect(await frame.locator('#write').innerText()).toBe('false');
    expect(office.posted[0]).toMatchObject({ action: 'view' });
    expect(office.posted[0]!.fileInfo).toMatchObject({ IsAnonymousUser: true, UserCanWrite: false });
    await ctx.close();
  });

  it('fits a phone', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await page.goto(`${w.base}/docs/report.odt`);
    await officeFrame(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    const box = (await page.locator('iframe[data-testid=office-frame]').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, '43-office-phone');
    await ctx.close();
  });

  it('with wopi_enabled off, documents are not sent to the office', async () => {
    await setSettings({ wopi_enabled: 'false' });
    office.posted.length = 0;
    await w.page.goto(`${w.base}/docs/report.docx`);
    await w.page.locator('.unsupported').waitFor();
    expect(await w.page.locator('iframe[data-testid=office-frame]').count()).toBe(0);
    expect(office.posted).toEqual([]);
    await setSettings({ wopi_enabled: 'true' });
  });
});
