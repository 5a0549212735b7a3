import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BACKEND } from '../helpers/backends.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor as poll } from '../helpers/wait.js';

const waitFor = (cond: () => boolean | Promise<boolean>, ms = 20_000) => poll(cond, ms, 25);

describe.each(ONE_BACKEND)('offline downloads (SimpleHttp) and task routes on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let web: FileServer;
  const big = randomBytes(2 * 1024 * 1024);
  const post = (url: string, body?: unknown, token = admin) => s.api('POST', url, { token, body });
  const get = (url: string, token = admin) => s.api('GET', url, { token });
  const setting = (key: string, value: string) => post('/api/admin/setting/save', [{ key, value }]);
  const add = (urls: string[], dir: string, extra: Record<string, unknown> = {}, token = admin) =>
    post('/api/fs/add_offline_download', { urls, path: dir, tool: 'SimpleHttp', delete_policy: 'delete_on_upload_succeed', ...extra }, token);
  const tempRoot = () => path.join(s.core.config.temp_dir, 'SimpleHttp');
  const tempFiles = () => (existsSync(tempRoot()) ? readdirSync(tempRoot(), { recursive: true }).map(String) : []);
  /** Waits until the download task and the transfers it spawned are done; returns the transfers. */
  const settle = async (downloadId: string) => {
    await waitFor(() => (s.core.tasks.get(downloadId)?.done ? true : false));
    await s.core.tasks.get(downloadId)!.done;
    const transfers = s.core.tasks.list('offline_download_transfer').filter((t) => (t.payload as { temp: string }).temp === (s.core.tasks.get(downloadId)!.payload as { temp: string }).temp);
    await Promise.all(transfers.map((t) => t.done));
    return transfers;
  };

  beforeAll(async () => {
    s = await startServer(backend, { core: { tasks: { retryBaseMs: 20 } } });
    admin = await s.login();
    root = makeTree({ 'file.txt': 'not a folder' });
    expect((await post('/api/admin/storage/create', localStorage('/s', root))).code).toBe(200);
    web = await startFileServer({
      files: {
        '/files/big.bin': { body: big, etag: '"b1"' },
        '/files/small.txt': { body: Buffer.from('small file') },
        '/cd': { body: Buffer.from('named by header'), disposition: 'attachment; filename="report 2026.txt"' },
      },
      redirects: { '/redirect': '/files/small.txt' },
    });
  });
  afterAll(async () => {
    await s.destroy();
    await web.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('lists the tools publicly', async () => {
    const r = await s.api('GET', '/api/public/offline_download_tools');
    expect(r.code).toBe(200);
    expect(r.data).toEqual(expect.arrayContaining(['SimpleHttp', 'aria2', 'qBittorrent', 'Transmission']));
  });

  it('refuses loopback and private targets until the setting allows them, and non-http schemes always', async () => {
    expect(await add([`${web.base}/files/small.txt`], '/s/dl')).toEqual({
      code: 400,
      // IP addresses in messages are masked as the original's privacy filter does.
      message: `********* is a loopback, private or link-local address; downloading from it is not allowed (setting offline_download_allow_private)`,
      data: null,
    });
    expect((await add([`http://localhost:${web.port}/files/small.txt`], '/s/dl')).message).toMatch(/^localhost resolves to/);
    expect((await add(['http://169.254.169.254/latest/meta-data/'], '/s/dl')).code).toBe(400);
    expect(await add(['file:///etc/passwd'], '/s/dl')).toEqual({ code: 400, message: 'only http and https urls can be downloaded, not file', data: null });
    expect(s.core.tasks.list('offline_download')).toHaveLength(0);
    expect((await setting('offline_download_allow_private', 'true')).code).toBe(200);
  });

  it('checks the request: tool, delete policy, destination, urls and the permission bit', async () => {
    const url = `${web.base}/files/small.txt`;
    expect(await add([url], '/s/dl', { tool: 'nope' })).toEqual({ code: 400, message: 'tool nope not found', data: null });
    expect((await add([url], '/s/dl', { delete_policy: 'sometimes' })).message).toMatch(/^unknown delete_policy sometimes/);
    expect(await add([url], '/s/file.txt')).toEqual({ code: 500, message: 'not a folder', data: null });
    expect(await add(['  ', ''], '/s/dl')).toEqual({ code: 400, message: 'urls is empty', data: null });
    // a torrent tool given upload_download_stream (OpenList's dialog does so) fetches into its temp folder as for delete_on_upload_succeed: here it goes on to connect to aria2
    expect((await add([url], '/s/dl', { tool: 'aria2', delete_policy: 'upload_download_stream' })).message).toMatch(/^failed init tool aria2/);
    await post('/api/admin/user/create', { username: 'nodl', password: 'p', permission: 8 });
    const nodl = await s.login('nodl', 'p');
    expect(await add([url], '/s/dl', {}, nodl)).toEqual({ code: 403, message: 'permission denied', data: null });
  });

  it('downloads into the temp dir, transfers to the storage and deletes the temp file', async () => {
    const r = await add([`${web.base}/files/big.bin`, `${web.base}/redirect`, `${web.base}/cd`], '/s/dl');
    expect(r.code, r.message).toBe(200);
    expect(r.data.tasks).toHaveLength(3);
    const [first] = r.data.tasks;
    expect(first).toMatchObject({ name: `download ${web.base}/files/big.bin to (/s/dl)`, state: 0, progress: 0, error: '', creator: 'admin', creator_role: 2 });
    expect(first.id).toHaveLength(21);
    for (const t of r.data.tasks) {
      const transfers = await settle(t.id);
      expect(transfers).toHaveLength(1);
      expect(transfers.every((x) => x.state === 2)).toBe(true);
    }
    expect(readFileSync(path.join(root, 'dl/big.bin')).equals(big)).toBe(true);
    expect(readFileSync(path.join(root, 'dl/small.txt'), 'utf8')).toBe('small file');
    expect(readFileSync(path.join(root, 'dl/report 2026.txt'), 'utf8')).toBe('named by header');
    expect(tempFiles()).toEqual([]);

    const done = await get('/api/admin/task/offline_download/done');
    const info = done.data.find((t: any) => t.id === first.id);
    expect(info).toMatchObject({ state: 2, progress: 100, status: 'offline download completed, maybe transferring', total_bytes: big.length, error: '' });
    expect(info.start_time).not.toBeNull();
    expect(info.end_time).not.toBeNull();
    const transfers = (await get('/api/admin/task/offline_download_transfer/done')).data;
    expect(transfers.map((t: any) => t.name)).toContain(`transfer ${path.join(tempRoot(), (s.core.tasks.get(first.id)!.payload as any).temp.split(path.sep).pop(), 'big.bin')} to [/s/dl]`);
    const listed = await post('/api/fs/list', { path: '/s/dl', refresh: true });
    expect(listed.data.content.map((o: any) => o.name).sort()).toEqual(['big.bin', 'report 2026.txt', 'small.txt']);
  });

  it('delete_never keeps the temp file, delete_always removes it, upload_download_stream never writes one', async () => {
    const keep = await add([`${web.base}/files/small.txt`], '/s/keep', { delete_policy: 'delete_never' });
    await settle(keep.data.tasks[0].id);
    expect(readFileSync(path.join(root, 'keep/small.txt'), 'utf8')).toBe('small file');
    expect(tempFiles().filter((f) => f.endsWith('small.txt'))).toHaveLength(1);

    const always = await add([`${web.base}/cd`], '/s/always', { delete_policy: 'delete_always' });
    await settle(always.data.tasks[0].id);
    expect(readFileSync(path.join(root, 'always/report 2026.txt'), 'utf8')).toBe('named by header');
    expect(tempFiles().filter((f) => f.endsWith('report 2026.txt'))).toHaveLength(0);

    const before = tempFiles().length;
    const stream = await add([`${web.base}/files/big.bin`], '/s/stream', { delete_policy: 'upload_download_stream' });
    const transfers = await settle(stream.data.tasks[0].id);
    expect(transfers).toHaveLength(0);
    expect(s.core.tasks.get(stream.data.tasks[0].id)!.state).toBe(2);
    expect(readFileSync(path.join(root, 'stream/big.bin')).equals(big)).toBe(true);
    expect(tempFiles().length).toBe(before);
  });

  it('a failing download is retried (max_retry 1 for downloads) and ends failed with the reason', async () => {
    const r = await add([`${web.base}/missing.bin`], '/s/dl');
    const id = r.data.tasks[0].id;
    await settle(id);
    const info = await s.api('POST', '/api/admin/task/offline_download/info', { token: admin, query: { tid: id } });
    expect(info.data).toMatchObject({ state: 7, error: `download of ${web.base}/missing.bin failed: HTTP 404 Not Found` });
    expect(s.core.tasks.get(id)!.retryCount).toBe(1);
    expect(web.ranges.get('/missing.bin')).toHaveLength(2);
    expect(existsSync((s.core.tasks.get(id)!.payload as any).temp)).toBe(false);
  });

  it('the size limit stops a download', async () => {
    await setting('offline_download_max_size', '1');
    try {
      const r = await add([`${web.base}/files/big.bin`], '/s/limit');
      await settle(r.data.tasks[0].id);
      expect(s.core.tasks.get(r.data.tasks[0].id)).toMatchObject({ state: 7, error: `the download is ${big.length} bytes, more than the limit of 1048576 bytes (setting offline_download_max_size)` });
      expect(existsSync(path.join(root, 'limit/big.bin'))).toBe(false);
    } finally {
      await setting('offline_download_max_size', '0');
    }
  });

  describe('task routes', () => {
    let bob: string;
    let bobTask: string;
    let adminTask: string;

    beforeAll(async () => {
      await post('/api/admin/user/create', { username: 'bob', password: 'b', permission: 4 | 8 });
      bob = await s.login('bob', 'b');
      bobTask = (await add([`${web.base}/files/small.txt`], '/s/bob', {}, bob)).data.tasks[0].id;
      adminTask = (await add([`${web.base}/missing-again`], '/s/adm')).data.tasks[0].id;
      await settle(bobTask);
      await settle(adminTask);
    });

    it('admins see every task; users only their own, and others are "not found" to them', async () => {
      const all = (await get('/api/admin/task/offline_download/done')).data.map((t: any) => t.id);
      expect(all).toEqual(expect.arrayContaining([bobTask, adminTask]));
      const mine = (await get('/api/task/offline_download/done', bob)).data;
      expect(mine.map((t: any) => t.id)).toEqual([bobTask]);
      expect(mine[0]).toMatchObject({ creator: 'bob', creator_role: 0, state: 2 });
      expect(await s.api('POST', '/api/task/offline_download/info', { token: bob, query: { tid: adminTask } })).toEqual({ code: 404, message: 'task not found', data: null });
      expect(await s.api('POST', '/api/admin/task/offline_download/info', { token: admin, query: { tid: 'nope' } })).toEqual({ code: 404, message: 'task not found', data: null });
      expect((await get('/api/task/offline_download/undone', bob)).data).toEqual([]);
      expect(await get('/api/admin/task/offline_download/done', bob)).toEqual({ code: 403, message: 'You are not an admin', data: null });
    });

    it('the guest is refused on /api/task', async () => {
      const guest = (await get('/api/admin/user/list')).data.content.find((u: any) => u.role === 1);
      await post('/api/admin/user/update', { ...guest, disabled: false });
      try {
        expect(await s.api('GET', '/api/task/offline_download/done')).toEqual({ code: 403, message: 'You are a guest', data: null });
      } finally {
        await post('/api/admin/user/update', { ...guest, disabled: true });
      }
    });

    it('retry, retry_failed and the batch forms act only on what the caller may see', async () => {
      // bob can't act on the admin's task: the batch answer says so, the task is untouched.
      expect((await post('/api/task/offline_download/retry_some', [adminTask, 'ghost'], bob)).data).toEqual({ [adminTask]: 'task not found', ghost: 'task not found' });
      expect(s.core.tasks.get(adminTask)!.state).toBe(7);
      // As the original, single verbs on unknown ids succeed without effect.
      expect(await s.api('POST', '/api/task/offline_download/retry', { token: bob, query: { tid: adminTask } })).toEqual({ code: 200, message: 'success', data: null });
      expect(s.core.tasks.get(adminTask)!.state).toBe(7);

      const before = web.ranges.get('/missing-again')!.length;
      expect((await s.api('POST', '/api/admin/task/offline_download/retry', { token: admin, query: { tid: adminTask } })).code).toBe(200);
      await waitFor(() => s.core.tasks.get(adminTask)!.state === 7 && web.ranges.get('/missing-again')!.length === before + 2);
      expect((await post('/api/admin/task/offline_download/retry_failed')).code).toBe(200);
      await waitFor(() => s.core.tasks.get(adminTask)!.state === 7 && web.ranges.get('/missing-again')!.length === before + 4);
      expect((await post('/api/admin/task/offline_download/retry_some', [adminTask])).data).toEqual({});
      await waitFor(() => s.core.tasks.get(adminTask)!.state === 7 && web.ranges.get('/missing-again')!.length === before + 6);
    });

    it('cancel stops a running download; delete, clear_succeeded and clear_done remove tasks', async () => {
      const slow = await startFileServer({ files: { '/slow.bin': { body: big } }, rate: 256 * 1024 });
      try {
        const id = (await add([`${slow.base}/slow.bin`], '/s/slow', {}, bob)).data.tasks[0].id;
        await waitFor(() => s.core.tasks.get(id)!.state === 1 && s.core.tasks.get(id)!.progress > 0);
        const undone = (await get('/api/task/offline_download/undone', bob)).data;
        expect(undone.map((t: any) => t.id)).toEqual([id]);
        expect(undone[0].status).toBe('[SimpleHttp]: downloading');
        expect((await post('/api/task/offline_download/cancel_some', [id], bob)).data).toEqual({});
        await s.core.tasks.get(id)!.done;
        expect(s.core.tasks.get(id)).toMatchObject({ state: 4, error: 'context canceled' });
        expect(existsSync(path.join(root, 'slow/slow.bin'))).toBe(false);
        expect(existsSync((s.core.tasks.get(id)!.payload as any).temp)).toBe(false);
        expect((await post('/api/admin/task/offline_download/retry_some', [id])).data).toEqual({});
        expect(s.core.tasks.get(id)!.state).toBe(4);

        expect((await post('/api/task/offline_download/clear_succeeded', undefined, bob)).code).toBe(200);
        expect((await get('/api/task/offline_download/done', bob)).data.map((t: any) => [t.id, t.state])).toEqual([[id, 4]]);
        expect(s.core.tasks.get(bobTask)).toBeUndefined();
        expect((await post('/api/task/offline_download/clear_done', undefined, bob)).code).toBe(200);
        expect((await get('/api/task/offline_download/done', bob)).data).toEqual([]);
        // The admin's own tasks were not touched by bob's clears.
        expect(s.core.tasks.get(adminTask)).toBeDefined();
        expect((await s.api('POST', '/api/admin/task/offline_download/delete', { token: admin, query: { tid: adminTask } })).code).toBe(200);
        expect(s.core.tasks.get(adminTask)).toBeUndefined();
        expect(await s.core.repos.tasks.all().then((rows) => rows.some((r) => r.id === adminTask))).toBe(false);
      } finally {
        await slow.close();
      }
    });
  });
});
