import { describe, expect, it } from 'vitest';
import { type Reloadable, Staleness } from '../../src/cluster/staleness.js';
import { STATE_KINDS, type StateVersions, type StateVersionsRepo } from '../../src/db/state-versions.js';

/** The parts a check reloads, counting the reloads; a storage reconcile that may hang. */
function parts(reconcile: () => Promise<void>) {
  const warned: string[] = [];
  const reloaded: string[] = [];
  const p = {
    fs: {},
    storages: { reconcile: () => (reloaded.push('storages'), reconcile()) },
    settings: { reloadFromPeer: async () => void reloaded.push('settings') },
    metas: { reload: async () => void reloaded.push('metas') },
    auth: { drop: () => void reloaded.push('auth') },
    hooks: { reload: async () => void reloaded.push('hooks'), onChange: () => undefined },
    log: { warn: (_o: unknown, msg: string) => void warned.push(msg), error: () => undefined },
  } as unknown as Reloadable;
  return { p, warned, reloaded };
}

const versions = (n: number) => Object.fromEntries(STATE_KINDS.map((k) => [k, n])) as unknown as StateVersions;

describe('state version checks (cluster/staleness.ts)', () => {
  it('a check that never settles is given up on after its bound: the waiting requests go on, the next check starts afresh', async () => {
    let reads = 0;
    const never = new Promise<StateVersions>(() => undefined);
    const repo = { all: () => (++reads === 1 ? never : Promise.resolve(versions(1))), bump: async () => undefined } as unknown as StateVersionsRepo;
    const { p, warned } = parts(async () => undefined);
    let clock = 10_000;
    const s = new Staleness(repo, p, () => clock, 50);
    const t0 = Date.now();
    await s.check(); // the first read never answers
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(warned).toEqual(['a check of the state versions has not finished: requests go on without it']);
    expect(s.checks).toBe(0);
    // Not the hung one again: a new read, which answers.
    await s.check();
    expect([reads, s.checks]).toEqual([2, 1]);
    // A request after STALE_AFTER_MS waits for a check that answers, not for the hung one.
    clock += 2000;
    const fresh = s.fresh();
    expect(fresh).toBeDefined();
    await fresh;
    expect(reads).toBe(3);
  });

  it('a reload that never settles (a storage mount) does not hold the requests either', async () => {
    const repo = { all: async () => versions(1), bump: async () => undefined } as unknown as StateVersionsRepo;
    let hang = true;
    const { p, warned, reloaded } = parts(() => (hang ? new Promise<void>(() => undefined) : Promise.resolve()));
    const s = new Staleness(repo, p, Date.now, 50);
    await s.check();
    expect(reloaded).toContain('storages');
    expect(warned).toHaveLength(1);
    hang = false;
    await s.check(); // the storages' counter is still unseen: reloaded again, now answering
    expect(reloaded.filter((k) => k === 'storages')).toHaveLength(2);
    expect(warned).toHaveLength(1);
  });
});
