import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { listenLoopback } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const MiB = 1024 * 1024;

/** OpenList's traffic settings, each doing what it says: task threads set the workers, speed limits limit. */
describe('traffic settings (OpenList)', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let base: string;
  const big = randomBytes(20 * MiB);

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!, { config: { tasks: { copy: { workers: 4, max_retry: 0, task_persistant: false } } } });
    admin = await s.login();
    root = makeTree({ 'big.bin': big, 'up/': '' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/t', root) })).code).toBe(200);
    base = await listenLoopback(s.app);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  const save = (key: string, value: string) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key, value }] });

  /** Three tasks of a kind, each running until its gate is opened; counts how many run at once. */
  const gatedTasks = (kind: 'copy' | 'decompress') => {
    const g = { running: 0, most: 0, gates: [] as Array<() => void>, done: () => Promise.all(tasks.map((t) => t.done)) };
    const tasks = Array.from({ length: 3 }, (_, i) =>
      s.core.tasks.submit({
        kind,
        name: `gate ${i}`,
        run: async () => {
          g.running++;
          g.most = Math.max(g.most, g.running);
          await new Promise<void>((r) => g.gates.push(r));
          g.running--;
        },
      }),
    );
    return g;
  };

  it('lists the thread and speed keys in the traffic group; the unbuilt features keys are absent', async () => {
    const items = (await s.api('GET', '/api/admin/setting/list?group=11', { token: admin })).data as Array<{ key: string; value: string; flag: number }>;
    const byKey = Object.fromEntries(items.map((i) => [i.key, i]));
    // copy's default is the config's workers (4 here), the others the config default 5
    expect(byKey.copy_task_threads_num).toMatchObject({ value: '4', flag: 1 });
    for (const k of ['upload_task_threads_num', 'move_task_threads_num', 'offline_download_task_threads_num', 'offline_download_transfer_task_threads_num']) expect(byKey[k]?.value, k).toBe('5');
    // the archive task kinds (OpenList's decompress download / upload threads), from the config's workers
    expect(byKey.decompress_download_task_threads_num).toMatchObject({ value: '5', flag: 1 });
    expect(byKey.decompress_upload_task_threads_num).toMatchObject({ value: '5', flag: 1 });
    for (const k of ['max_client_download_speed', 'max_client_upload_speed', 'max_server_download_speed', 'max_server_upload_speed']) expect(byKey[k]?.value, k).toBe('-1');
  });

  it('the decompress thread settings set the workers of the decompress and decompress_upload tasks', async () => {
    expect((await save('decompress_download_task_threads_num', '0')).code).toBe(400);
    expect((await save('decompress_download_task_threads_num', '2')).code).toBe(200);
    expect((await save('decompress_upload_task_threads_num', '3')).code).toBe(200);
    expect(s.core.tasks.workers('decompress')).toBe(2);
    expect(s.core.tasks.workers('decompress_upload')).toBe(3);
    // two decompress tasks run at once, a third waits for one of them
    const g = gatedTasks('decompress');
    await waitFor(() => g.running === 2, 2000);
    await new Promise((r) => setTimeout(r, 200));
    expect([g.running, g.gates.length]).toEqual([2, 2]);
    g.gates.shift()!();
    await waitFor(() => g.gates.length === 2 && g.running === 2, 2000);
    for (const open of g.gates) open();
    await g.done();
    expect([g.running, g.most]).toEqual([0, 2]);
  });

  it('a thread count sets how many tasks of its kind run at once', async () => {
    expect((await save('copy_task_threads_num', '0')).code).toBe(400);
    expect((await save('copy_task_threads_num', '1')).code).toBe(200);
    const g = gatedTasks('copy');
    await waitFor(() => g.running === 1, 2000);
    await new Promise((r) => setTimeout(r, 200));
    expect([g.running, g.gates.length]).toEqual([1, 1]);
    // more threads: the waiting tasks start at once
    expect((await save('copy_task_threads_num', '3')).code).toBe(200);
    await waitFor(() => g.running === 3, 2000);
    expect(g.most).toBe(3);
    expect(g.gates.length).toBe(3);
    for (const open of g.gates) open();
    await g.done();
    expect(g.running).toBe(0);
    expect(s.core.tasks.workers('copy')).toBe(3);
  });

  const rate = (bytes: number, ms: number) => bytes / MiB / (ms / 1000);

  /**
   * A limited transfer of `bytes` that took `ms`: at most 2.4 MB/s (load on the machine only slows
   * it), and at least 1.6 MB/s over the time the limiter itself adds: `freeMs`, what the same
   * transfer took unlimited just before, is the machine's own cost (near 0 on a quiet machine,
   * more while parallel test files share the CPU), so a busy machine does not fail the limiter.
   */
  const expectLimited = (bytes: number, ms: number, freeMs: number) => {
    const shown = `${bytes} bytes in ${ms} ms (${rate(bytes, ms).toFixed(2)} MB/s), unlimited ${freeMs} ms`;
    expect(rate(bytes, ms), shown).toBeLessThanOrEqual(2.4);
    expect(ms, shown).toBeLessThanOrEqual((bytes / (1.6 * MiB)) * 1000 + freeMs);
  };
  const timed = async (f: () => Promise<unknown>) => {
    const started = Date.now();
    await f();
    return Date.now() - started;
  };
  const fetchBody = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

  it('a 2 MB/s client download limit gives 1.6–2.4 MB/s on a 20 MB download', async () => {
    const url = `${base}/d/t/big.bin?sign=${encodeURIComponent(s.core.signer.sign('/t/big.bin'))}`;
    const freeMs = await timed(() => fetchBody(url));
    expect((await save('max_client_download_speed', '2048')).code).toBe(200);
    let limitedMs: number;
    try {
      const started = Date.now();
      const body = await fetchBody(url);
      const ms = Date.now() - started;
      limitedMs = ms;
      expect(body.equals(big)).toBe(true);
      expectLimited(body.length, ms, freeMs);
    } finally {
      await save('max_client_download_speed', '-1');
    }
    // and without it the same download is much faster than the limited one just before (no
    // absolute rate: a loaded machine is slow for both)
    const started = Date.now();
    const res = await fetch(`${base}/d/t/big.bin?sign=${encodeURIComponent(s.core.signer.sign('/t/big.bin'))}`);
    expect((await res.arrayBuffer()).byteLength).toBe(big.length);
    expect(Date.now() - started).toBeLessThan(limitedMs / 2);
  }, 60_000);

  it('the client upload and server download limits hold too (4 MB at 2 MB/s)', async () => {
    const part = big.subarray(0, 4 * MiB);
    const upload = async (name: string) => {
      const res = await fetch(`${base}/api/fs/put`, { method: 'PUT', headers: { authorization: admin, 'file-path': encodeURIComponent(`/t/up/${name}`), 'content-length': String(part.length) }, body: part });
      expect((await res.json()).code).toBe(200);
    };
    const freeUpMs = await timed(() => upload('unlimited.bin'));
    rmSync(path.join(root, 'up', 'unlimited.bin'));
    expect((await save('max_client_upload_speed', '2048')).code).toBe(200);
    try {
      const ms = await timed(() => upload('part.bin'));
      expectLimited(part.length, ms, freeUpMs);
      expect(readFileSync(path.join(root, 'up', 'part.bin')).equals(part)).toBe(true);
    } finally {
      await save('max_client_upload_speed', '-1');
    }
    const partUrl = `${base}/d/t/up/part.bin?sign=${encodeURIComponent(s.core.signer.sign('/t/up/part.bin'))}`;
    const freeDownMs = await timed(() => fetchBody(partUrl));
    expect((await save('max_server_download_speed', '2048')).code).toBe(200);
    try {
      const started = Date.now();
      expect((await fetchBody(partUrl)).byteLength).toBe(part.length);
      expectLimited(part.length, Date.now() - started, freeDownMs);
    } finally {
      await save('max_server_download_speed', '-1');
    }
  }, 60_000);
});
