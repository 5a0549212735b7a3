import { describe, expect, it } from 'vitest';
import type { StorageRow, StoragesRepo } from '../../src/db/storages.js';
import { registerDriver } from '../../src/drivers/registry.js';
import type { Driver } from '../../src/drivers/types.js';
import { Storages } from '../../src/fs/storages.js';
import type { Logger } from '../../src/logger.js';
import type { LinkFetcher } from '../../src/net/link-fetch.js';

/** A driver whose init waits until the test opens its storage's gate (a peer that is slow to answer). */
const gates = new Map<string, { open: () => void; fail: (err: Error) => void; opened: Promise<void> }>();
const dropped: string[] = [];
function gate(name: string, open = false) {
  let release!: () => void;
  let fail!: (err: Error) => void;
  const opened = new Promise<void>((resolve, reject) => ((release = resolve), (fail = reject)));
  gates.set(name, { open: release, fail, opened });
  if (open) release();
}
registerDriver({
  config: { name: 'GateTest' } as never,
  additional: [],
  create: (addition) => {
    const name = String(addition.gate);
    return { init: () => gates.get(name)!.opened, drop: async () => void dropped.push(name), addition: () => addition } as unknown as Driver;
  },
});

const saved: StorageRow[] = [];
function storages(rows: StorageRow[]) {
  const repo = {
    all: async () => rows.map((r) => ({ ...r })),
    byId: async (id: number) => rows.find((r) => r.id === id),
    update: async (r: StorageRow) => void saved.push({ ...r }),
  } as unknown as StoragesRepo;
  const log = { warn: () => undefined, error: () => undefined, info: () => undefined } as unknown as Logger;
  return new Storages({ repo, log, tempDir: '/tmp', fileType: () => 0, links: {} as LinkFetcher, vfs: () => ({}) as never, sign: () => '', siteUrl: '', onChange: () => undefined, onDriverError: () => undefined });
}

const row = (id: number, mount: string, g: string, modified = 1): StorageRow =>
  ({ id, mount_path: mount, driver: 'GateTest', addition: JSON.stringify({ gate: g }), status: 'work', modified, disabled: false, order: 0 }) as unknown as StorageRow;

/** Whether `p` settles within a few turns of the loop. */
async function settles(p: Promise<unknown>): Promise<boolean> {
  return Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 30))]);
}

/** The gate of the mount serving `p`, when its driver is ready. */
const driverName = (s: Storages, p: string) => {
  const m = s.resolve(p)?.storage;
  return m?.driver ? JSON.parse(m.row.addition).gate : undefined;
};

describe('mounting storages (fs/storages.ts)', () => {
  it('a path waits only for the mounts that decide it: one whose peer has not answered holds no other path', async () => {
    gate('a', true);
    gate('b');
    const s = storages([row(1, '/a', 'a'), row(2, '/b', 'b')]);
    const load = s.loadAll();
    expect(await settles(s.ready('/a/x'))).toBe(true);
    expect(driverName(s, '/a/x')).toBe('a');
    // the pending storage's own paths, a folder above it and "every storage" wait for it
    for (const p of [s.ready('/b/x'), s.ready('/'), s.ready()]) expect(await settles(p)).toBe(false);
    gates.get('b')!.open();
    expect(await settles(Promise.all([load, s.ready('/b/x'), s.ready()]))).toBe(true);
    expect(driverName(s, '/b/x')).toBe('b');
  });

  it('a storage mounted again serves with its previous mount until the new one is ready; reconcile does not wait for the mount', async () => {
    gate('old', true);
    const rows = [row(1, '/a', 'old')];
    const s = storages(rows);
    await s.loadAll();
    gate('new');
    rows[0] = row(1, '/a', 'new', 2);
    const done = s.reconcile();
    expect(await settles(done)).toBe(true);
    const { ids, mounted } = await done;
    expect(ids).toEqual([1]);
    expect(await settles(mounted)).toBe(false);
    expect(await settles(s.ready('/a/x'))).toBe(true);
    expect(driverName(s, '/a/x')).toBe('old');
    // a second reconcile while the mount is under way does not start another
    expect((await s.reconcile()).ids).toEqual([]);
    gates.get('new')!.open();
    await mounted;
    expect(driverName(s, '/a/x')).toBe('new');
    expect(dropped).toContain('old');
  });

  it('a storage disabled while its mount is under way is not mounted when the mount finishes', async () => {
    gate('late');
    const rows = [row(1, '/late', 'late')];
    const s = storages(rows);
    const load = s.loadAll();
    await settles(load);
    rows[0] = { ...rows[0]!, disabled: true, modified: 2 };
    expect((await s.reconcile()).ids).toEqual([1]);
    expect(await settles(s.ready('/late'))).toBe(true);
    gates.get('late')!.open();
    await load;
    expect(s.resolve('/late/x')).toBeUndefined();
    expect(dropped).toContain('late');
  });

  it("a mount made moot by a newer row saves nothing of its older row (its failure status would have put the old row back)", async () => {
    gate('v1');
    gate('v2', true);
    const rows = [row(7, '/v', 'v1')];
    const s = storages(rows);
    const load = s.loadAll();
    await settles(load);
    rows[0] = row(7, '/v', 'v2', 2);
    await (await s.reconcile()).mounted;
    expect(driverName(s, '/v/x')).toBe('v2');
    gates.get('v1')!.fail(new Error('peer refused'));
    await load;
    expect(driverName(s, '/v/x')).toBe('v2');
    expect(saved.filter((r) => r.id === 7).map((r) => r.addition)).toEqual([]);
  });
});
