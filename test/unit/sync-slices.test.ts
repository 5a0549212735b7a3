import { describe, expect, it } from 'vitest';
import { SyncSlices } from '../../src/util/sync-slices.js';

/** Busy work of about `ms` milliseconds (the slices measure the time of synchronous work). */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('SyncSlices', () => {
  it('fills a slice of the first size, then doubles it while the work stays cheap, up to the maximum', async () => {
    const s = new SyncSlices(2, 8, 1000);
    const sizes: number[] = [];
    let n = 0;
    for (let i = 0; i < 30; i++) {
      s.run(() => n++);
      if (s.full) {
        sizes.push(n);
        n = 0;
        await s.pause();
      }
    }
    expect(sizes).toEqual([2, 4, 8, 8, 8]);
    expect(s.sync).toBe(true);
  });

  it('ends the synchronous mode after a slice over its budget', async () => {
    const s = new SyncSlices(2, 8, 5);
    s.run(() => busy(4));
    expect(s.full).toBe(false);
    s.run(() => busy(4));
    expect(s.full).toBe(true);
    await s.pause();
    expect(s.sync).toBe(false);
  });

  it('counts only the synchronous work, not the waits between units', async () => {
    const s = new SyncSlices(2, 8, 5);
    s.run(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    s.run(() => undefined);
    await s.pause();
    expect(s.sync).toBe(true);
  });
});
