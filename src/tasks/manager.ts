import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Config, TaskKindConfig } from '../config/defaults.js';
import type { TaskRow, TasksRepo } from '../db/tasks.js';
import { AbortError, AppError, isKind } from '../errors.js';
import type { Logger } from '../logger.js';
import { type CreatorAccess, type CreatorRules, CreatorStopped, FinalTaskError, SYSTEM_RULES, type TaskCreator } from './creator.js';
import { taskErrorText } from './error-text.js';
import { TASK_KIND_NAMES, TASK_KINDS, type TaskKind } from './kinds.js';

export type { TaskCreator } from './creator.js';

/** Task states of the wire (wire-api.md §12.2). */
export const STATE = {
  PENDING: 0,
  RUNNING: 1,
  SUCCEEDED: 2,
  CANCELING: 3,
  CANCELED: 4,
  ERRORED: 5,
  FAILING: 6,
  FAILED: 7,
  WAITING_RETRY: 8,
  BEFORE_RETRY: 9,
} as const;

export const DONE_STATES: ReadonlySet<number> = new Set([STATE.SUCCEEDED, STATE.CANCELED, STATE.FAILED]);

/** Longest wait between two attempts of a task. */
const MAX_RETRY_DELAY_MS = 60_000;


export interface TaskContext {
  signal: AbortSignal;
  setStatus(status: string): void;
  /** 0–100. */
  setProgress(percent: number): void;
  setTotalBytes(bytes: number): void;
  /** Replaces the task's persisted description (e.g. a download handle worth keeping across a restart). */
  savePayload(payload: unknown): Promise<void>;
  /** No retry follows if this attempt fails (the run applies its on-failure cleanup). */
  lastAttempt: boolean;
  /**
   * The creator's rules as the account and rules are now, asked before each name the task
   * writes; throws `CreatorStopped` (the task fails, no retry) when the creator was deleted,
   * disabled or lost the bit the kind needs.
   */
  rules(): Promise<CreatorRules>;
}

export type TaskRun = (ctx: TaskContext) => Promise<void>;

/**
 * A task whose payload has a string field `temp` owns that path (a file or folder under
 * temp_dir): it is kept while the task is unfinished, and swept on start once nobody owns it.
 */
export interface TempOwner {
  temp?: string;
}

export interface TaskSpec {
  kind: TaskKind;
  name: string;
  creator?: TaskCreator;
  status?: string;
  /** JSON-serialisable description of the work, from which a resumer can rebuild `run`. */
  payload?: unknown;
  run: TaskRun;
}

export class Task {
  state: number = STATE.PENDING;
  status: string;
  progress = 0;
  error = '';
  totalBytes = 0;
  retryCount = 0;
  startTime = 0;
  endTime = 0;
  createdAt = Date.now();
  controller = new AbortController();
  retryTimer: NodeJS.Timeout | undefined;
  /** Resolves when the task reaches a done state (a new promise after each retry). */
  done!: Promise<void>;
  /** Shared (queued) kinds: resolves once the new task's row is written, from when on every process lists it. */
  stored: Promise<void> = Promise.resolve();
  settle!: () => void;

  constructor(
    readonly id: string,
    readonly kind: TaskKind,
    readonly name: string,
    readonly creatorId: number,
    readonly creator: string,
    readonly creatorRole: number,
    public payload: unknown,
    public run: TaskRun | undefined,
    status = '',
    /** The folder passwords the creator presented (each name is decided with them). */
    readonly creatorPasswords: string[] = [],
  ) {
    this.status = status;
    this.arm();
  }

  /** A new `done` promise, for a task that starts over. */
  arm(): void {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }
}

/** TaskInfo JSON of the wire (AList fields plus OpenList's creator and timing fields). */
export function taskJson(t: Task) {
  return {
    id: t.id,
    name: t.name,
    creator: t.creator,
    creator_role: t.creatorRole,
    state: t.state,
    status: t.status,
    progress: Number.isNaN(t.progress) ? 100 : t.progress,
    start_time: t.startTime ? new Date(t.startTime).toISOString() : null,
    end_time: t.endTime ? new Date(t.endTime).toISOString() : null,
    total_bytes: t.totalBytes,
    error: t.error,
  };
}

