import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { freePort } from '../helpers/process.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.js';
import { scratch } from './peers.js';

/** Rejects with `label` when `p` has not settled within `ms` (a deadlock shows as this, not as the suite's timeout). */
function within<T>(ms: number, label: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${label}: no answer within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

// A storage whose mount sends requests to this very server (here WebDAV on its own /dav; in a
// cluster, on a peer whose mount asks back): every request used to wait for the whole load of the
// storages, this mount's own PROPFIND included, so the load waited for itself and every request
// after it waited for ever.
describe("a WebDav storage on this server's own /dav", () => {
  const files = scratch('dav-self');
  let s: TestServer;
  afterAll(async () => {
    await s?.destroy();
    rmSync(files, { recursive: true, force: true });
  });

  it('mounts again on "reload all" while the requests its mount sends here are answered', async () => {
    makeTree({ 'pub/p.txt': 'public bytes' }, files);
    s = await startServer(BACKENDS[0]!);
    const token = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/local', files) })).code).toBe(200);
    const port = await freePort();
    await s.app.listen({ port, host: '127.0.0.1' });
    const addition = { address: `http://127.0.0.1:${port}/dav`, username: 'admin', password: ADMIN_PASSWORD, root_folder_path: '/local/pub' };
    const made = await s.api('POST', '/api/admin/storage/create', { token, body: { mount_path: '/wd', driver: 'WebDav', addition: JSON.stringify(addition) } });
    expect(made.code, made.message).toBe(200);
    expect((await s.api('POST', '/api/admin/storage/load_all', { token })).code).toBe(200);
    const listed = await within(15_000, 'listing /wd after reload all', s.api('POST', '/api/fs/list', { token, body: { path: '/wd', refresh: true } }));
    expect(listed.code, listed.message).toBe(200);
    expect(listed.data.content.map((o: { name: string }) => o.name)).toEqual(['p.txt']);
    const root = await within(15_000, 'listing / after reload all', s.api('POST', '/api/fs/list', { token, body: { path: '/' } }));
    expect(root.data.content.map((o: { name: string }) => o.name).sort()).toEqual(['local', 'wd']);
    const storages = await s.api('GET', '/api/admin/storage/list', { token });
    const status = Object.fromEntries(storages.data.content.map((r: { mount_path: string; status: string }) => [r.mount_path, r.status]));
    expect([status['/local'], status['/wd']]).toEqual(['work', 'work']);
  }, 60_000);
});
