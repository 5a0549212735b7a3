import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { type Daemon, hasProgram, startAria2, startQbittorrent, startTransmission } from './helpers/daemons.js';
import { type FileServer, startFileServer } from './helpers/file-server.js';
import { localStorage, makeTree } from './helpers/files.js';
import { startServer, type TestServer } from './helpers/server.js';
import { freePort } from './helpers/process.js';
import { makeTorrent } from './helpers/torrent.js';
import { waitFor } from './helpers/wait.js';

/**
 * Offline downloads through the real tools from Debian's packages (aria2c, qbittorrent-nox,
 * transmission-daemon), each started by the test on loopback with a profile of its own. The
 * torrents have no tracker and no peers: their only source is an HTTP web seed on the test's
 * file server, so the clients complete them without leaving the machine.
 */
const TOOLS = [
  { tool: 'aria2', program: 'aria2c' },
  { tool: 'qBittorrent', program: 'qbittorrent-nox' },
  { tool: 'Transmission', program: 'transmission-daemon' },
] as const;
const missing = TOOLS.filter((t) => !hasProgram(t.program));
if (missing.length > 0) {
  if (process.env.CI) throw new Error(`CI needs ${missing.map((t) => t.program).join(', ')} (.ci/packages.sh installs them)`);
  console.warn(`\n*** SKIPPING offline-download tests with ${missing.map((t) => t.program).join(', ')}: not installed ***\n`);
}

