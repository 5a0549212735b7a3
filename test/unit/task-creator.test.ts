import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { defaultConfig } from '../../src/config/defaults.js';
import type { TasksRepo } from '../../src/db/tasks.js';
import { Forbidden, Unauthorized } from '../../src/errors.js';
import { type CreatorAccess, SkippedNames, SYSTEM_RULES } from '../../src/tasks/creator.js';
import { taskErrorText } from '../../src/tasks/error-text.js';
import { STATE, TaskManager } from '../../src/tasks/manager.js';
import { MemoryRepo } from '../helpers/memory-tasks.js';
import { waitUntil } from '../helpers/wait.js';

const log = pino({ level: 'silent' });
const managers: TaskManager[] = [];
const creator = { id: 7, username: 'u', role: 0, passwords: ['pw'] };

/** A manager whose creators' rules are decided by `decide` (undefined: allowed), counting the asks. */
function manager(decide: () => Error | undefined) {
  const config = defaultConfig().tasks;
  config.copy.max_retry = 2;
  const seen: Array<{ id: string; kind: string; passwords?: string[] }> = [];
  const access: CreatorAccess = {
    rules: async (t) => {
      seen.push({ id: t.id, kind: t.kind, passwords: t.creator.passwords });
      const err = decide();
      if (err) throw err;
      return SYSTEM_RULES;
    },
  };
  const repo = new MemoryRepo();
  const m = new TaskManager(repo as unknown as TasksRepo, config, log, { retryBaseMs: 10, access, hostRoots: ['/srv/atrium-data'] });
  managers.push(m);
  return { m, seen, repo };
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
});
const until = (what: () => boolean) => waitUntil(what, 5000, 5);

describe('tasks decided on their creator', () => {
  it('a queued task of a creator refused meanwhile never runs: failed at once, no retry', async () => {
    const { m, seen, repo } = manager(() => new Unauthorized('Current user is disabled, replace please'));
    let ran = false;
    const t = m.submit({ kind: 'copy', name: 'c', creator, run: async () => void (ran = true) });
    await until(() => t.state === STATE.FAILED);
    expect(ran).toBe(false);
    expect(t.retryCount).toBe(0);
    expect(t.error).toBe('the task was stopped: its creator may no longer run it (Current user is disabled, replace please)');
    expect(seen[0]).toEqual({ id: t.id, kind: 'copy', passwords: ['pw'] });
    // The passwords the creator presented are kept with the task.
    await until(() => repo.rows.get(t.id)?.state === STATE.FAILED);
    expect(repo.rows.get(t.id)!.creator_passwords).toBe('["pw"]');
  });

  it('a running task stops at the next name once its creator is refused', async () => {
    let refuse = false;
    const { m } = manager(() => (refuse ? new Forbidden('permission denied') : undefined));
    const written: number[] = [];
    const t = m.submit({
      kind: 'copy',
      name: 'c',
      creator,
      run: async (ctx) => {
        for (let i = 0; i < 5; i++) {
          await ctx.rules();
          written.push(i);
          if (i === 1) refuse = true;
        }
      },
    });
    await until(() => t.state === STATE.FAILED);
    expect(written).toEqual([0, 1]);
    expect(t.retryCount).toBe(0);
    expect(t.error).toMatch(/its creator may no longer run it \(permission denied\)$/);
  });

  it('skipped names end the task failed with them, without a retry', async () => {
    const { m } = manager(() => undefined);
    let attempts = 0;
    const t = m.submit({
      kind: 'copy',
      name: 'c',
      creator,
      run: async () => {
        attempts++;
        const skipped = new SkippedNames();
        await skipped.attempt('a.txt', () => {
          throw new Forbidden('permission denied');
        });
        await skipped.attempt('b.txt', () => undefined);
        skipped.throwIfAny();
      },
    });
    await until(() => t.state === STATE.FAILED);
    expect(attempts).toBe(1);
    expect(t.error).toBe('skipped 1 entry: a.txt (permission denied)');
  });

  it("never shows the server's paths in a task's error", async () => {
    const { m } = manager(() => undefined);
    const sys = Object.assign(new Error("ENAMETOOLONG: name too long, open '/srv/atrium-data/temp/archive/x/aaaa'"), { code: 'ENAMETOOLONG', syscall: 'open', path: '/srv/atrium-data/temp/archive/x/aaaa' });
    const t1 = m.submit({ kind: 'upload', name: 'u', run: async () => Promise.reject(sys) });
    // The same text wrapped into another error (a driver failure), and a server folder named in a message.
    const t2 = m.submit({ kind: 'upload', name: 'u2', run: async () => Promise.reject(new Error(`storing failed: ENOSPC: no space left on device, write '/srv/atrium-data/files/a'`)) });
    const t3 = m.submit({ kind: 'upload', name: 'u3', run: async () => Promise.reject(new Error('bad file /srv/atrium-data/temp/x')) });
    await until(() => [t1, t2, t3].every((t) => t.state === STATE.FAILED));
    expect(t1.error).toBe('a file name is too long for the server (ENAMETOOLONG)');
    expect(t2.error).toBe('storing failed: no space left on the server (ENOSPC)');
    expect(t3.error).toBe('bad file …/temp/x');
    expect(taskErrorText(new Error("EACCES: permission denied, rename '/a/b' -> '/c/d'"))).toBe("the server's file system refused access (EACCES)");
  });
});
