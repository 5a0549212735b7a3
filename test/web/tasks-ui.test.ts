import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

describe.runIf(requireChromium('the tasks page browser tests'))('tasks page and upload speed', () => {
  let w: WebSession;
  let fast: FileServer;
  let slow: FileServer;
  const served: Record<string, { body: Buffer }> = { '/good.bin': { body: Buffer.from('good bytes') } };
  const offline = (url: string) => w.s.api('POST', '/api/fs/add_offline_download', { token: w.admin, body: { urls: [url], path: '/dl', tool: 'SimpleHttp', delete_policy: 'delete_on_upload_succeed' } });
  /** The server's offline download tasks: name → state. */
  const states = async () => {
    const [undone, done] = await Promise.all([w.s.api('GET', '/api/admin/task/offline_download/undone', { token: w.admin }), w.s.api('GET', '/api/admin/task/offline_download/done', { token: w.admin })]);
    return new Map<string, number>([...(undone.data ?? []), ...(done.data ?? [])].map((x: { name: string; state: number }) => [x.name, x.state]));
  };
  const names = (testid: string) => w.page.locator(`[data-testid=${testid}]`).evaluateAll((rows) => rows.map((r) => r.querySelector('td:nth-child(2)')!.childNodes[0]!.textContent!));

  beforeAll(async () => {
    w = await openWebSession({ 'dl/': '' }, { width: 1300, height: 900 }, { core: { tasks: { retryBaseMs: 50 } } });
    fast = await startFileServer({ files: served });
    slow = await startFileServer({ files: { '/slow.bin': { body: Buffer.alloc(2 * 1024 * 1024, 7) } }, rate: 64 * 1024 });
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'offline_download_allow_private', value: 'true' }] })).code).toBe(200);
    for (const url of [`${fast.base}/good.bin`, `${fast.base}/late.bin`, `${slow.base}/slow.bin`]) expect((await offline(url)).code).toBe(200);
  });
  afterAll(async () => {
    await fast?.close();
    await slow?.close();
    await w?.close();
  });

  it('shows running and finished tasks apart, the running one with speed and time left', async () => {
    await w.page.goto(`${w.base}/@manage/tasks`);
    await w.page.getByRole('tab', { name: 'Offline downloads', exact: true }).click();
    await expect.poll(() => names('task-row'), { timeout: 20_000 }).toEqual(expect.arrayContaining([expect.stringContaining('good.bin'), expect.stringContaining('late.bin')]));
    await expect.poll(() => names('task-running')).toEqual([expect.stringContaining('slow.bin')]);
    const running = w.page.locator('[data-testid=task-running]');
    await expect.poll(() => running.locator('[data-testid=task-speed]').textContent(), { timeout: 10_000 }).toMatch(/KB\/s$/);
    await expect.poll(() => running.locator('[data-testid=task-left]').textContent()).toMatch(/^\d+ (s|min)/);
    expect(await w.page.locator('h2', { hasText: 'Running (1)' }).count()).toBe(1);
    await screenshot(w.page, '70-tasks');
  });

  it('filters by state', async () => {
    await w.page.selectOption('select[name=task-filter]', 'failed');
    await expect.poll(() => names('task-row')).toEqual([expect.stringContaining('late.bin')]);
    expect(await names('task-running')).toEqual([]);
    await w.page.selectOption('select[name=task-filter]', 'succeeded');
    await expect.poll(() => names('task-row')).toEqual([expect.stringContaining('good.bin')]);
    await w.page.selectOption('select[name=task-filter]', 'all');
  });

  it('retries a failed task from its row (the file now exists) and cancels a running one', async () => {
    served['/late.bin'] = { body: Buffer.from('late bytes') };
    await w.page.locator('[data-testid=task-row]', { hasText: 'late.bin' }).locator('button:has-text("Retry")').click();
    await expect.poll(() => existsSync(path.join(w.root, 'dl', 'late.bin')) && readFileSync(path.join(w.root, 'dl', 'late.bin'), 'utf8'), { timeout: 20_000 }).toBe('late bytes');
    await w.page.locator('[data-testid=task-running]', { hasText: 'slow.bin' }).locator('button:has-text("Cancel")').click();
    await expect.poll(() => w.page.locator('[data-testid=task-row]', { hasText: 'slow.bin' }).locator('[data-testid=task-state]').textContent(), { timeout: 10_000 }).toBe('canceled');
    await expect.poll(async () => [...(await states()).values()].sort()).toEqual([2, 2, 4]);
  });

  it('deletes the ticked tasks in one go', async () => {
    const rows = w.page.locator('[data-testid=task-row]');
    await expect.poll(() => rows.count()).toBe(3);
    for (const name of ['good.bin', 'slow.bin']) await rows.filter({ hasText: name }).locator('input[type=checkbox]').check();
    expect(await w.page.locator('[data-testid=tasks-ticked]').textContent()).toBe('2 selected');
    await w.page.click('button:has-text("Delete selected")');
    await w.page.locator('.toast', { hasText: 'Deleted 2 task(s)' }).waitFor();
    await expect.poll(() => names('task-row')).toEqual([expect.stringContaining('late.bin')]);
    const left = [...(await states()).keys()];
    expect(left).toEqual([expect.stringContaining('late.bin')]);
  });

  it('shows a task that finished between the two list requests once, as finished', async () => {
    // The page asks for the running and the finished tasks in two requests; make the first answer
    // still hold a task the second answers as done, as when a cancel takes effect in between.
    const finished = (await w.s.api('GET', '/api/admin/task/offline_download/done', { token: w.admin })).data as Array<{ id: string; name: string }>;
    const late = finished.find((x) => x.name.includes('late.bin'))!;
    await w.page.route('**/api/admin/task/offline_download/undone', (route) =>
      route.fulfill({ contentType: 'application/json', body: JSON.stringify({ code: 200, message: 'success', data: [{ ...late, state: 3, status: 'canceling' }] }) }),
    );
    await w.page.reload();
    await w.page.getByRole('tab', { name: 'Offline downloads', exact: true }).click();
    await expect.poll(() => names('task-row'), { timeout: 10_000 }).toEqual([expect.stringContaining('late.bin')]);
    expect(await names('task-running')).toEqual([]);
    await w.page.locator('[data-testid=task-row]', { hasText: 'late.bin' }).locator('input[type=checkbox]').check();
    expect(await w.page.locator('[data-testid=tasks-ticked]').textContent()).toBe('1 selected');
    await w.page.unroute('**/api/admin/task/offline_download/undone');
  });

  it('shows the upload speed and time left while a file goes up', async () => {
    const cdp = await w.ctx.newCDPSession(w.page);
    await w.page.goto(`${w.base}/dl`);
    await w.page.locator('.actionbar').waitFor();
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
    await w.page.locator('[data-testid=upload-input]').setInputFiles({ name: 'up.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1536 * 1024, 1) });
    await expect.poll(() => w.page.locator('[data-testid=upload-speed]').textContent(), { timeout: 10_000 }).toMatch(/^\d+(\.\d+)? KB\/s · \d+ s left$/);
    // the item: its percentage, and under its name the bytes sent of its size, the speed and the time left
    await expect.poll(() => w.page.locator('[data-testid=upload-item] .status').textContent()).toMatch(/^\d+%$/);
    await expect.poll(() => w.page.locator('[data-testid=upload-detail]').textContent()).toMatch(/ \/ 1\.50 MB · .* KB\/s · \d+ s left$/);
    await screenshot(w.page, '71-upload-speed');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await expect.poll(() => existsSync(path.join(w.root, 'dl', 'up.bin')), { timeout: 20_000 }).toBe(true);
  });
});
