// Large request bodies reach JavaScript as one new 64 KiB Buffer per socket read (Node's HTTP
// parser copies each body chunk out of its read buffer). They die at once, but V8 frees their
// memory only at a garbage collection, and its own trigger for memory held outside the JS heap
// lets some 30-40 MB of dead chunks pile up during a fast upload. A young-generation collection
// (a scavenge: well under a millisecond when little is alive) after every few MiB received keeps
// that pile to a few MiB, for about the same CPU: the later full collections have less to do.

import v8 from 'node:v8';
import vm from 'node:vm';

/** Body bytes received between two young collections. */
export const YOUNG_GC_EVERY = 4 * 1024 * 1024;

type Collect = (options: { type: 'minor' }) => void;
/** False when node was started with scavenges on one thread already (then left as they are). */
const parallelByDefault = !/--(no-parallel-scavenge|single-threaded-gc)\b/.test([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));
let collect: Collect | null | undefined;
let received = 0;
let receiving = 0;

/**
 * V8's `gc` function: the global one when node runs with --expose-gc, otherwise taken from a
 * fresh context made while the flag is briefly on (the flag is switched off again at once, so
 * no other code sees a `gc`). Null where that is refused.
 */
function collector(): Collect | null {
  if (collect !== undefined) return collect;
  const global = (globalThis as { gc?: Collect }).gc;
  if (typeof global === 'function') return (collect = global);
  try {
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc') as unknown;
    collect = typeof fn === 'function' ? (fn as Collect) : null;
  } catch {
    collect = null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/**
 * A body begins to arrive (until the function returned is called; later calls do nothing); see
 * bodiesReceiving.
 */
export function bodyReceiving(): () => void {
  receiving++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    receiving--;
  };
}

/**
 * The bodies being received now (bodyReceiving). Several at once must each hold fewer bytes
 * before they are written (drivers/write-file.ts): V8 counts the memory of body chunks allocated
 * since its last full collection against the old generation's limit, and once a full collection
 * has set that limit close to the heap (after an idle spell, the memory reducer's), three bodies
 * holding 1 MiB batches each, with the chunks between two young collections, went past it again and
 * again: a full collection every 60-90 ms, and 4-4.5 server CPU s per GiB against 1.5 for one body.
 * A chunk alive at two young collections also moves to the old generation, which only a full
 * collection frees: the collections are not spaced further apart instead.
 */
export const bodiesReceiving = (): number => receiving;

/** Counts `bytes` of a request body received; after every YOUNG_GC_EVERY bytes (all requests together), collects young garbage. */
export function bodyBytesReceived(bytes: number): void {
  received += bytes;
  if (received < YOUNG_GC_EVERY) return;
  received = 0;
  const gc = collector();
  if (!gc) return;
  if (!parallelByDefault) return gc({ type: 'minor' });
  // One thread: what these collections find alive is small (the requests in flight), and V8's
  // parallel scavenge wakes helper threads for it, which cost more than the work they share (on
  // the 2-core VM, `--trace-gc` over six 1 GiB uploads, 256 collections each: 0.67 ms on average
  // with them, 0.31 ms on one thread). Only these collections: V8's own keep its setting.
  v8.setFlagsFromString('--no-parallel-scavenge');
  try {
    gc({ type: 'minor' });
  } finally {
    v8.setFlagsFromString('--parallel-scavenge');
  }
}

/**
 * Counts `bytes` of SFTP answers sent, in the same count: ssh2 allocates a new SSH packet for every
 * 32 KiB it sends, dead once written. Left to V8's own trigger, some 25 MB of them waited for a
 * young collection, and memory held outside the heap since the last full collection counts
 * against the old generation's limit: a download started a full collection every ~20 MB.
 */
export function answerBytesSent(bytes: number): void {
  bodyBytesReceived(bytes);
}
