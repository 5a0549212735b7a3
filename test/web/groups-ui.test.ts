// The Groups page, a user's groups, quota and limits in the users form, the usage bar and the
// sessions lists (issue #41's web part, on /api/admin/group/*, /api/admin/user/*, /api/me and
// /api/me/sessions, /api/admin/session/*): a group made in the form with a root and limits, a
// user joined to it with a quota, the bar after an upload, a second web sign-in ended from the
// profile (its token then refused), every session of a user ended by the admin; at phone width
// as cards.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };
const MiB = 1024 * 1024;
const ALICE_PASSWORD = 'alice-pass-1';

describe.runIf(requireChromium('the groups page browser tests'))('groups, quotas, usage and sessions in the web UI', () => {
  let w: WebSession;
  let aliceId = 0;
  let groupId = 0;
  let aliceCtx: BrowserContext;
  let alice: Page;
  let aliceToken = '';
  const groupRow = () => w.page.locator('table.data tbody tr', { hasText: 'team' });
  const userRow = () => w.page.locator('table.data tbody tr', { hasText: 'alice' });
  const adminGet = async (route: string) => (await w.s.api('GET', route, { token: w.admin })).data;
  const groups = async () => (await adminGet('/api/admin/group/list')).content as Array<Record<string, any>>;
  const aliceRecord = async () => ((await adminGet('/api/admin/user/list')).content as Array<Record<string, any>>).find((u) => u.username === 'alice')!;
  const me = (token: string) => fetch(`${w.base}/api/me`, { headers: { Authorization: token } }).then((r) => r.json() as Promise<{ code: number }>);

  beforeAll(async () => {
    w = await openWebSession({ 'shared/team-notes.txt': 'notes', 'alice/': '' });
    const made = await w.s.api('POST', '/api/admin/user/create', { token: w.admin, body: { username: 'alice', password: ALICE_PASSWORD, base_path: '/alice', permission: 8 } });
    expect(made.code).toBe(200);
    aliceId = (await aliceRecord()).id;
  });
  afterAll(async () => {
    await aliceCtx?.close();
    await w?.close();
  });

  it('creates a group with a root, bits, a quota and limits in the form; a bad size asks again', async () => {
    await w.page.goto(`${w.base}/@manage/groups`);
    await w.page.click('.section-head button:has-text("Add")');
    await w.page.fill('.dialog input[name=name]', 'team');
    // the root row is added with the keyboard
    await w.page.focus('.dialog [data-action=add-root]');
    await w.page.keyboard.press('Enter');
    await w.page.fill('.dialog input[name=root-path-0]', '/shared');
    await w.page.fill('.dialog input[name=root-name-0]', 'team');
    await w.page.check('.dialog input[name=perm-8]');
    await w.page.fill('.dialog input[name=quota_bytes]', 'lots');
    await w.page.fill('.dialog input[name=quota_files]', '50');
    await w.page.fill('.dialog input[name=upload_rate]', '1M');
    await w.page.fill('.dialog input[name=download_rate]', '2 MiB');
    await w.page.fill('.dialog input[name=max_transfers]', '3');
    await w.page.fill('.dialog input[name=max_sessions]', '4');
    await w.page.click('.dialog button[type=submit]');
    await w.page.locator('.toast.error', { hasText: '“lots” is not a size' }).waitFor();
    // the form comes back with what was typed
    expect(await w.page.locator('.dialog input[name=name]').inputValue()).toBe('team');
    expect(await w.page.locator('.dialog input[name=root-path-0]').inputValue()).toBe('/shared');
    expect(await w.page.locator('.dialog input[name=perm-8]').isChecked()).toBe(true);
    expect(await groups()).toEqual([]);
    await w.page.fill('.dialog input[name=quota_bytes]', '10M');
    await w.page.click('.dialog button[type=submit]');
    await groupRow().waitFor();
    const [g] = await groups();
    expect(g).toMatchObject({
      name: 'team',
      permission: 1 << 8,
      roots: [{ path: '/shared', name: 'team' }],
      quota_bytes: 10 * MiB,
      quota_files: 50,
      upload_rate: MiB,
      download_rate: 2 * MiB,
      max_transfers: 3,
      max_sessions: 4,
    });
    groupId = g!.id;
    expect(await groupRow().locator('[data-testid=group-roots]').innerText()).toBe('/team → /shared');
    expect(await groupRow().locator('[data-testid=group-quota]').innerText()).toBe('10.0 MB, 50 files');
    expect(await groupRow().locator('[data-testid=group-limits]').innerText()).toBe('up 1.00 MB/s, down 2.00 MB/s, 3 transfers, 4 sessions');
    await screenshot(w.page, '41-groups');
    // editing shows the sizes in their unit
    await groupRow().locator('button:has-text("Edit")').click();
    expect(await w.page.locator('.dialog input[name=quota_bytes]').inputValue()).toBe('10M');
    expect(await w.page.locator('.dialog input[name=download_rate]').inputValue()).toBe('2M');
    await w.page.keyboard.press('Escape');
  });

  it('a user joins the group and gets a quota in the users form; the list shows the effective rights and limits', async () => {
    await w.page.goto(`${w.base}/@manage/users`);
    await userRow().locator('button:has-text("Edit")').click();
    await w.page.check(`.dialog input[name=group-${groupId}]`);
    await w.page.fill('.dialog input[name=quota_bytes]', '1M');
    await w.page.fill('.dialog input[name=quota_files]', '10');
    await w.page.click('.dialog button[type=submit]');
    await expect.poll(async () => (await aliceRecord()).group_ids).toEqual([groupId]);
    const a = await aliceRecord();
    expect(a).toMatchObject({
      permission: 8,
      base_path: '/alice',
      quota_bytes: MiB,
      quota_files: 10,
      roots: [],
      effective_permission: 8 | (1 << 8),
      effective_limits: { upload_rate: MiB, download_rate: 2 * MiB, max_transfers: 3, max_sessions: 4 },
    });
    await expect.poll(() => userRow().locator('[data-testid=user-groups-cell]').innerText()).toBe('team');
    expect(await userRow().locator('[data-testid=user-effective-permission]').innerText()).toBe('2 of 16');
    expect(await userRow().locator('[data-testid=user-effective-limits]').innerText()).toBe('up 1.00 MB/s, down 2.00 MB/s, 3 transfers, 4 sessions');
    // the form shows what applies with the groups, read-only
    await userRow().locator('button:has-text("Edit")').click();
    expect(await w.page.locator('.dialog [data-testid=user-effective]').innerText()).toContain('Write (mkdir, upload), WebDAV read');
    expect(await w.page.locator(`.dialog input[name=group-${groupId}]`).isChecked()).toBe(true);
    expect(await w.page.locator('.dialog input[name=quota_bytes]').inputValue()).toBe('1M');
    await screenshot(w.page, '41-user-form');
    await w.page.keyboard.press('Escape');
  });

  it('the usage bar shows the quota, and what an upload used', async () => {
    aliceToken = await w.s.login('alice', ALICE_PASSWORD);
    aliceCtx = await w.browser.newContext({ viewport: { width: 1200, height: 800 } });
    alice = await aliceCtx.newPage();
    alice.setDefaultTimeout(15_000);
    await alice.goto(`${w.base}/@login`);
    await alice.evaluate((t) => window.localStorage.setItem('token', t), aliceToken);
    await alice.goto(`${w.base}/`);
    const bar = alice.locator('[data-testid=usage-compact]');
    await bar.waitFor();
    expect(await bar.locator('[data-testid=usage-bytes-text]').innerText()).toBe('0 B of 1.00 MB');
    // the group's root is in alice's tree
    await alice.locator('[data-testid=row][data-name="team"]').waitFor();
    await alice.locator('[data-testid=upload-input]').setInputFiles({ name: 'a.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(300 * 1024, 7) });
    await alice.locator('[data-testid=row][data-name="a.bin"]').waitFor();
    expect(statSync(path.join(w.root, 'alice', 'a.bin')).size).toBe(300 * 1024);
    const bytes = bar.locator('progress[data-testid=usage-bytes]');
    await expect.poll(() => bytes.getAttribute('value')).toBe(String(300 * 1024));
    expect(await bytes.getAttribute('max')).toBe(String(MiB));
    expect(await bytes.getAttribute('aria-valuetext')).toBe('300.0 KB of 1.00 MB');
    expect(await bar.locator('[data-testid=usage-files-text]').innerText()).toBe('1 of 10 files');
    expect(await bar.locator('progress[data-testid=usage-files]').getAttribute('value')).toBe('1');
    // the profile shows it too
    await alice.goto(`${w.base}/@manage/profile`);
    const card = alice.locator('[data-testid=usage]');
    await card.waitFor();
    expect(await card.locator('progress[data-testid=usage-bytes]').getAttribute('aria-valuetext')).toBe('300.0 KB of 1.00 MB');
    expect(await card.innerText()).toContain('1 of 10 files');
    await screenshot(alice, '41-usage-profile');
    // at phone width the compact bar fits under the folder
    await alice.setViewportSize(PHONE);
    await alice.goto(`${w.base}/`);
    await bar.waitFor();
    expect(await alice.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    const box = (await bar.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    await screenshot(alice, '41-phone-usage');
    await alice.setViewportSize({ width: 1200, height: 800 });
    // the admin, without a quota, sees no bar
    await w.page.goto(`${w.base}/@manage/profile`);
    await w.page.locator('[data-testid=sessions]').waitFor();
    expect(await w.page.locator('[data-testid=usage]').count()).toBe(0);
  });

  it('the profile lists both web sign-ins; ending the other one makes its token refused', async () => {
    const other = await w.s.login('alice', ALICE_PASSWORD);
    expect((await me(other)).code).toBe(200);
    await alice.goto(`${w.base}/@manage/profile`);
    const rows = alice.locator('[data-testid=sessions] [data-testid=session-row][data-kind=web]');
    await expect.poll(() => rows.count()).toBe(2);
    const current = alice.locator('[data-testid=sessions] [data-testid=session-row][data-current=true]');
    expect(await current.count()).toBe(1);
    // the current one is marked and has no End button
    expect(await current.locator('[data-testid=session-current]').innerText()).toBe('This session');
    expect(await current.locator('[data-action=session-end]').count()).toBe(0);
    await alice.locator('[data-testid=sessions]').scrollIntoViewIfNeeded();
    await screenshot(alice, '41-sessions');
    await alice.locator('[data-testid=sessions] [data-testid=session-row][data-current=false] [data-action=session-end]').click();
    await alice.click('.dialog button.danger');
    await expect.poll(() => rows.count()).toBe(1);
    expect((await me(other)).code).toBe(401);
    expect((await me(aliceToken)).code).toBe(200);
  });

  it('an admin sees a user\'s sessions on the users page and ends them all', async () => {
    await w.page.goto(`${w.base}/@manage/users`);
    await userRow().locator('[data-action=user-sessions]').click();
    const rows = w.page.locator('.dialog [data-testid=session-row]');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-kind')).toBe('web');
    await w.page.click('.dialog [data-action=sessions-end-all]');
    await w.page.locator('.toast', { hasText: 'Sessions ended: 1' }).waitFor();
    await expect.poll(() => rows.count()).toBe(0);
    expect((await me(aliceToken)).code).toBe(401);
    // the admin's own session is untouched
    expect((await me(w.admin)).code).toBe(200);
    await w.page.keyboard.press('Escape');
  });

  it('a path rule for the group is made in the metas form', async () => {
    await w.page.goto(`${w.base}/@manage/metas`);
    await w.page.click('.section-head button:has-text("Add")');
    await w.page.fill('.dialog input[name=path]', '/shared');
    await w.page.fill('.dialog textarea[name=hide]', '^secret');
    await w.page.selectOption('.dialog select[name=group_id]', String(groupId));
    await w.page.click('.dialog button[type=submit]');
    const row = w.page.locator('table.data tbody tr', { hasText: '/shared' });
    await row.waitFor();
    expect(await row.locator('[data-testid=meta-group]').innerText()).toBe('team');
    const metas = (await adminGet('/api/admin/meta/list')).content as Array<Record<string, any>>;
    expect(metas.find((m) => m.path === '/shared')).toMatchObject({ group_id: groupId, hide: '^secret' });
    await row.locator('button:has-text("Edit")').click();
    expect(await w.page.locator('.dialog select[name=group_id]').inputValue()).toBe(String(groupId));
    await w.page.keyboard.press('Escape');
  });

  it('at phone width the groups are cards and the form fits the screen', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await page.goto(`${w.base}/@manage/groups`);
    const card = page.locator('table.data tbody tr', { hasText: 'team' });
    await card.waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    expect(await card.locator('td[data-label]').count()).toBeGreaterThan(2);
    for (const b of await card.locator('.actions-cell button').all()) {
      const box = (await b.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    }
    await screenshot(page, '41-phone-groups');
    await card.locator('button:has-text("Edit")').click();
    await page.locator('.dialog [data-testid=root-row]').waitFor();
    const dialog = await page.locator('.dialog').evaluate((d) => ({ scroll: d.scrollWidth, client: d.clientWidth, right: d.getBoundingClientRect().right }));
    expect(dialog.scroll).toBeLessThanOrEqual(dialog.client);
    expect(dialog.right).toBeLessThanOrEqual(PHONE.width);
    for (const el of await page.locator('.dialog [data-testid=root-row] input, .dialog [data-testid=root-row] button').all()) {
      const box = (await el.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    }
    await screenshot(page, '41-phone-group-form');
    await ctx.close();
  });

  it('deletes the group; the user keeps their own quota', async () => {
    await w.page.goto(`${w.base}/@manage/groups`);
    await groupRow().locator('button.danger:has-text("Delete")').click();
    await w.page.click('.dialog button.danger');
    await groupRow().waitFor({ state: 'detached' });
    expect(await groups()).toEqual([]);
    const a = await aliceRecord();
    expect(a.group_ids).toEqual([]);
    expect(a.quota_bytes).toBe(MiB);
    expect(existsSync(path.join(w.root, 'shared', 'team-notes.txt'))).toBe(true);
    // the group's path rules go with it
    expect(((await adminGet('/api/admin/meta/list')).content as Array<Record<string, any>>).filter((m) => m.path === '/shared')).toEqual([]);
  });
});
