import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

/** Prepared statements the worker keeps, by SQL text. */
const MAX_STATEMENTS = 256;

// Plain CommonJS evaluated in the worker, as the checkpointer's (sqlite-checkpointer.ts):
// better-sqlite3 is resolved by the main thread and passed in.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 10000');
const statements = new Map();
parentPort.on('message', (m) => {
  if (m === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    let stmt = statements.get(m.sql);
    if (!stmt) {
      stmt = db.prepare(m.sql);
      statements.set(m.sql, stmt);
      if (statements.size > workerData.maxStatements) statements.delete(statements.keys().next().value);
    }
    if (!stmt.reader) throw new Error('the read connection runs queries only');
    parentPort.postMessage({ id: m.id, rows: stmt.all(m.params) });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
});
`;

interface Pending {
  resolve: (rows: unknown[]) => void;
  reject: (err: Error) => void;
}

/** One worker of the pool and the queries it has yet to answer. */
interface Slot {
  worker: Worker;
  busy: number;
}

/** Read workers: one per core beyond the main thread's, at least one, at most four. */
const POOL = Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * Read-only connections to the SQLite database in worker threads, for long synchronous queries
 * (the search's matches and counts over a million names): better-sqlite3 runs a query on the
 * thread that calls it, and on the main thread a 100 ms query is 100 ms no other request is
 * served. WAL lets these connections read while the main one writes; a query sees what was
 * committed when it starts. A query goes to the worker with the fewest unanswered ones. The
 * workers start with the first query (an idle server starts none); if one fails, `usable`
 * turns false and callers go back to the main connection.
 */
export class SqliteReader {
  private slots: Slot[] = [];
  private next = 0;
  private readonly pending = new Map<number, Pending & { slot: Slot }>();
  private failed = false;

  constructor(
    private readonly file: string,
    private readonly size = POOL,
  ) {}

  get usable(): boolean {
    return !this.failed;
  }

  /** The rows of one query (SQL and parameters as Kysely compiled them). */
  query(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    const slot = this.pick();
    const id = this.next++;
    slot.busy++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, slot });
      slot.worker.postMessage({ id, sql, params });
    });
  }

  private pick(): Slot {
    if (this.failed) throw new Error('the SQLite read worker has stopped');
    if (this.slots.length === 0) for (let i = 0; i < this.size; i++) this.slots.push({ worker: this.start(), busy: 0 });
    let best = this.slots[0]!;
    for (const s of this.slots) if (s.busy < best.busy) best = s;
    return best;
  }

  private start(): Worker {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, file: this.file, maxStatements: MAX_STATEMENTS } });
    worker.unref();
    worker.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      p.slot.busy--;
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.rows ?? []);
    });
    const gone = (err?: Error) => {
      if (this.failed) return;
      this.failed = true;
      for (const p of this.pending.values()) p.reject(err ?? new Error('the SQLite read worker stopped'));
      this.pending.clear();
      for (const s of this.slots) if (s.worker !== worker) void s.worker.terminate();
      this.slots = [];
    };
    worker.on('error', gone);
    worker.on('exit', () => gone());
    return worker;
  }

  async stop(): Promise<void> {
    const slots = this.slots;
    this.failed = true;
    this.slots = [];
    await Promise.all(
      slots.map(async ({ worker }) => {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage('stop');
        const timer = setTimeout(() => void worker.terminate(), 5_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

class ReaderConnection implements DatabaseConnection {
  constructor(private readonly reader: SqliteReader) {}

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    return { rows: (await this.reader.query(q.sql, q.parameters)) as R[] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite read worker does not stream');
  }
}

class ReaderDriver implements Driver {
  private readonly connection: ReaderConnection;
  constructor(private readonly reader: SqliteReader) {
    this.connection = new ReaderConnection(reader);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('the SQLite read worker runs no transactions');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    await this.reader.stop();
  }
}

/** Kysely's SQLite dialect with queries run on the reader's worker. */
export class SqliteReaderDialect implements Dialect {
  constructor(private readonly reader: SqliteReader) {}
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver(): Driver {
    return new ReaderDriver(this.reader);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}
