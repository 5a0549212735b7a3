// The Sync jobs manage page (issue #42's page, on /api/admin/sync/*): add a job in the form, a dry
// run's plan writes nothing, Run now copies (checked on disk), the last run and the reports show
// what it did, edit the schedule, delete; at phone width as cards.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { waitUntil } from '../helpers/wait.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const PHONE = { width: 390, height: 844 };

describe.runIf(requireChromium('the sync jobs page browser tests'))('the Sync jobs page', () => {
  let w: WebSession;
  const disk = (...p: string[]) => path.join(w.root, ...p);
  const row = () => w.page.locator('table.data tbody tr', { hasText: 'backup-docs' });
  const jobs = async () => (await w.s.api('GET', '/api/admin/sync/list', { token: w.admin })).data.content as Array<Record<string, any>>;

  beforeAll(async () => {
    w = await openWebSession({ 'docs/a.txt': 'a bytes', 'docs/sub/b.txt': 'b bytes', 'copy/': '' });
  });
  afterAll(() => w?.close());

  it('adds a job from the form', async () => {
    await w.page.goto(`${w.base}/@manage/sync`);
    await w.page.click('.section-head button:has-text("Add")');
    await w.page.fill('.dialog input[name=name]', 'backup-docs');
    await w.page.fill('.dialog input[name=src]', '/docs');
    await w.page.fill('.dialog input[name=dst]', '/copy');
    await w.page.fill('.dialog textarea[name=exclude]', '*.tmp');
    await w.page.click('.dialog button[type=submit]');
    await row().waitFor();
    const [job] = await jobs();
    expect(job).toMatchObject({ name: 'backup-docs', src: '/docs', dst: '/copy', mode: 'copy', compare: 'mtime', schedule: { cron: '' }, filters: { exclude: ['*.tmp'], include: [] }, options: { max_deletes: -1, transfers: 4 } });
    expect(await row().locator('[data-testid=sync-last]').innerText()).toBe('never');
    expect(await row().innerText()).toContain('by hand');
  });

  it('a dry run shows the plan and writes nothing', async () => {
    await row().locator('[data-action=sync-dry-run]').click();
    const tally = w.page.locator('.dialog [data-testid=sync-tally]');
    await tally.waitFor();
    expect(await tally.innerText()).toMatch(/^2 copied, 0 updated, 0 deleted, 0 unchanged, 0 failed/);
    expect(await w.page.locator('.dialog .sync-items').innerText()).toContain('/sub/b.txt');
    await w.page.keyboard.press('Escape');
    expect(existsSync(disk('copy', 'a.txt'))).toBe(false);
  });

  it('Run now copies, and the last run and the reports say what it did', async () => {
    await row().locator('[data-action=sync-run]').click();
    await w.page.locator('.toast:has-text("Started backup-docs")').waitFor();
    // the run's transfers go in parallel: either file may land first
    await waitUntil(() => existsSync(disk('copy', 'sub', 'b.txt')) && existsSync(disk('copy', 'a.txt')), 20_000);
    expect(readFileSync(disk('copy', 'a.txt'), 'utf8')).toBe('a bytes');
    expect(readFileSync(disk('copy', 'sub', 'b.txt'), 'utf8')).toBe('b bytes');
    await expect.poll(async () => (await jobs())[0]!.last_run?.state, { timeout: 20_000 }).toBe('succeeded');
    await w.page.reload();
    await expect.poll(() => row().locator('[data-testid=sync-last]').innerText()).toMatch(/^succeeded · 2 copied/);
    await row().locator('[data-action=sync-reports]').click();
    const run = w.page.locator('.dialog [data-testid=sync-run]');
    await run.first().waitFor();
    expect(await run.first().innerText()).toContain('succeeded');
    await screenshot(w.page, '42-sync-reports');
    await w.page.keyboard.press('Escape');
  });

  it('edits the schedule', async () => {
    await row().locator('button:has-text("Edit")').click();
    expect(await w.page.locator('.dialog input[name=name]').inputValue()).toBe('backup-docs');
    await w.page.fill('.dialog input[name=cron]', '0 3 * * *');
    await w.page.fill('.dialog input[name=time_zone]', 'Europe/Paris');
    await w.page.click('.dialog button[type=submit]');
    await expect.poll(() => row().innerText()).toContain('0 3 * * * (Europe/Paris)');
    const [job] = await jobs();
    expect(job).toMatchObject({ schedule: { cron: '0 3 * * *', time_zone: 'Europe/Paris' }, filters: { exclude: ['*.tmp'] } });
    expect(job!.next_run).toBeGreaterThan(Date.now());
  });

  it('at phone width the jobs are cards with their buttons on screen', async () => {
    const ctx = await w.browser.newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${w.base}/@login`);
    await page.evaluate((t) => window.localStorage.setItem('token', t), w.admin);
    await page.goto(`${w.base}/@manage/sync`);
    const card = page.locator('table.data tbody tr', { hasText: 'backup-docs' });
    await card.waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(PHONE.width);
    for (const b of await card.locator('.actions-cell button').all()) {
      const box = (await b.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    }
    await ctx.close();
  });

  it('deletes the job', async () => {
    await row().locator('button.danger:has-text("Delete")').click();
    await w.page.click('.dialog button.danger');
    await row().waitFor({ state: 'detached' });
    expect(await jobs()).toEqual([]);
  });
});