const newId = () => randomBytes(16).toString('base64url').slice(0, 21);

/**
 * Where tasks run when several processes share them (src/cluster/task-queue.ts): a task is
 * handed over by id once it is in the database, and whichever process takes it runs it.
 */
export interface TaskQueue {
  enqueue(kind: TaskKind, id: string): Promise<void>;
  /** Starts taking tasks of these kinds, at most `workers` at once each; `run` resolves once the task settled here. */
  consume(kinds: Array<{ kind: TaskKind; workers: number }>, run: (id: string) => Promise<void>): Promise<void>;
  /** Asks whichever process holds a task to cancel or remove it. */
  signal(op: 'cancel' | 'remove', id: string): void;
  onSignal(handler: (op: 'cancel' | 'remove', id: string) => void): void;
}

export interface TaskManagerOptions {
  /** Wait before the first retry; doubled for each further one (at most a minute). */
  retryBaseMs?: number;
  /** The creators' rules (view/task-access.ts); without it every task runs as the server. */
  access?: CreatorAccess;
  /** The server's own folders (data, temp), never shown in a task's error. */
  hostRoots?: string[];
}

/**
 * In-process task runner: a bounded number of workers per kind (config `tasks`), retries up to
 * `max_retry` with a growing wait between attempts, cancellation through an AbortSignal, and
 * every task of a persistent kind written to the database so that a restart resumes it (when
 * its kind has a resumer) or marks it failed.
 */
export class TaskManager {
  private readonly tasks = new Map<string, Task>();
  private readonly running = new Map<TaskKind, number>();
  /** Worker counts set at run time (the `*_task_threads_num` settings), over the config's. */
  private readonly workerCounts = new Map<TaskKind, number>();
  private readonly resumers = new Map<TaskKind, (payload: unknown) => TaskRun>();
  private lastWrite = new Map<string, number>();
  /** Writes of one task run one after the other, in order. */
  private writes = new Map<string, Promise<void>>();
  private stopping = false;
  private queue: TaskQueue | undefined;

  constructor(
    private readonly repo: TasksRepo,
    private readonly config: Config['tasks'],
    private readonly log: Logger,
    private readonly opts: TaskManagerOptions = {},
  ) {}

  private kindConfig(kind: TaskKind): TaskKindConfig {
    return this.config[TASK_KINDS[kind]];
  }

  /** Tasks of this kind run at once here. */
  workers(kind: TaskKind): number {
    return Math.max(1, this.workerCounts.get(kind) ?? this.kindConfig(kind).workers);
  }

  /** Changes how many tasks of a kind run at once; waiting tasks start at once when it grows. */
  setWorkers(kind: TaskKind, n: number): void {
    if (!Number.isInteger(n) || n < 1 || this.workerCounts.get(kind) === n) return;
    this.workerCounts.set(kind, n);
    this.pump(kind);
  }

  /** How a persisted task of this kind is rebuilt after a restart (or for a retry of a restored task). */
  registerResumer(kind: TaskKind, resume: (payload: unknown) => TaskRun): void {
    this.resumers.set(kind, resume);
  }

  /**
   * Shares tasks with other processes: from now on a task of a persistent kind that has a
   * resumer goes through the queue, and lists come from the database. Tasks are taken from the
   * queue once `restore()` runs (when storages are mounted).
   */
  useQueue(queue: TaskQueue): void {
    this.queue = queue;
    queue.onSignal((op, id) => {
      if (!this.tasks.has(id)) return;
      if (op === 'cancel') this.cancel(id);
      else void this.remove(id);
    });
  }

  /** True when tasks of this kind run on whichever process takes them from the queue. */
  private isShared(kind: TaskKind): boolean {
    return this.queue !== undefined && this.kindConfig(kind).task_persistant && this.resumers.has(kind);
  }

