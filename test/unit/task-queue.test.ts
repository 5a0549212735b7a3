import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/defaults.js';
import type { TasksRepo } from '../../src/db/tasks.js';
import type { TaskKind } from '../../src/tasks/kinds.js';
import { STATE, TaskManager, type TaskContext, type TaskQueue } from '../../src/tasks/manager.js';
import { MemoryRepo } from '../helpers/memory-tasks.js';
import { waitUntil } from '../helpers/wait.js';

/** What Redis and BullMQ give the processes: one job list, consumers, and signals to the others. */
class Hub {
  jobs: Array<{ kind: TaskKind; id: string }> = [];
  consumers: Array<{ kinds: Set<TaskKind>; run: (id: string) => Promise<void> }> = [];
  listeners: Array<{ from: number; handler: (op: 'cancel' | 'remove', id: string) => void }> = [];
  private nodes = 0;

  node(): TaskQueue {
    const me = this.nodes++;
    return {
      enqueue: async (kind, id) => {
        this.jobs.push({ kind, id });
        this.dispatch();
      },
      consume: async (kinds, run) => {
        this.consumers.push({ kinds: new Set(kinds.map((k) => k.kind)), run });
        this.dispatch();
      },
      signal: (op, id) => {
        for (const l of this.listeners) if (l.from !== me) l.handler(op, id);
      },
      onSignal: (handler) => {
        this.listeners.push({ from: me, handler });
      },
    };
  }

  private dispatch(): void {
    for (const job of [...this.jobs]) {
      const c = this.consumers.find((c) => c.kinds.has(job.kind));
      if (!c) continue;
      this.jobs.splice(this.jobs.indexOf(job), 1);
      void c.run(job.id);
    }
  }
}

const log = pino({ level: 'silent' });
const managers: TaskManager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
});

const until = (what: () => boolean, ms = 5000) => waitUntil(what, ms, 5);

/** A "process": its own manager on the shared table and hub; `work` runs the copy tasks it takes. */
function processOn(repo: MemoryRepo, hub: Hub, work: (payload: { n: number }, ctx: TaskContext) => Promise<void>, opts: { consume: boolean }) {
  const config = defaultConfig().tasks;
  config.copy.max_retry = 0;
  const m = new TaskManager(repo as unknown as TasksRepo, config, log, { retryBaseMs: 20 });
  m.registerResumer('copy', (p) => (ctx) => work(p as { n: number }, ctx));
  m.useQueue(hub.node());
  managers.push(m);
  if (opts.consume) void m.restore();
  return m;
}

const submit = (m: TaskManager, n: number) => m.submit({ kind: 'copy', name: `copy ${n}`, payload: { n }, run: async () => {} });

