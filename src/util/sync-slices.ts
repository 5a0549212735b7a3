// Work on the local disk done with synchronous calls, in slices between two turns of the event
// loop. For inodes and small files in the kernel's cache a synchronous call (statSync,
// copyFileSync) costs a few microseconds, several times less than a round trip through libuv's
// thread pool and the promise around it.
//
// Each slice's synchronous work is timed against a budget. A slice well within it doubles the
// next (up to a maximum); a slice over it halves the next, down to the first size; a slice of the
// first size still over the budget, or a single unit over four budgets, means a slow disk (cold,
// or a network file system): the synchronous mode ends and the caller does the rest
// asynchronously. The slowest unit of a slice does not count toward the budget test, because on a
// busy machine the process is now and then descheduled in the middle of one unit, which says
// nothing about the disk.
export class SyncSlices {
  /** False once the disk looks slow (above): the rest of the work is to be asynchronous. */
  sync = true;
  private slice: number;
  private readonly first: number;
  private done = 0;
  /** Milliseconds of synchronous work in the current slice (waits in between do not count). */
  private spent = 0;
  /** Milliseconds of the slowest unit of the current slice. */
  private longest = 0;

  constructor(
    first: number,
    private readonly max: number,
    private readonly budgetMs: number,
    /** The clock, in milliseconds (tests pass their own). */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.slice = this.first = first;
  }

  /** Runs one unit of synchronous work, counting its time toward the slice. */
  run<T>(work: () => T): T {
    const t0 = this.now();
    try {
      return work();
    } finally {
      const took = this.now() - t0;
      this.spent += took;
      if (took > this.longest) this.longest = took;
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

  /** Ends the slice: adapts the next one, or ends the synchronous mode when the disk is slow. */
  end(): void {
    const over = this.spent - this.longest > this.budgetMs;
    if (this.longest > 4 * this.budgetMs || (over && this.slice <= this.first)) this.sync = false;
    else if (over) this.slice = Math.max(this.first, this.slice >> 1);
    else if (this.spent < this.budgetMs / 4) this.slice = Math.min(this.slice * 2, this.max);
    this.done = 0;
    this.spent = 0;
    this.longest = 0;
  }
}