  private fromRow(row: TaskRow): Task {
    let payload: unknown = null;
    try {
      payload = JSON.parse(row.payload || 'null');
    } catch {
      payload = null;
    }
    const t = new Task(row.id, row.kind as TaskKind, row.name, row.creator_id, row.creator, row.creator_role, payload, undefined, row.status, parsePasswords(row.creator_passwords));
    Object.assign(t, { state: row.state, progress: row.progress, error: row.error, totalBytes: row.total_bytes, retryCount: row.retry_count, startTime: row.start_time, endTime: row.end_time, createdAt: row.created_at || t.createdAt });
    return t;
  }

  private rebuild(t: Task): TaskRun | undefined {
    const resume = this.resumers.get(t.kind);
    return resume && t.payload !== null && t.payload !== undefined ? resume(t.payload) : undefined;
  }

  /** Loads persisted tasks: finished ones for listing, unfinished ones resumed or failed. */
  async restore(): Promise<void> {
    if (this.queue) {
      // Shared tasks stay in the database and the queue: the process that takes a job resumes
      // it, and BullMQ hands a dead process's jobs to a live one.
      const kinds = TASK_KIND_NAMES.filter((k) => this.isShared(k));
      await this.queue.consume(kinds.map((kind) => ({ kind, workers: this.workers(kind) })), (id) => this.runQueued(id));
      return;
    }
    for (const row of await this.repo.all()) {
      const kind = row.kind as TaskKind;
      if (!(kind in TASK_KINDS) || this.tasks.has(row.id)) continue;
      const t = this.fromRow(row);
      this.tasks.set(t.id, t);
      if (DONE_STATES.has(t.state)) {
        t.settle();
        continue;
      }
      if (t.state === STATE.CANCELING) {
        this.finish(t, STATE.CANCELED, 'context canceled');
        continue;
      }
      if (t.state === STATE.FAILING) {
        this.finish(t, STATE.FAILED, t.error);
        continue;
      }
      t.run = this.rebuild(t);
      if (t.run) {
        t.state = STATE.PENDING;
        t.status = 'resumed after restart';
        await this.persist(t, true);
      } else {
        this.finish(t, STATE.FAILED, 'the task is interrupted and cannot be recovered');
      }
    }
    for (const kind of TASK_KIND_NAMES) this.pump(kind);
  }

  submit(spec: TaskSpec): Task {
    const c = spec.creator;
    const t = new Task(newId(), spec.kind, spec.name, c?.id ?? 0, c?.username ?? '', c?.role ?? -1, spec.payload ?? null, spec.run, spec.status, c?.passwords ?? []);
    this.tasks.set(t.id, t);
    const stored = this.persist(t, true);
    if (this.isShared(t.kind)) {
      // Other processes list tasks from the database: the row must exist before an answer names it.
      t.stored = stored;
      void this.handOver(t);
      return t;
    }
    // One process lists its own memory: nothing to wait for (and the answer shows the task queued).
    // Started on the next turn, so the caller answers with the task as queued (state 0).
    setImmediate(() => this.pump(spec.kind));
    return t;
  }

  /** `submit`, answering once the task's row is written: an API answer naming the task is then true on every process. */
  async submitStored(spec: TaskSpec): Promise<Task> {
    const t = this.submit(spec);
    await t.stored;
    return t;
  }

  /** Writes a new task to the database and queues it; with the queue unreachable it runs here. */
  private async handOver(t: Task): Promise<void> {
    await t.stored;
    if (this.tasks.get(t.id) !== t) return;
    // Out of this process's list before the job exists: this process's own worker may take it
    // before `enqueue` returns, and must find it free to run.
    this.tasks.delete(t.id);
    try {
      await this.queue!.enqueue(t.kind, t.id);
    } catch (err) {
      this.log.error({ err, task: t.id }, 'queueing a task failed; it runs in this process');
      this.tasks.set(t.id, t);
      this.pump(t.kind);
    }
  }