describe.each(TOOLS.filter((t) => !missing.includes(t)))('offline download with $tool', ({ tool }) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let scratch: string;
  let web: FileServer;
  let daemon: Daemon;
  const payload = randomBytes(3 * 1024 * 1024 + 12345);
  const second = randomBytes(700 * 1024);
  const torrent = (name: string, body: Buffer, seed: string) => makeTorrent(name, body, seed, 64 * 1024);
  const post = (url: string, body?: unknown) => s.api('POST', url, { token: admin, body });
  const add = (url: string, dir: string, deletePolicy = 'delete_on_upload_succeed') =>
    post('/api/fs/add_offline_download', { urls: [url], path: dir, tool, delete_policy: deletePolicy });
  const tempOf = (id: string) => (s.core.tasks.get(id)!.payload as { temp: string }).temp;
  /** Waits for the download and its transfers; returns the download task. */
  const settle = async (id: string) => {
    const t = s.core.tasks.get(id)!;
    await waitFor(() => [2, 4, 7].includes(t.state), 60_000, 100);
    const transfers = s.core.tasks.list('offline_download_transfer').filter((x) => (x.payload as { temp: string }).temp === tempOf(id));
    await Promise.all(transfers.map((x) => x.done));
    return { task: t, transfers };
  };
  const setTool = () => {
    if (tool === 'aria2') return post('/api/admin/setting/set_aria2', { uri: daemon.uri, secret: 's3cret' });
    if (tool === 'qBittorrent') return post('/api/admin/setting/set_qbit', { url: daemon.uri, seedtime: '0' });
    return post('/api/admin/setting/set_transmission', { uri: daemon.uri, seedtime: '0' });
  };
  /** The URL handed to the tool: the file itself for aria2, a .torrent with a web seed for the torrent clients. */
  const sourceUrl = (name: string) => (tool === 'aria2' ? `${web.base}/files/${name}` : `${web.base}/torrents/${name}.torrent`);

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), `atrium-${tool}-`));
    s = await startServer(BACKENDS[0]!, { core: { offline: { pollMs: 200, qbittorrentAppearMs: 5000 }, tasks: { retryBaseMs: 20 } } });
    admin = await s.login();
    root = makeTree({});
    expect((await post('/api/admin/storage/create', localStorage('/s', root))).code).toBe(200);
    expect((await post('/api/admin/setting/save', [{ key: 'offline_download_allow_private', value: 'true' }])).code).toBe(200);
    // The torrents name their web seed by the server's port, known once it listens (files are read per request).
    const files: Record<string, { body: Buffer }> = { '/files/payload.bin': { body: payload }, '/files/second.bin': { body: second } };
    web = await startFileServer({ files });
    files['/torrents/payload.bin.torrent'] = { body: torrent('payload.bin', payload, `${web.base}/files/payload.bin`).file };
    files['/torrents/second.bin.torrent'] = { body: torrent('second.bin', second, `${web.base}/files/second.bin`).file };
    daemon =
      tool === 'aria2'
        ? await startAria2(path.join(scratch, 'aria2'), 's3cret')
        : tool === 'qBittorrent'
          ? await startQbittorrent(path.join(scratch, 'qbt'))
          : await startTransmission(path.join(scratch, 'transmission'));
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop();
    await s?.destroy();
    await web?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it('is listed publicly, and its setting route connects (or says why it cannot)', async () => {
    expect((await s.api('GET', '/api/public/offline_download_tools')).data).toContain(tool);
    const down = `http://127.0.0.1:${await freePort()}/nothing-here`;
    const bad =
      tool === 'aria2'
        ? await post('/api/admin/setting/set_aria2', { uri: down, secret: '' })
        : tool === 'qBittorrent'
          ? await post('/api/admin/setting/set_qbit', { url: down, seedtime: '0' })
          : await post('/api/admin/setting/set_transmission', { uri: down, seedtime: '0' });
    expect(bad.code).toBe(500);
    expect(bad.message).toMatch(new RegExp(`^failed init tool ${tool}: failed to connect to ${tool} at .*: ECONNREFUSED$`));
    // With the daemon down, adding a download is refused up front.
    expect((await add(sourceUrl('payload.bin'), '/s/x')).message).toMatch(new RegExp(`^failed init tool ${tool}`));
    expect(s.core.tasks.list('offline_download')).toHaveLength(0);

    const r = await setTool();
    expect(r.code, r.message).toBe(200);
    if (tool === 'aria2') expect(r.data).toBe('1.36.0');
    else expect(r.data).toBe('ok');
  });

  it('downloads into its temp folder, transfers the file into the storage and deletes the temp copy', async () => {
    const r = await add(sourceUrl('payload.bin'), `/s/${tool}`);
    expect(r.code, r.message).toBe(200);
    const id = r.data.tasks[0].id;
    expect(r.data.tasks[0]).toMatchObject({ name: `download ${sourceUrl('payload.bin')} to (/s/${tool})`, state: 0 });
    const { task, transfers } = await settle(id);
    expect(task.error).toBe('');
    expect(task.state).toBe(2);
    expect(task.status).toBe('offline download completed, maybe transferring');
    expect(task.totalBytes).toBe(payload.length);
    expect(transfers.map((t) => [t.state, t.error])).toEqual([[2, '']]);
    expect(readFileSync(path.join(root, tool, 'payload.bin')).equals(payload)).toBe(true);
    expect(existsSync(tempOf(id))).toBe(false);
  });

  it('delete_never leaves the downloaded file in the temp folder', async () => {
    const r = await add(sourceUrl('second.bin'), `/s/${tool}-keep`, 'delete_never');
    const { task } = await settle(r.data.tasks[0].id);
    expect(task.state).toBe(2);
    expect(readFileSync(path.join(root, `${tool}-keep`, 'second.bin')).equals(second)).toBe(true);
    const kept = readdirSync(tempOf(r.data.tasks[0].id), { recursive: true }).map(String);
    expect(kept).toContain('second.bin');
    expect(readFileSync(path.join(tempOf(r.data.tasks[0].id), 'second.bin')).equals(second)).toBe(true);
  });

  it('a download the tool reports as failed ends failed with its reason', async () => {
    const url = tool === 'aria2' ? `${web.base}/files/missing.bin` : `${web.base}/torrents/missing.torrent`;
    const r = await add(url, `/s/${tool}-fail`);
    expect(r.code, r.message).toBe(200);
    const { task } = await settle(r.data.tasks[0].id);
    expect(task.state).toBe(7);
    expect(task.error).not.toBe('');
    expect(existsSync(path.join(root, `${tool}-fail`))).toBe(false);
  });

  it('cancel stops the download in the tool and removes its temp folder', async () => {
    const big = randomBytes(8 * 1024 * 1024);
    const files: Record<string, { body: Buffer }> = { '/big.bin': { body: big } };
    const served = await startFileServer({ files, rate: 256 * 1024 });
    files['/big.torrent'] = { body: torrent('big.bin', big, `${served.base}/big.bin`).file };
    try {
      const r = await add(tool === 'aria2' ? `${served.base}/big.bin` : `${served.base}/big.torrent`, `/s/${tool}-cancel`);
      const id = r.data.tasks[0].id;
      const t = s.core.tasks.get(id)!;
      await waitFor(() => t.state === 1 && t.progress > 0, 60_000, 100);
      const handle = (t.payload as { handle: string }).handle;
      expect(handle).toBeTruthy();
      expect((await s.api('POST', '/api/admin/task/offline_download/cancel', { token: admin, query: { tid: id } })).code).toBe(200);
      await t.done;
      expect(t).toMatchObject({ state: 4, error: 'context canceled' });
      expect(existsSync(tempOf(id))).toBe(false);
      expect(existsSync(path.join(root, `${tool}-cancel`, 'big.bin'))).toBe(false);
      // The tool no longer has it.
      const tools = (s.core.offline as unknown as { tools: { get(n: string): { status(h: string): Promise<unknown> } } }).tools;
      await expect(tools.get(tool)!.status(handle)).rejects.toThrow(/does not know the download/);
    } finally {
      await served.close();
    }
  });
});
