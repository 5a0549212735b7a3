import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { isAbort } from '../../src/errors.js';
import { defaultConfig } from '../../src/config/defaults.js';
import type { TasksRepo } from '../../src/db/tasks.js';
import { STATE, type Task, TaskManager, type TaskRun } from '../../src/tasks/manager.js';
import { MemoryRepo } from '../helpers/memory-tasks.js';
import { waitUntil } from '../helpers/wait.js';

const log = pino({ level: 'silent' });
const managers: TaskManager[] = [];
function manager(repo = new MemoryRepo(), tweak: (c: ReturnType<typeof defaultConfig>['tasks']) => void = () => {}) {
  const config = defaultConfig().tasks;
  tweak(config);
  const m = new TaskManager(repo as unknown as TasksRepo, config, log, { retryBaseMs: 40 });
  managers.push(m);
  return { m, repo };
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
});

const until = (what: () => boolean, ms = 5000) => waitUntil(what, ms, 5);

describe('TaskManager', () => {
  it('retries with a growing wait, through errored and waiting-retry, then fails', async () => {
    const { m } = manager(undefined, (c) => (c.copy.max_retry = 2));
    const attempts: number[] = [];
    const lastFlags: boolean[] = [];
    const states: number[] = [];
    const t = m.submit({
      kind: 'copy',
      name: 'flaky',
      run: async (ctx) => {
        attempts.push(Date.now());
        lastFlags.push(ctx.lastAttempt);
        throw new Error(`boom ${attempts.length}`);
      },
    });
    const watcher = setInterval(() => states.at(-1) !== t.state && states.push(t.state), 1);
    await t.done;
    clearInterval(watcher);
    expect(t.state).toBe(STATE.FAILED);
    expect(t.error).toBe('boom 3');
    expect(attempts).toHaveLength(3);
    expect(lastFlags).toEqual([false, false, true]);
    expect(states).toContain(STATE.WAITING_RETRY);
    // 40 ms before the first retry, 80 ms before the second.
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(35);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(75);
  });

  it('a retry that succeeds ends succeeded with the error cleared', async () => {
    const { m } = manager(undefined, (c) => (c.copy.max_retry = 1));
    let n = 0;
    const t = m.submit({ kind: 'copy', name: 'once', run: async () => void (n++ === 0 && (() => { throw new Error('first'); })()) });
    await t.done;
    expect(t.state).toBe(STATE.SUCCEEDED);
    expect(t.error).toBe('');
    expect(t.progress).toBe(100);
  });

  it('cancel aborts the running work; a task waiting for a retry is canceled at once', async () => {
    const { m } = manager(undefined, (c) => (c.copy.max_retry = 5));
    let sawAbort = false;
    let reason: unknown;
    const running = m.submit({
      kind: 'copy',
      name: 'long',
      run: (ctx) =>
        new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => {
            sawAbort = true;
            reason = ctx.signal.reason;
            reject(new Error('stopped'));
          }),
        ),
    });
    await until(() => running.state === STATE.RUNNING);
    expect(m.cancel(running.id)).toBe(true);
    expect(running.state).toBe(STATE.CANCELING);
    await running.done;
    expect(sawAbort).toBe(true);
    // Cancellation is an AbortError (matched by name, never by text); the task keeps OpenList's wire text.
    expect(isAbort(reason)).toBe(true);
    expect(running.state).toBe(STATE.CANCELED);
    expect(running.error).toBe('context canceled');

    const waiting = m.submit({ kind: 'copy', name: 'fails', run: async () => { throw new Error('x'); } });
    await until(() => waiting.state === STATE.WAITING_RETRY);
    m.cancel(waiting.id);
    await waiting.done;
    expect(waiting.state).toBe(STATE.CANCELED);
  });

  it('runs at most `workers` tasks of a kind at once', async () => {
    const { m } = manager(undefined, (c) => (c.copy.workers = 2));
    let active = 0;
    let peak = 0;
    const run: TaskRun = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 20));
      active--;
    };
    const tasks = Array.from({ length: 6 }, (_, i) => m.submit({ kind: 'copy', name: `t${i}`, run }));
    await Promise.all(tasks.map((t) => t.done));
    expect(peak).toBe(2);
    expect(tasks.every((t) => t.state === STATE.SUCCEEDED)).toBe(true);
  });

  it('retry runs a failed task again from a fresh count; canceled ones only when allowed', async () => {
    const { m } = manager(undefined, (c) => (c.copy.max_retry = 0));
    let fail = true;
    const t = m.submit({ kind: 'copy', name: 'r', run: async () => { if (fail) throw new Error('no'); } });
    await t.done;
    expect(t.state).toBe(STATE.FAILED);
    fail = false;
    expect(m.retry(t.id)).toBe(true);
    await t.done;
    expect(t.state).toBe(STATE.SUCCEEDED);
    expect(m.retry(t.id)).toBe(false);

    const c = m.submit({ kind: 'copy', name: 'c', run: () => new Promise(() => {}) });
    m.cancel(c.id);
    await c.done;
    expect(m.retry(c.id)).toBe(false);
  });

  it('after a restart: unfinished tasks with a resumer run again, others fail truthfully', async () => {
    const repo = new MemoryRepo();
    const first = manager(repo).m;
    const block: TaskRun = (ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped'))));
    const resumable = first.submit({ kind: 'copy', name: 'resumable', payload: { n: 1 }, run: block });
    const lost = first.submit({ kind: 'offline_download_transfer', name: 'no resumer', payload: { n: 2 }, run: block });
    const canceling = first.submit({ kind: 'copy', name: 'canceling', payload: { n: 3 }, run: block });
    const done = first.submit({ kind: 'copy', name: 'done', run: async () => {} });
    await until(() => resumable.state === STATE.RUNNING && lost.state === STATE.RUNNING && done.state === STATE.SUCCEEDED);
    await new Promise((r) => setTimeout(r, 20));
    // What a kill -9 leaves: the rows as last written (one task was being canceled).
    repo.rows.get(canceling.id)!.state = STATE.CANCELING;

    const second = manager(repo).m;
    const resumedWith: unknown[] = [];
    second.registerResumer('copy', (p) => async () => void resumedWith.push(p));
    await second.restore();
    const get = (t: Task) => second.get(t.id)!;
    await get(resumable).done;
    expect(get(resumable).state).toBe(STATE.SUCCEEDED);
    expect(resumedWith).toEqual([{ n: 1 }]);
    expect(get(lost).state).toBe(STATE.FAILED);
    expect(get(lost).error).toBe('the task is interrupted and cannot be recovered');
    expect(get(canceling).state).toBe(STATE.CANCELED);
    expect(get(done).state).toBe(STATE.SUCCEEDED);
    await until(() => repo.rows.get(lost.id)?.state === STATE.FAILED);
  });

  it('removing a task deletes its row and a late write does not bring it back', async () => {
    const { m, repo } = manager();
    const t = m.submit({ kind: 'copy', name: 'x', run: async (ctx) => ctx.setProgress(50) });
    await t.done;
    await m.remove(t.id);
    await new Promise((r) => setTimeout(r, 20));
    expect(repo.rows.has(t.id)).toBe(false);
    expect(m.get(t.id)).toBeUndefined();
  });
});