  /** Runs a task taken from the queue; resolves once it is done here (or handed back on shutdown). */
  private async runQueued(id: string): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row || DONE_STATES.has(row.state) || this.tasks.has(id)) return;
    if (this.stopping) {
      await this.queue!.enqueue(row.kind as TaskKind, id);
      return;
    }
    const t = this.fromRow(row);
    this.tasks.set(id, t);
    if (t.state === STATE.CANCELING) {
      this.finish(t, STATE.CANCELED, 'context canceled');
    } else {
      t.run = this.rebuild(t);
      if (!t.run) {
        this.finish(t, STATE.FAILED, 'the task is interrupted and cannot be recovered');
      } else {
        // Not pending: another process held it and stopped (its job lock ran out).
        if (t.state !== STATE.PENDING) t.status = 'resumed after restart';
        t.state = STATE.PENDING;
        void this.execute(t);
      }
    }
    await t.done;
    await this.writes.get(id);
    if (this.tasks.get(id) === t) this.tasks.delete(id);
    if (!DONE_STATES.has(t.state) && this.stopping) await this.queue!.enqueue(t.kind, id);
  }

  /** Tasks of a kind as every process sees them: the database's rows, live for those running here. */
  async listShared(kind: TaskKind): Promise<Task[]> {
    if (!this.queue) return this.list(kind);
    const out: Task[] = [];
    const seen = new Set<string>();
    for (const row of await this.repo.byKind(kind)) {
      out.push(this.tasks.get(row.id) ?? this.fromRow(row));
      seen.add(row.id);
    }
    for (const t of this.tasks.values()) if (t.kind === kind && !seen.has(t.id)) out.push(t);
    return out;
  }

  /** `cancel` for a task that may run in another process. */
  async cancelShared(id: string): Promise<boolean> {
    if (!this.queue || this.tasks.has(id)) return this.cancel(id);
    const row = await this.repo.byId(id);
    if (!row || DONE_STATES.has(row.state)) return false;
    this.queue.signal('cancel', id);
    // Also written, for a task no live process holds (queued, or its process died): a running
    // one goes canceling (the process that recovers its job ends it canceled), a waiting one
    // canceled at once. A live holder answers the signal and writes the end state itself.
    const now = Date.now();
    if (row.state === STATE.RUNNING) await this.repo.upsert({ ...row, state: STATE.CANCELING, updated_at: now });
    else await this.repo.upsert({ ...row, state: STATE.CANCELED, error: 'context canceled', end_time: now, updated_at: now });
    return true;
  }

  /** `remove` for a task that may run in another process. */
  async removeShared(id: string): Promise<void> {
    if (!this.queue || this.tasks.has(id)) return this.remove(id);
    this.queue.signal('remove', id);
    await this.repo.delete(id);
  }

  /** `retry` for a task that may have run in another process. */
  async retryShared(id: string): Promise<boolean> {
    if (!this.queue || this.tasks.has(id)) return this.retry(id);
    const row = await this.repo.byId(id);
    if (!row || !this.isShared(row.kind as TaskKind)) return false;
    const retryable = row.state === STATE.FAILED || (row.state === STATE.CANCELED && this.config.allow_retry_canceled);
    if (!retryable) return false;
    await this.repo.upsert({ ...row, state: STATE.PENDING, retry_count: 0, error: '', end_time: 0, updated_at: Date.now() });
    await this.queue.enqueue(row.kind as TaskKind, id);
    return true;
  }

  get(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  list(kind: TaskKind): Task[] {
    return [...this.tasks.values()].filter((t) => t.kind === kind);
  }

  /** Stops a task: a running one is aborted (canceling, then canceled), a waiting one canceled at once. */
  cancel(id: string): boolean {
    const t = this.tasks.get(id);
    if (!t || DONE_STATES.has(t.state)) return false;
    if (t.state === STATE.CANCELING) return true;
    if (t.state === STATE.RUNNING) {
      t.state = STATE.CANCELING;
      void this.persist(t, true);
      t.controller.abort(new AbortError('context canceled'));
    } else {
      clearTimeout(t.retryTimer);
      this.finish(t, STATE.CANCELED, 'context canceled');
    }
    return true;
  }

  /** Runs a failed task (or a canceled one, when `tasks.allow_retry_canceled`) again from a fresh retry count. */
  retry(id: string): boolean {
    const t = this.tasks.get(id);
    if (!t) return false;
    const retryable = t.state === STATE.FAILED || (t.state === STATE.CANCELED && this.config.allow_retry_canceled);
    if (!retryable) return false;
    t.run ??= this.rebuild(t);
    if (!t.run) return false;
    t.retryCount = 0;
    t.controller = new AbortController();
    t.error = '';
    t.endTime = 0;
    t.arm();
    t.state = STATE.PENDING;
    void this.persist(t, true);
    setImmediate(() => this.pump(t.kind));
    return true;
  }

  /** Removes a task from the list and the database, canceling it first if it is not done. */
  async remove(id: string): Promise<void> {
    const t = this.tasks.get(id);
    if (!t) return;
    if (!DONE_STATES.has(t.state)) this.cancel(id);
    this.tasks.delete(id);
    this.lastWrite.delete(id);
    await this.writes.get(id);
    if (this.kindConfig(t.kind).task_persistant) await this.repo.delete(id);
  }

  private pump(kind: TaskKind): void {
    if (this.stopping) return;
    const workers = this.workers(kind);
    for (const t of this.tasks.values()) {
      if ((this.running.get(kind) ?? 0) >= workers) return;
      if (t.kind === kind && t.state === STATE.PENDING && t.run) void this.execute(t);
    }
  }

  private async execute(t: Task): Promise<void> {
    this.running.set(t.kind, (this.running.get(t.kind) ?? 0) + 1);
    t.state = STATE.RUNNING;
    t.startTime ||= Date.now();
    const maxRetry = this.kindConfig(t.kind).max_retry;
    await this.persist(t, true);
    const ctx: TaskContext = {
      signal: t.controller.signal,
      lastAttempt: t.retryCount >= maxRetry,
      setStatus: (status) => {
        t.status = status;
        void this.persist(t);
      },
      setProgress: (p) => {
        t.progress = Math.max(0, Math.min(100, p));
        void this.persist(t);
      },
      setTotalBytes: (n) => {
        t.totalBytes = n;
      },
      savePayload: async (payload) => {
        t.payload = payload;
        await this.persist(t, true);
      },
      rules: () => this.rulesOf(t),
    };
    try {
      // Decided when the task starts (a queued task of a creator disabled meanwhile never runs), then at each name.
      await ctx.rules();
      await t.run!(ctx);
      t.progress = 100;
      this.finish(t, STATE.SUCCEEDED, '');
    } catch (err) {
      const message = t.controller.signal.aborted ? 'context canceled' : taskErrorText(err, this.opts.hostRoots);
      if (this.stopping && t.state !== STATE.CANCELING) {
        // Interrupted by shutdown, not by a user: left pending so the next start resumes it.
        t.state = STATE.PENDING;
        await this.persist(t, true);
        t.settle();
      } else if (t.controller.signal.aborted) {
        this.finish(t, STATE.CANCELED, message);
      } else if (t.retryCount < maxRetry && !(err instanceof FinalTaskError)) {
        t.state = STATE.ERRORED;
        t.error = message;
        t.retryCount++;
        this.log.warn({ task: t.id, err: message, retry: t.retryCount }, 'task failed, retrying');
        this.scheduleRetry(t);
      } else {
        t.state = STATE.FAILING;
        t.error = message;
        this.finish(t, STATE.FAILED, message);
      }
    } finally {
      this.running.set(t.kind, (this.running.get(t.kind) ?? 1) - 1);
      this.pump(t.kind);
    }
  }

  /** The creator's rules now (the server's own tasks, with no creator, are refused nothing). */
  private async rulesOf(t: Task): Promise<CreatorRules> {
    if (!this.opts.access || t.creatorId === 0) return SYSTEM_RULES;
    try {
      return await this.opts.access.rules({ id: t.id, kind: t.kind, creator: { id: t.creatorId, username: t.creator, role: t.creatorRole, passwords: t.creatorPasswords } });
    } catch (err) {
      if (err instanceof AppError && isKind(err, 'Unauthorized', 'Forbidden')) throw new CreatorStopped(err);
      throw err;
    }
  }

  /** errored → waiting retry → (after 1×, 2×, 4×… the base wait) pending again. */
  private scheduleRetry(t: Task): void {
    t.state = STATE.WAITING_RETRY;
    void this.persist(t, true);
    const delay = Math.min((this.opts.retryBaseMs ?? 1000) * 2 ** (t.retryCount - 1), MAX_RETRY_DELAY_MS);
    t.retryTimer = setTimeout(() => {
      t.retryTimer = undefined;
      if (t.state !== STATE.WAITING_RETRY || this.tasks.get(t.id) !== t) return;
      t.state = STATE.PENDING;
      this.pump(t.kind);
    }, delay);
    t.retryTimer.unref();
  }

  private finish(t: Task, state: number, error: string): void {
    t.state = state;
    t.error = error;
    t.endTime = Date.now();
    void this.persist(t, true);
    t.settle();
  }

  /** Writes the task (persistent kinds only); progress-only changes at most once a second. */
  private async persist(t: Task, force = false): Promise<void> {
    if (!this.kindConfig(t.kind).task_persistant) return;
    const now = Date.now();
    if (!force && now - (this.lastWrite.get(t.id) ?? 0) < 1000) return;
    this.lastWrite.set(t.id, now);
    const row: TaskRow = {
      id: t.id,
      kind: t.kind,
      name: t.name,
      creator_id: t.creatorId,
      creator: t.creator,
      creator_role: t.creatorRole,
      creator_passwords: t.creatorPasswords.length > 0 ? JSON.stringify(t.creatorPasswords) : null,
      state: t.state,
      status: t.status,
      progress: t.progress,
      error: t.error,
      total_bytes: t.totalBytes,
      retry_count: t.retryCount,
      payload: JSON.stringify(t.payload ?? null),
      start_time: t.startTime,
      end_time: t.endTime,
      created_at: t.createdAt,
      updated_at: now,
    };
    const previous = this.writes.get(t.id) ?? Promise.resolve();
    const write = previous.then(async () => {
      // A task removed meanwhile must not be written back.
      if (this.tasks.get(t.id) !== t) return;
      await this.repo.upsert(row).catch((err) => this.log.error({ err, task: t.id }, 'persisting task failed'));
    });
    this.writes.set(t.id, write);
    await write;
    if (this.writes.get(t.id) === write) this.writes.delete(t.id);
  }

  /** Paths under temp_dir that unfinished tasks still need. */
  ownedTemp(): Set<string> {
    const owned = new Set<string>();
    for (const t of this.tasks.values()) {
      const temp = (t.payload as TempOwner | null)?.temp;
      if (typeof temp === 'string' && !DONE_STATES.has(t.state)) owned.add(temp);
    }
    return owned;
  }

  /**
   * Deletes what lies in the given folders of temp_dir and no unfinished task owns: left by a
   * crash, or kept (delete_never) until this start, as the original wipes its temp dir.
   */
  async sweepTemp(folders: string[]): Promise<void> {
    const owned = this.ownedTemp();
    // Other processes sharing the database may run tasks whose files are here.
    if (this.queue) {
      for (const row of await this.repo.all()) {
        const temp = DONE_STATES.has(row.state) ? undefined : (this.fromRow(row).payload as TempOwner | null)?.temp;
        if (typeof temp === 'string') owned.add(temp);
      }
    }
    for (const folder of folders) {
      let entries: string[];
      try {
        entries = await readdir(folder);
      } catch {
        continue;
      }
      for (const e of entries) {
        const p = path.join(folder, e);
        if (!owned.has(p)) await rm(p, { recursive: true, force: true }).catch((err) => this.log.warn({ err, path: p }, 'temp sweep failed'));
      }
    }
  }

  /** Interrupts running tasks (they stay pending, to resume on the next start) and waits. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.tasks.values()) {
      clearTimeout(t.retryTimer);
      if (this.queue && t.state === STATE.WAITING_RETRY) {
        // Handed back to the queue: the process that takes it next tries again.
        t.state = STATE.PENDING;
        void this.persist(t, true);
        t.settle();
      }
    }
    const live = [...this.tasks.values()].filter((t) => t.state === STATE.RUNNING || t.state === STATE.CANCELING);
    for (const t of live) t.controller.abort(new Error('server is stopping'));
    await Promise.allSettled(live.map((t) => t.done));
    await Promise.allSettled([...this.writes.values()]);
  }
}

/** The creator's folder passwords as a row keeps them (a JSON array, or null for none). */
function parsePasswords(text: string | null | undefined): string[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