describe('TaskManager with a shared queue', () => {
  it('a task submitted on A runs on B; every process lists it from the table', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    const ran: string[] = [];
    const a = processOn(repo, hub, async () => void ran.push('a'), { consume: false });
    processOn(repo, hub, async (p, ctx) => {
      ctx.setStatus(`copied ${p.n}`);
      ran.push('b');
    }, { consume: true });
    const t = submit(a, 7);
    expect(t.state).toBe(STATE.PENDING);
    await until(() => repo.rows.get(t.id)?.state === STATE.SUCCEEDED);
    expect(ran).toEqual(['b']);
    const listed = await a.listShared('copy');
    expect(listed.map((x) => [x.id, x.state, x.progress, x.name])).toEqual([[t.id, STATE.SUCCEEDED, 100, 'copy 7']]);
    // A holds nothing in memory: what it lists comes from the table.
    expect(a.get(t.id)).toBeUndefined();
  });

  it('a process takes its own task even when its worker gets the job before enqueue returns', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    let ran = 0;
    const a = processOn(repo, hub, async () => void ran++, { consume: true });
    await until(() => hub.consumers.length === 1);
    const t = submit(a, 8);
    await until(() => repo.rows.get(t.id)?.state === STATE.SUCCEEDED);
    expect(ran).toBe(1);
  });

  it('cancel and delete through A reach the task running on B', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    const a = processOn(repo, hub, async () => {}, { consume: false });
    let aborted = false;
    processOn(repo, hub, (_p, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => {
      aborted = true;
      reject(new Error('aborted'));
    })), { consume: true });
    const t = submit(a, 1);
    await until(() => repo.rows.get(t.id)?.state === STATE.RUNNING);
    expect(await a.cancelShared(t.id)).toBe(true);
    await until(() => repo.rows.get(t.id)?.state === STATE.CANCELED);
    expect(aborted).toBe(true);
    expect(repo.rows.get(t.id)?.error).toBe('context canceled');
    expect(await a.cancelShared(t.id)).toBe(false);

    const u = submit(a, 2);
    await until(() => repo.rows.get(u.id)?.state === STATE.RUNNING);
    await a.removeShared(u.id);
    await new Promise((r) => setTimeout(r, 50));
    expect(repo.rows.has(u.id)).toBe(false);
    expect((await a.listShared('copy')).map((x) => x.id)).toEqual([t.id]);
  });

  it('a queued task canceled before any process takes it is skipped when taken', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    const a = processOn(repo, hub, async () => {}, { consume: false });
    const t = submit(a, 3);
    await until(() => hub.jobs.length === 1);
    expect(await a.cancelShared(t.id)).toBe(true);
    expect(repo.rows.get(t.id)?.state).toBe(STATE.CANCELED);
    let ran = false;
    processOn(repo, hub, async () => void (ran = true), { consume: true });
    await new Promise((r) => setTimeout(r, 50));
    expect(ran).toBe(false);
    expect(repo.rows.get(t.id)?.state).toBe(STATE.CANCELED);
  });

  it('retry through A runs a task that failed on B again', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    const a = processOn(repo, hub, async () => {}, { consume: false });
    let attempts = 0;
    processOn(repo, hub, async () => {
      if (++attempts === 1) throw new Error('disk full');
    }, { consume: true });
    const t = submit(a, 4);
    await until(() => repo.rows.get(t.id)?.state === STATE.FAILED);
    expect(repo.rows.get(t.id)?.error).toBe('disk full');
    expect(await a.retryShared(t.id)).toBe(true);
    await until(() => repo.rows.get(t.id)?.state === STATE.SUCCEEDED);
    expect(attempts).toBe(2);
    expect(repo.rows.get(t.id)).toMatchObject({ error: '', retry_count: 0 });
  });

  it('a process that stops hands its running task back to the queue, and another finishes it', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    const a = processOn(repo, hub, async () => {}, { consume: false });
    const b = processOn(repo, hub, (_p, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopping')))), { consume: true });
    const t = submit(a, 5);
    await until(() => repo.rows.get(t.id)?.state === STATE.RUNNING);
    hub.consumers.splice(0); // B takes no more jobs, as its closed worker would not
    await b.stop();
    await until(() => hub.jobs.length === 1);
    expect(repo.rows.get(t.id)?.state).toBe(STATE.PENDING);
    let finishedBy = '';
    processOn(repo, hub, async () => void (finishedBy = 'c'), { consume: true });
    await until(() => repo.rows.get(t.id)?.state === STATE.SUCCEEDED);
    expect(finishedBy).toBe('c');
  });

  it('a job recovered from a dead process (its row still running) is resumed by the process that takes it', async () => {
    const repo = new MemoryRepo();
    const hub = new Hub();
    const a = processOn(repo, hub, async () => {}, { consume: false });
    const t = submit(a, 6);
    await until(() => hub.jobs.length === 1);
    // What a killed holder leaves: the row says running, and BullMQ puts the stalled job back.
    repo.rows.set(t.id, { ...repo.rows.get(t.id)!, state: STATE.RUNNING, progress: 40 });
    const seen: number[] = [];
    processOn(repo, hub, async (p) => void seen.push(p.n), { consume: true });
    await until(() => repo.rows.get(t.id)?.state === STATE.SUCCEEDED);
    expect(seen).toEqual([6]);
    expect(repo.rows.get(t.id)?.status).toBe('resumed after restart');
  });
});
