import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SyncJobsRepo } from '../../src/db/sync-jobs.js';
import { STATE } from '../../src/tasks/manager.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { filesBelow } from './files.js';

const SHARED = BACKENDS.filter((b) => b.name !== 'sqlite');

/**
 * Two nodes on one database (PostgreSQL, MySQL: SQLite is one process's): a job started on both
 * at once runs once (the lease in its row), a schedule's fire starts one run on one node, and a
 * lease left by a dead node passes on once it runs out.
 */
if (SHARED.length === 0) {
  describe.skip('sync jobs on two nodes (needs PostgreSQL or MySQL)', () => {
    it('runs a job once across nodes', () => undefined);
  });
}

describe.each(SHARED)('sync jobs on two nodes ($name)', (backend) => {
  let a: TestServer;
  let b: TestServer;
  let adminA: string;
  let src: string;
  let dst: string;
  const prefix = `t${Math.random().toString(36).slice(2, 10)}_`;

  beforeAll(async () => {
    a = await startServer(backend, { prefix });
    b = await startServer(backend, { prefix });
    adminA = await a.login();
    src = makeTree(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`d${i % 3}/n${i}.txt`, `node file ${i}\n`])));
    dst = makeTree({});
    for (const [m, root] of [['/src', src], ['/dst', dst]] as const) expect((await a.api('POST', '/api/admin/storage/create', { token: adminA, body: localStorage(m, root) })).code).toBe(200);
    await b.core.storages.loadAll();
  });
  afterAll(async () => {
    await b?.destroy();
    await a?.destroy();
    for (const d of [src, dst]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('a job started on both nodes at once runs once: one run copies everything, the other is refused', async () => {
    const created = await a.api('POST', '/api/admin/sync/create', { token: adminA, body: { name: 'shared', src: '/src', dst: '/dst/once', mode: 'sync' } });
    const id = created.data.id as number;
    const settled = await Promise.allSettled([a.core.sync.run(id), b.core.sync.run(id)]);
    const tasks = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const r of settled) if (r.status === 'rejected') expect((r.reason as Error).message).toMatch(/is running/);
    await Promise.all(tasks.map((t) => t.done));
    const succeeded = tasks.filter((t) => t.state === STATE.SUCCEEDED);
    expect(succeeded, JSON.stringify((await a.core.sync.get(id)).reports.map((r) => [r.error, r.report.failures.slice(0, 2)]))).toHaveLength(1);
    for (const t of tasks.filter((x) => x !== succeeded[0])) expect(t.error).toMatch(/running on another node/);
    const reports = (await a.core.sync.get(id)).reports;
    expect(reports.filter((r) => r.state === 'succeeded').map((r) => r.report.copied.files)).toEqual([60]);
    expect(reports.reduce((n, r) => n + r.report.copied.files, 0)).toBe(60);
    expect(filesBelow(path.join(dst, 'once'))).toEqual(filesBelow(src));
  });

  it("a schedule's fire starts one run on one node", async () => {
    const created = await a.api('POST', '/api/admin/sync/create', { token: adminA, body: { name: 'scheduled', src: '/src', dst: '/dst/sched', mode: 'copy', schedule: { cron: '*/5 * * * *' } } });
    const at = created.data.next_run as number;
    expect(at % 300_000).toBe(0);
    const fired = [...(await Promise.all([a.core.sync.tick(at), b.core.sync.tick(at)]))].flat();
    expect(fired).toHaveLength(1);
    await fired[0]!.done;
    expect(fired[0]!.state).toBe(STATE.SUCCEEDED);
    const job = await b.core.sync.get(created.data.id);
    expect(job.next_run).toBe(at + 300_000);
    expect(job.reports).toHaveLength(1);
  });

  it("a dead node's lease passes on once it runs out", async () => {
    const repo = new SyncJobsRepo(a.core.db);
    const id = (await a.core.sync.byName('shared')).id;
    const now = Date.now();
    expect(await repo.lease(id, 'dead-node', now, now + 800)).toBe(true);
    await expect(b.core.sync.run(id)).rejects.toThrow(/running \(on dead-node\)/);
    expect(await repo.lease(id, b.core.sync.nodeId, Date.now(), Date.now() + 30_000)).toBe(false);
    await new Promise((r) => setTimeout(r, 900));
    expect(await repo.lease(id, b.core.sync.nodeId, Date.now(), Date.now() + 30_000)).toBe(true);
    await repo.release(id, b.core.sync.nodeId);
    const t = await b.core.sync.run(id);
    await t.done;
    expect(t.state).toBe(STATE.SUCCEEDED);
  });
});
