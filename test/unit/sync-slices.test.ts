import { describe, expect, it } from 'vitest';
import { SyncSlices } from '../../src/util/sync-slices.js';

/** A clock that moves only when a unit says how long it took. */
function fakeClock() {
  let t = 0;
  return { now: () => t, unit: (ms: number) => () => void (t += ms) };
}

describe('SyncSlices', () => {
  it('fills a slice of the first size, then doubles it while the work stays cheap, up to the maximum', async () => {
    const c = fakeClock();
    const s = new SyncSlices(2, 8, 1000, c.now);
    const sizes: number[] = [];
    let n = 0;
    for (let i = 0; i < 30; i++) {
      s.run(c.unit(1));
      n++;
      if (s.full) {
        sizes.push(n);
        n = 0;
        await s.pause();
      }
    }
    expect(sizes).toEqual([2, 4, 8, 8, 8]);
    expect(s.sync).toBe(true);
  });

  it('keeps the slice size when a slice took more than a quarter of the budget', async () => {
    const c = fakeClock();
    const s = new SyncSlices(2, 8, 10, c.now);
    s.run(c.unit(2));
    s.run(c.unit(2));
    await s.pause();
    s.run(c.unit(0));
    expect(s.full).toBe(false);
    s.run(c.unit(0));
    expect(s.full).toBe(true);
  });

  it('ends the synchronous mode after a slice whose units, the slowest left out, ran over the budget', async () => {
    const c = fakeClock();
    const s = new SyncSlices(3, 8, 5, c.now);
    s.run(c.unit(3));
    s.run(c.unit(3));
    expect(s.full).toBe(false);
    s.run(c.unit(3));
    expect(s.full).toBe(true);
    await s.pause();
    expect(s.sync).toBe(false);
  });

  it('halves a slice over the budget down to the first size, and ends the synchronous mode when that one is over too', async () => {
    const c = fakeClock();
    const s = new SyncSlices(2, 8, 10, c.now);
    const slice = async (ms: number) => {
      let n = 0;
      while (!s.full) {
        s.run(c.unit(ms));
        n++;
      }
      await s.pause();
      return n;
    };
    expect(await slice(0.5)).toBe(2);
    expect(await slice(0.5)).toBe(4);
    expect(await slice(4)).toBe(8);
    expect(s.sync).toBe(true);
    expect(await slice(4)).toBe(4);
    expect(await slice(4)).toBe(2);
    expect(s.sync).toBe(true);
    expect(await slice(11)).toBe(2);
    expect(s.sync).toBe(false);
  });

  it('stays synchronous when one unit of a slice was slow (the process descheduled), not when it took four budgets', async () => {
    const c = fakeClock();
    const s = new SyncSlices(4, 8, 5, c.now);
    for (const ms of [0, 8, 0, 0]) s.run(c.unit(ms));
    await s.pause();
    expect(s.sync).toBe(true);
    for (const ms of [0, 0, 21, 0]) s.run(c.unit(ms));
    await s.pause();
    expect(s.sync).toBe(false);
  });

  it('counts only the synchronous work, not the waits between units', async () => {
    const c = fakeClock();
    const s = new SyncSlices(2, 8, 5, c.now);
    s.run(c.unit(1));
    c.unit(50)();
    s.run(c.unit(1));
    await s.pause();
    expect(s.sync).toBe(true);
  });
});
