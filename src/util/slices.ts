/** The most a slice of long synchronous work runs before it gives the event loop a turn, ms. */
export const SLICE_MS = 5;

/**
 * One gate for every piece of sliced work in the process: at most one slice runs per turn of
 * the event loop. Each request's own budget would not do: sixteen listings each running 5 ms
 * between two polls for I/O hold `/ping` for 80 ms. Work whose slice is spent waits in one
 * queue; each turn, the check phase hands the next one a fresh slice, then the loop polls for
 * I/O (new requests, `/ping`, sockets ready for more) before the next. Waiters go in turn (FIFO),
 * so concurrent answers advance round-robin.
 */
let deadline = 0;
const waiting: Array<() => void> = [];
let scheduled = false;

function runNext(): void {
  scheduled = false;
  const next = waiting.shift();
  if (!next) return;
  deadline = performance.now() + SLICE_MS;
  next();
  if (waiting.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(runNext);
}

/**
 * Time slices for long work on the event loop (ARCHITECTURE.md, "Fair under load"): a loop
 * checks `due()` as it goes (cheap) and, when the current slice is spent, `await pause()`,
 * which waits for its turn at the process-wide gate above. (util/sync-slices.ts is another
 * thing: it sizes batches of synchronous disk calls.)
 */
export class TimeSlices {
  /** `always`: every check is due (tests: a pause after each piece). */
  constructor(private readonly always = false) {}

  /** True when the slice running now has run its time. */
  due(): boolean {
    return this.always || performance.now() >= deadline;
  }

  /** Waits for a turn of its own, after the I/O and the other work waiting meanwhile. */
  pause(): Promise<void> {
    return new Promise<void>((resolve) => {
      waiting.push(resolve);
      schedule();
    });
  }

  /** Pauses when the slice is spent. */
  async maybePause(): Promise<void> {
    if (this.due()) await this.pause();
  }
}
