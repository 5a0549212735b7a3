import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTree } from '../helpers/files.js';
import { atrium, callApi, freePort, startServerProcess } from '../helpers/process.js';
import { filesBelow } from './files.js';

/** `atrium sync list|dry-run|run NAME` on a data folder whose jobs a server created. */
describe('atrium sync', () => {
  let data: string;
  let src: string;
  let dst: string;
  const dataDir = () => path.join(data, 'srv');

  beforeAll(async () => {
    data = mkdtempSync(path.join(os.tmpdir(), 'atrium-sync-cli-'));
    src = makeTree({ 'a.txt': 'alpha', 'sub/b.txt': 'beta' });
    dst = makeTree({ 'extra.txt': 'not in the source' });
    await atrium('admin', 'set', 'cli-pass', '--data', dataDir());
    const server = await startServerProcess(dataDir(), await freePort());
    const token = (await callApi(server.base, 'POST', '/api/auth/login', { body: { username: 'admin', password: 'cli-pass' } })).data.token as string;
    const api = (route: string, body: unknown) => callApi(server.base, 'POST', route, { token, body });
    for (const [mount, root] of [['/src', src], ['/dst', dst]]) expect((await api('/api/admin/storage/create', { mount_path: mount, driver: 'Local', addition: JSON.stringify({ root_folder_path: root }), trash: 'off' })).code).toBe(200);
    expect((await api('/api/admin/sync/create', { name: 'nightly', src: '/src', dst: '/dst', mode: 'sync', schedule: { cron: '0 3 * * *', time_zone: 'UTC' } })).code).toBe(200);
    await server.stop();
  });
  afterAll(() => {
    for (const d of [data, src, dst]) rmSync(d, { recursive: true, force: true });
  });

  it('list shows the job and its schedule', async () => {
    const { stdout } = await atrium('sync', 'list', '--data', dataDir());
    expect(stdout).toMatch(/nightly\s+sync\s+\/src\s+\/dst\s+0 3 \* \* \* UTC\s+\d{4}-\d\d-\d\dT03:00:00\.000Z/);
    const json = await atrium('sync', 'list', '--json', '--data', dataDir());
    expect(JSON.parse(json.stdout.trim()).name).toBe('nightly');
  });

  it('dry-run prints the plan and changes nothing; run does it and prints the report', async () => {
    const dry = await atrium('sync', 'dry-run', 'nightly', '--data', dataDir());
    expect(dry.stdout).toContain('would copy 2, update 0, delete 1, skipped 0, failed 0');
    expect(dry.stdout).toMatch(/delete\s+dst\s+\/extra\.txt/);
    expect(filesBelow(dst)).toEqual(['extra.txt']);
    const run = await atrium('sync', 'run', 'nightly', '--data', dataDir());
    expect(run.stdout).toContain('copied 2, updated 0, deleted 1, skipped 0, failed 0');
    expect(filesBelow(dst)).toEqual(['a.txt', 'sub/b.txt']);
    const again = await atrium('sync', 'run', 'nightly', '--json', '--data', dataDir());
    expect(JSON.parse(again.stdout.trim()).skipped.files).toBe(2);
  });

  it('an unknown job exits 2 with a message', async () => {
    const err = (await atrium('sync', 'run', 'nope', '--data', dataDir()).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    ));
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('no sync job named nope');
  });
});
