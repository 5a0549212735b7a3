// Work on the local disk done with synchronous calls, in slices between two turns of the event
// loop. For inodes and small files in the kernel's cache a synchronous call (statSync,
// copyFileSync) costs a few microseconds, several times less than a round trip through libuv's
// thread pool and the promise around it. The first slice is small; each slice whose synchronous
// work stays well within the time budget doubles the next, and a slice over the budget (a cold
// disk, a network file system) ends the synchronous mode: the caller does the rest asynchronously.

export class SyncSlices {
  /** False once a slice took longer than the budget: the rest of the work is to be asynchronous. */
  sync = true;
  private slice: number;
  private done = 0;
  /** Milliseconds of synchronous work in the current slice (waits in between do not count). */
  private spent = 0;

  constructor(
    first: number,
    private readonly max: number,
    private readonly budgetMs: number,
  ) {
    this.slice = first;
  }

  /** Runs one unit of synchronous work, counting its time toward the slice. */
  run<T>(work: () => T): T {
    const t0 = performance.now();
    try {
      return work();
    } finally {
      this.spent += performance.now() - t0;
      this.done++;
    }
  }

  /** True when the slice is full: the caller is to `pause()` (or `end()` when the work is over). */
  get full(): boolean {
    return this.done >= this.slice;
  }

  /** Ends the slice and yields to the event loop. */
  async pause(): Promise<void> {
    this.end();
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Ends the slice: adapts the next one, or ends the synchronous mode when it ran over budget. */
  end(): void {
    if (this.spent > this.budgetMs) this.sync = false;
    else if (this.spent < this.budgetMs / 4) this.slice = Math.min(this.slice * 2, this.max);
    this.done = 0;
    this.spent = 0;
  }
}
