import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** How often the worker copies the WAL back into the database file. */
const CHECKPOINT_EVERY_MS = 1_000;
/** SQLite's own threshold (pages of WAL), which the main connection uses again if the worker is gone. */
const DEFAULT_AUTOCHECKPOINT = 1_000;
/** With the worker running, the main connection checkpoints itself only past this (the worker fell far behind). */
const FALLBACK_AUTOCHECKPOINT = 16_000;
/** Write statements on the main connection before the worker is started (an idle server never starts it). */
const START_AFTER_WRITES = 64;

// Plain CommonJS evaluated in the worker: better-sqlite3 is resolved by the main thread and
// passed in, so the server bundle needs no second entry point.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
// Only a checkpoint that copied frames is told (an idle server's main thread is not woken each
// second); one that fails (busy) is left to the next.
const checkpoint = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    if (r && r.checkpointed > 0) parentPort.postMessage({ checkpointed: r.checkpointed });
  } catch {}
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m === 'now') return checkpoint();
  if (m !== 'stop') return;
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  db.close();
  parentPort.close();
});
`;

/**
 * Moves SQLite's WAL checkpoints off the event loop. A checkpoint ends with fsync of the WAL and
 * the database file, and SQLite runs it inside whichever commit takes the WAL past 1 000 pages:
 * on the main thread, in the middle of a request. While the disk is busy writing back an upload
 * that fsync took up to ~400 ms here, every request waiting meanwhile. Once the main connection
 * has written a little, a worker thread with a connection of its own checkpoints every second
 * (PASSIVE: it never blocks readers or writers), and the main connection's own threshold is
 * raised to 16 000 pages as a backstop; if the worker fails, the default comes back.
 */
export class SqliteCheckpointer {
  private worker?: Worker;
  private writes = 0;
  /** Stopped, or failed: no worker is started again. */
  private retired = false;
  /** Frames the worker copied back so far (tests). */
  checkpointed = 0;

  constructor(
    private readonly db: SQLite.Database,
    private readonly file: string,
  ) {}

  /** Counts a write statement on the main connection; starts the worker after a few. */
  noteWrite(): void {
    if (this.worker || this.retired || ++this.writes < START_AFTER_WRITES) return;
    this.start();
  }

  get running(): boolean {
    return this.worker !== undefined;
  }

  private start(): void {
    let worker: Worker;
    try {
      const module = createRequire(import.meta.url).resolve('better-sqlite3');
      worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, file: this.file, everyMs: CHECKPOINT_EVERY_MS } });
    } catch {
      this.retired = true;
      return;
    }
    worker.unref();
    worker.on('message', (m: { checkpointed: number }) => {
      this.checkpointed += m.checkpointed;
    });
    const gone = () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.retired = true;
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
    this.db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
  }

  /** Asks the worker for a checkpoint now (tests). */
  now(): void {
    this.worker?.postMessage('now');
  }

  /** Stops the worker after a last checkpoint; the main connection takes its default back. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    this.retired = true;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    const timer = setTimeout(() => void worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  }
}
