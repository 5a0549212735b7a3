import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { filesBelow } from './files.js';

const tree = (n: number, prefix = 'f') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`d${i % 4}/${prefix}${i}.txt`, `content of ${prefix}${i}\n`]));

/**
 * Sync jobs between two Local storages through the API: a first run copies all, a second copies
 * nothing, a change of 10 and a delete of 5 is carried by sync (deletes into the trash) and copy
 * (deletes nothing); move, filters, max deletes, dry run, bisync's conflict rules, reports, and a
 * cron schedule fired by a fake clock.
 */
describe.each(BACKENDS)('sync jobs Local → Local on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let srcRoot: string;
  let dstRoot: string;
  const api = (url: string, body?: unknown, query?: Record<string, string>) => s.api(body === undefined ? 'GET' : 'POST', url, { token: admin, body, query });
  const create = async (job: Record<string, unknown>) => {
    const r = await api('/api/admin/sync/create', job);
    expect(r.code, r.message).toBe(200);
    return r.data as { id: number };
  };
  /** Runs a job and waits for its task; the report of that run. */
  const run = async (id: number) => {
    const r = await api('/api/admin/sync/run', {}, { id: String(id) });
    expect(r.code, r.message).toBe(200);
    const task = s.core.tasks.get(r.data.task.id)!;
    await task.done;
    const got = await api('/api/admin/sync/get', undefined, { id: String(id) });
    const last = got.data.reports[0];
    expect(last.task_id).toBe(r.data.task.id);
    return { task, last, report: last.report };
  };

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    srcRoot = makeTree(tree(40));
    dstRoot = makeTree({ 'keep/.placeholder': '' });
    rmSync(path.join(dstRoot, 'keep'), { recursive: true });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/src', srcRoot) })).code).toBe(200);
    // The destination keeps a trash: sync's deletes go there.
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/dst', dstRoot, { trash: 'on' }) })).code).toBe(200);
  });
  afterAll(async () => {
    await s?.destroy();
    for (const r of [srcRoot, dstRoot]) if (r) rmSync(r, { recursive: true, force: true });
  });

  it('refuses bad jobs with a clear error: mode, nested paths, a cron or time zone that is wrong, a bad size', async () => {
    const base = { name: 'bad', src: '/src', dst: '/dst/x' };
    for (const [body, msg] of [
      [{ ...base, mode: 'mirror' }, /mode/],
      [{ ...base, src: '/dst', dst: '/dst/x' }, /inside one another/],
      [{ ...base, schedule: { cron: '61 * * * *' } }, /minute/],
      [{ ...base, schedule: { cron: '* * *' } }, /5 fields/],
      [{ ...base, schedule: { cron: '0 3 * * *', time_zone: 'Mars/Olympus' } }, /time zone/],
      [{ ...base, filters: { min_size: '12 parsecs' } }, /not a size/],
      [{ ...base, filters: { include: ['[abc'] } }, /without \]/],
      [{ ...base, options: { transfers: 0 } }, /transfers/],
    ] as const) {
      const r = await api('/api/admin/sync/create', body);
      expect(r.code, JSON.stringify(body)).toBe(400);
      expect(r.message).toMatch(msg);
    }
    expect((await api('/api/admin/sync/get', undefined, { id: '999' })).code).toBe(404);
  });

  it('sync: the first run copies all, a second copies 0; change 10 and delete 5: copies 10, deletes 5 into the trash', async () => {
    const job = await create({ name: 'mirror', src: '/src', dst: '/dst/mirror', mode: 'sync' });
    const first = await run(job.id);
    expect(first.last.state).toBe('succeeded');
    expect(first.report.copied.files).toBe(40);
    expect(filesBelow(path.join(dstRoot, 'mirror'))).toEqual(filesBelow(srcRoot));
    expect(readFileSync(path.join(dstRoot, 'mirror/d1/f5.txt'), 'utf8')).toBe('content of f5\n');
    // Local keeps the time a put gives: the run recorded each copy's time as the disk holds it, so
    // the next run has nothing to record again.
    const state = await s.core.sync.stateOf(job.id);
    expect(state.size).toBe(40);
    for (const [rel, r] of state) expect([rel, r.dstMtime]).toEqual([rel, statSync(path.join(dstRoot, 'mirror', rel)).mtime.getTime()]);

    const second = await run(job.id);
    expect(second.report.copied.files + second.report.updated.files + second.report.deleted.files).toBe(0);
    expect(second.report.skipped.files).toBe(40);

    const names = Object.keys(tree(40));
    for (const rel of names.slice(0, 10)) writeFileSync(path.join(srcRoot, rel), `changed ${rel}, longer than before\n`);
    for (const rel of names.slice(10, 15)) rmSync(path.join(srcRoot, rel));
    const third = await run(job.id);
    expect(third.report.updated.files).toBe(10);
    expect(third.report.copied.files).toBe(0);
    expect(third.report.deleted.files).toBe(5);
    expect(third.report.items.deleted.map((i: { path: string }) => i.path).sort()).toEqual(names.slice(10, 15).map((n) => `/${n}`).sort());
    expect(filesBelow(path.join(dstRoot, 'mirror'))).toEqual(filesBelow(srcRoot));
    for (const rel of names.slice(0, 10)) expect(readFileSync(path.join(dstRoot, 'mirror', rel), 'utf8')).toBe(readFileSync(path.join(srcRoot, rel), 'utf8'));
    // The deletes went into the destination's trash, listed for the admin.
    const trash = await api('/api/fs/trash/list', { path: '/dst' });
    expect(trash.data.content.map((e: { name: string }) => e.name).sort()).toEqual(names.slice(10, 15).map((n) => path.posix.basename(n)).sort());
  });

  it('copy copies the 10 changed and deletes none; a changed mtime alone counts under mtime, not under size', async () => {
    const job = await create({ name: 'backup', src: '/src', dst: '/dst/backup', mode: 'copy' });
    expect((await run(job.id)).report.copied.files).toBe(35);
    const names = filesBelow(srcRoot);
    for (const rel of names.slice(0, 10)) writeFileSync(path.join(srcRoot, rel), `second change of ${rel}, longer again than before\n`);
    for (const rel of names.slice(10, 15)) rmSync(path.join(srcRoot, rel));
    const r = await run(job.id);
    expect([r.report.updated.files, r.report.copied.files, r.report.deleted.files]).toEqual([10, 0, 0]);
    expect(filesBelow(path.join(dstRoot, 'backup'))).toHaveLength(35);

    const t = new Date(Date.now() - 3_600_000);
    utimesSync(path.join(srcRoot, names[0]!), t, t);
    const bySize = await create({ name: 'by-size', src: '/src', dst: '/dst/backup', mode: 'copy', compare: 'size' });
    expect((await run(bySize.id)).report.updated.files).toBe(0);
    expect((await run(job.id)).report.updated.files).toBe(1);
    expect(Math.abs(statSync(path.join(dstRoot, 'backup', names[0]!)).mtimeMs - t.getTime())).toBeLessThan(1000);
  });

  it('checksum: Local files of one size and time but other bytes are read and updated (mtime skips them); a pair the last run left in step is not read again', async () => {
    const at = new Date(Date.now() - 7_200_000);
    const a = makeTree({ 'same.txt': 'same', 'other.txt': 'AAAA', 'big.bin': Buffer.alloc(3 << 20, 7) });
    const b = makeTree({ 'same.txt': 'same', 'other.txt': 'BBBB', 'big.bin': Buffer.concat([Buffer.alloc((3 << 20) - 1, 7), Buffer.from([8])]) });
    for (const root of [a, b]) for (const f of ['same.txt', 'other.txt', 'big.bin']) utimesSync(path.join(root, f), at, at);
    try {
      expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/ck-a', a) })).code).toBe(200);
      expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/ck-b', b) })).code).toBe(200);
      const byTime = await create({ name: 'ck-mtime', src: '/ck-a', dst: '/ck-b', mode: 'copy' });
      const r1 = await run(byTime.id);
      expect([r1.report.updated.files, r1.report.skipped.files]).toEqual([0, 3]);
      expect(readFileSync(path.join(b, 'other.txt'), 'utf8')).toBe('BBBB');

      const byHash = await create({ name: 'ck-sum', src: '/ck-a', dst: '/ck-b', mode: 'copy', compare: 'checksum' });
      const dry = (await api('/api/admin/sync/dry_run', {}, { id: String(byHash.id) })).data;
      expect(dry.updated.files).toBe(2);
      expect(readFileSync(path.join(b, 'other.txt'), 'utf8')).toBe('BBBB');
      const r2 = await run(byHash.id);
      expect([r2.report.updated.files, r2.report.skipped.files]).toEqual([2, 1]);
      expect(r2.report.items.updated.map((i: { path: string; reason: string }) => `${i.path} ${i.reason}`).sort()).toEqual(['/big.bin md5 differs', '/other.txt md5 differs']);
      expect(readFileSync(path.join(b, 'other.txt'), 'utf8')).toBe('AAAA');
      expect(readFileSync(path.join(b, 'big.bin')).equals(readFileSync(path.join(a, 'big.bin')))).toBe(true);
      expect((await run(byHash.id)).report.updated.files).toBe(0);

      // A pair the last run left in step (the sizes and times it recorded) is not read again.
      writeFileSync(path.join(b, 'other.txt'), 'CCCC');
      utimesSync(path.join(b, 'other.txt'), at, at);
      expect((await run(byHash.id)).report.updated.files).toBe(0);
    } finally {
      for (const r of [a, b]) rmSync(r, { recursive: true, force: true });
    }
  });

  it('dry run answers the plan and writes nothing; a job with dry_run on only plans', async () => {
    const job = await create({ name: 'dry', src: '/src', dst: '/dst/dry', mode: 'sync' });
    const plan = await api('/api/admin/sync/dry_run', {}, { id: String(job.id) });
    expect(plan.code).toBe(200);
    expect(plan.data.dry_run).toBe(true);
    expect(plan.data.copied.files).toBe(filesBelow(srcRoot).length);
    expect(plan.data.items.copied[0]).toMatchObject({ side: 'dst', reason: 'new' });
    expect(existsSync(path.join(dstRoot, 'dry'))).toBe(false);
    const always = await create({ name: 'always-dry', src: '/src', dst: '/dst/dry', mode: 'sync', options: { dry_run: true } });
    const r = await run(always.id);
    expect(r.report.dry_run).toBe(true);
    expect(r.report.copied.files).toBe(filesBelow(srcRoot).length);
    expect(existsSync(path.join(dstRoot, 'dry'))).toBe(false);
  });

  it('filters: include/exclude globs in rclone syntax, and size bounds; excluded files are neither copied nor deleted', async () => {
    const root = makeTree({ 'a.txt': 'a', 'b.log': 'bb', 'sub/c.txt': 'ccc', 'sub/deep/d.txt': 'dddd', 'big.bin': Buffer.alloc(5000), 'tmp/x.txt': 'x' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/fsrc', root) })).code).toBe(200);
    makeTree({ 'f/stray.log': 'keep me', 'f/stray.txt': 'delete me' }, dstRoot);
    const job = await create({ name: 'filtered', src: '/fsrc', dst: '/dst/f', mode: 'sync', filters: { include: ['*.txt', '/big.bin'], exclude: ['tmp/', 'sub/deep/**'], max_size: '4k' } });
    const r = await run(job.id);
    expect(filesBelow(path.join(dstRoot, 'f'))).toEqual(['a.txt', 'stray.log', 'sub/c.txt']);
    expect(r.report.deleted.files).toBe(1);
    const onlyBig = await create({ name: 'only-big', src: '/fsrc', dst: '/dst/big', mode: 'copy', filters: { min_size: 4097 } });
    await run(onlyBig.id);
    expect(filesBelow(path.join(dstRoot, 'big'))).toEqual(['big.bin']);
    const young = await create({ name: 'young', src: '/fsrc', dst: '/dst/young', mode: 'copy', filters: { min_age: '1d' } });
    expect((await run(young.id)).report.copied.files).toBe(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('max deletes: a run that would delete more stops before changing anything', async () => {
    const root = makeTree({ 'one.txt': '1' });
    makeTree({ 'md/x1.txt': '1', 'md/x2.txt': '2', 'md/x3.txt': '3' }, dstRoot);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/msrc', root) })).code).toBe(200);
    const job = await create({ name: 'capped', src: '/msrc', dst: '/dst/md', mode: 'sync', options: { max_deletes: 2 } });
    const r = await run(job.id);
    expect(r.last.state).toBe('failed');
    expect(r.last.error).toMatch(/would delete 3 files, more than max_deletes \(2\)/);
    expect(filesBelow(path.join(dstRoot, 'md'))).toEqual(['x1.txt', 'x2.txt', 'x3.txt']);
    rmSync(root, { recursive: true, force: true });
  });

  it('move: files leave the source once in the destination', async () => {
    const root = makeTree({ 'in/m1.txt': 'm1', 'in/sub/m2.txt': 'm2' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/mvsrc', root) })).code).toBe(200);
    const job = await create({ name: 'mover', src: '/mvsrc/in', dst: '/dst/moved', mode: 'move' });
    const r = await run(job.id);
    expect(r.report.copied.files).toBe(2);
    expect(filesBelow(path.join(dstRoot, 'moved'))).toEqual(['m1.txt', 'sub/m2.txt']);
    expect(filesBelow(path.join(root, 'in'))).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  it('bisync: changes go both ways, a delete on one side is carried, a conflict follows the rule (newer wins, keep both)', async () => {
    const a = makeTree({ 'same.txt': 'same', 'both.txt': 'base', 'gone.txt': 'gone soon' });
    const b = makeTree({});
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/ba', a) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/bb', b) })).code).toBe(200);
    const job = await create({ name: 'two-way', src: '/ba', dst: '/bb', mode: 'bisync', options: { conflict: 'newer' } });
    expect((await run(job.id)).report.copied.files).toBe(3);
    writeFileSync(path.join(b, 'from-b.txt'), 'made in b');
    rmSync(path.join(b, 'gone.txt'));
    writeFileSync(path.join(a, 'both.txt'), 'changed in a');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(a, 'both.txt'), old, old);
    writeFileSync(path.join(b, 'both.txt'), 'changed in b, later');
    const r = await run(job.id);
    expect(r.last.state).toBe('succeeded');
    expect(readFileSync(path.join(a, 'from-b.txt'), 'utf8')).toBe('made in b');
    expect(existsSync(path.join(a, 'gone.txt'))).toBe(false);
    expect(readFileSync(path.join(a, 'both.txt'), 'utf8')).toBe('changed in b, later');
    expect(r.report.items.updated[0]).toMatchObject({ path: '/both.txt', side: 'src' });
    expect((await run(job.id)).report.updated.files + (await run(job.id)).report.copied.files).toBe(0);

    await api('/api/admin/sync/update', { id: job.id, name: 'two-way', src: '/ba', dst: '/bb', mode: 'bisync', options: { conflict: 'keep_both' } });
    writeFileSync(path.join(a, 'both.txt'), 'a again');
    writeFileSync(path.join(b, 'both.txt'), 'b again!');
    await run(job.id);
    const conflictA = filesBelow(a).filter((n) => n.startsWith('both.conflict-'));
    expect(conflictA).toHaveLength(1);
    expect(filesBelow(b)).toEqual(filesBelow(a));
    expect(readFileSync(path.join(a, 'both.txt'), 'utf8')).toBe('a again');
    expect(readFileSync(path.join(b, 'both.txt'), 'utf8')).toBe('a again');
    expect(readFileSync(path.join(a, conflictA[0]!), 'utf8')).toBe('b again!');
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  });

  it('a cron schedule fires at its minute (a fake clock): one run, then the next fire moves on', async () => {
    const job = await create({ name: 'nightly', src: '/src', dst: '/dst/nightly', mode: 'copy', schedule: { cron: '30 2 * * *', time_zone: 'Europe/Berlin' } });
    const got = (await api('/api/admin/sync/get', undefined, { id: String(job.id) })).data;
    const next = new Date(got.next_run);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next)).toBe('02:30');
    expect(await s.core.sync.tick(got.next_run - 60_000)).toHaveLength(0);
    const fired = await s.core.sync.tick(got.next_run);
    expect(fired).toHaveLength(1);
    await fired[0]!.done;
    expect(filesBelow(path.join(dstRoot, 'nightly'))).toEqual(filesBelow(srcRoot));
    expect(await s.core.sync.tick(got.next_run)).toHaveLength(0);
    const after = (await api('/api/admin/sync/get', undefined, { id: String(job.id) })).data;
    expect(after.next_run - got.next_run).toBe(86_400_000);
    expect(after.last_run.state).toBe('succeeded');
  });

  it('cancel stops a run (report canceled, nothing torn); the next run carries on', async () => {
    const root = makeTree({ 'slow.bin': Buffer.alloc(2 * 1024 * 1024, 7), 'quick.txt': 'q' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/csrc', root) })).code).toBe(200);
    const job = await create({ name: 'cancel-me', src: '/csrc', dst: '/dst/cancel', mode: 'copy', options: { bandwidth_limit: 64, transfers: 1 } });
    const started = await api('/api/admin/sync/run', {}, { id: String(job.id) });
    const task = s.core.tasks.get(started.data.task.id)!;
    await waitFor(() => task.state === 1 && task.status === 'copying', 10_000);
    expect((await api(`/api/admin/task/sync/cancel?tid=${task.id}`, {})).code).toBe(200);
    await task.done;
    expect(task.state).toBe(4);
    const [report] = (await api('/api/admin/sync/get', undefined, { id: String(job.id) })).data.reports;
    expect(report.state).toBe('canceled');
    expect(existsSync(path.join(dstRoot, 'cancel/slow.bin'))).toBe(false);
    await api('/api/admin/sync/update', { id: job.id, name: 'cancel-me', src: '/csrc', dst: '/dst/cancel', mode: 'copy' });
    const next = await run(job.id);
    expect(next.last.state).toBe('succeeded');
    expect(readFileSync(path.join(dstRoot, 'cancel/slow.bin')).equals(Buffer.alloc(2 * 1024 * 1024, 7))).toBe(true);
    rmSync(root, { recursive: true, force: true });
  });

  it('lists jobs, keeps the last N reports, deletes a job', async () => {
    const job = await create({ name: 'few-reports', src: '/src', dst: '/dst/few', mode: 'copy', options: { keep_reports: 2 } });
    for (let i = 0; i < 3; i++) await run(job.id);
    const got = await api('/api/admin/sync/get', undefined, { id: String(job.id) });
    expect(got.data.reports).toHaveLength(2);
    const list = await api('/api/admin/sync/list', undefined, {});
    expect(list.data.content.map((j: { name: string }) => j.name)).toContain('few-reports');
    expect((await api('/api/admin/sync/delete', {}, { id: String(job.id) })).code).toBe(200);
    expect((await api('/api/admin/sync/get', undefined, { id: String(job.id) })).code).toBe(404);
    await waitFor(async () => (await api('/api/admin/sync/list', undefined, {})).data.content.every((j: { name: string }) => j.name !== 'few-reports'), 2000);
  });
});
