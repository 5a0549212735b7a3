// The VMs these benchmarks run on hand free memory back to their host ("free page reporting",
// the kernel's page_reporting module with the parameters under /sys/module/page_reporting): a
// block of guest memory that has been free for `min_free_ms` (0 on these machines) is reported,
// the host takes it back, and the next write into it faults it in again from the host. A 1 GiB
// write into the page cache then costs ~1.3 s of kernel time instead of ~0.25 s (`dd` of 1 GiB
// right after freeing 1 GiB, then again 5 s later). Between the untimed write that frees memory
// before each timed one (write.ts, "prefault") and the timed write, the host took back 40 % of
// the freed GiB in 0.5 s and 80 % in 4 s, so a write's cost depended on how fast it ran: a
// slower writer found less memory still backed, and two uploads of the same server differed by
// one CPU second per GiB at random.
//
// holdFreedMemory raises `min_free_ms` for the run (freed memory stays with the guest that long
// before it may be reported) and puts the old value back when the process exits; every
// benchmark then writes into memory the guest already has. BENCH_PAGE_REPORTING=keep leaves the
// machine's setting alone. The machine's own value is also kept in a file of the temp folder
// until it is put back, so after a `kill -9` of the bench the next run restores that value, not
// the raised one it finds (meanwhile the host only gets freed memory back later).

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PARAMETER = '/sys/module/page_reporting/parameters/min_free_ms';
/** The machine's value while a run holds memory (left behind by a run that was killed). */
const SAVED = path.join(os.tmpdir(), 'atrium-bench-min-free-ms');
/** How long freed memory stays with the guest during a run: far longer than any prefault-to-write gap. */
const HOLD_MS = 120_000;

let restore: (() => void) | undefined;

/**
 * Raises the page-reporting delay for this process's lifetime where the machine has one and
 * lets it be set; returns what was done, for the results' environment.
 */
export function holdFreedMemory(): string {
  if (process.env.BENCH_PAGE_REPORTING === 'keep') return 'left as the machine has it (BENCH_PAGE_REPORTING=keep)';
  let current: string;
  try {
    current = readFileSync(PARAMETER, 'utf8').trim();
  } catch {
    return 'none (no free page reporting on this machine)';
  }
  if (restore) return `min_free_ms ${HOLD_MS} for the run`;
  const saved = savedValue();
  const before = saved ?? current;
  try {
    if (saved === undefined) writeFileSync(SAVED, before);
    writeFileSync(PARAMETER, String(HOLD_MS));
  } catch (err) {
    if (saved === undefined) rmSync(SAVED, { force: true });
    return `min_free_ms ${current}, could not be raised (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): figures of page-cache writes may be bimodal`;
  }
  restore = () => {
    try {
      writeFileSync(PARAMETER, before);
      rmSync(SAVED, { force: true });
    } catch {
      /* best effort at exit */
    }
  };
  process.on('exit', restore);
  return `min_free_ms ${before} → ${HOLD_MS} for the run (freed memory stays with the VM)`;
}

/** The machine's value saved by a run that did not put it back, when it looks like one. */
function savedValue(): string | undefined {
  try {
    const v = readFileSync(SAVED, 'utf8').trim();
    return /^\d+$/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
