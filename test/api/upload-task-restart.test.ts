import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor as poll } from '../helpers/wait.js';

const waitFor = (cond: () => boolean, ms = 10_000) => poll(cond, ms, 25);

describe.each(BACKENDS)('upload tasks across a restart on $name', (backend) => {
  let s: TestServer;
  let root: string;

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({});
    expect((await s.api('POST', '/api/admin/storage/create', { token: await s.login(), body: localStorage('/u', root) })).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('an upload task running when the process died is resumed from its spooled body; orphans in temp are swept', async () => {
    const spoolDir = path.join(s.core.config.temp_dir, 'uploads');
    mkdirSync(spoolDir, { recursive: true });
    const spooled = path.join(spoolDir, 'spooled-body');
    const orphan = path.join(spoolDir, 'orphan-body');
    const orphanDownload = path.join(s.core.config.temp_dir, 'SimpleHttp', 'dead-download');
    writeFileSync(spooled, 'resumed body');
    writeFileSync(orphan, 'nobody owns me');
    mkdirSync(orphanDownload, { recursive: true });
    // The row as a kill -9 leaves it: running, 40 % (written behind the running manager's back).
    const now = Date.now();
    await s.core.repos.tasks.upsert({
      id: 'crashedUploadTask0001',
      kind: 'upload',
      name: 'upload r.txt to [/u](/in)',
      creator_id: 1,
      creator: 'admin',
      creator_role: 2,
      state: 1,
      status: 'uploading',
      progress: 40,
      error: '',
      total_bytes: 12,
      retry_count: 0,
      payload: JSON.stringify({ target: '/u/in/r.txt', name: 'r.txt', temp: spooled, overwrite: true, modified: 1_700_000_000_000 }),
      start_time: now,
      end_time: 0,
      created_at: now,
      updated_at: now,
    });
    s = await s.restart();
    await waitFor(() => s.core.tasks.get('crashedUploadTask0001')?.state === 2);
    expect(readFileSync(path.join(root, 'in/r.txt'), 'utf8')).toBe('resumed body');
    expect(existsSync(spooled)).toBe(false);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(orphanDownload)).toBe(false);
    const done = await s.api('GET', '/api/admin/task/upload/done', { token: await s.login() });
    expect(done.data.find((t: any) => t.id === 'crashedUploadTask0001')).toMatchObject({ state: 2, progress: 100, error: '' });
  });
});
