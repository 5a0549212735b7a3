import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import type { TaskKind } from '../tasks/kinds.js';
import type { TaskQueue } from '../tasks/manager.js';
import { type ClusterBus, connectRedis } from './bus.js';

/**
 * A process that stops renewing its job locks (killed, frozen) loses its jobs after this long;
 * another process's stalled check then moves them back to the queue.
 */
const LOCK_MS = 15_000;
const STALLED_CHECK_MS = 5_000;
/** A task survives this many dead processes before BullMQ gives its job up. */
const MAX_STALLED = 10;

/**
 * BullMQ queues, one per task kind (`<key_prefix>bull:tasks-<kind>`). A job carries only the
 * task id: the task itself (payload, state, progress) lives in the shared database, so any
 * process can rebuild and run it, and a killed process's job is recovered by BullMQ's stalled
 * check and run by another. Retries and cancellation stay the task manager's; cancel and
 * remove reach the process running a task through the cluster bus.
 */
export class BullTaskQueue implements TaskQueue {
  private readonly queues = new Map<TaskKind, Queue>();
  private readonly workers: Worker[] = [];
  private readonly connections: Redis[] = [];

  constructor(
    private readonly url: string,
    private readonly prefix: string,
    private readonly bus: ClusterBus,
    private readonly log: Logger,
  ) {}

  /**
   * Workers' connections retry a command forever (BullMQ's blocking commands need it); the
   * queues' fail after ioredis's default retries, so a task queued while Redis is away runs in
   * the process that queued it instead of waiting.
   */
  private async connection(forWorker: boolean): Promise<Redis> {
    const c = await connectRedis(this.url, this.log, forWorker ? { maxRetriesPerRequest: null } : {});
    this.connections.push(c);
    return c;
  }

  private async queue(kind: TaskKind): Promise<Queue> {
    let q = this.queues.get(kind);
    if (!q) {
      const { Queue } = await import('bullmq');
      q = new Queue(`tasks-${kind}`, { connection: await this.connection(false), prefix: `${this.prefix}bull` });
      this.queues.set(kind, q);
    }
    return q;
  }

  async enqueue(kind: TaskKind, id: string): Promise<void> {
    const q = await this.queue(kind);
    await q.add(kind, { id }, { removeOnComplete: true, removeOnFail: 1000, attempts: 1 });
  }

  async consume(kinds: Array<{ kind: TaskKind; workers: number }>, run: (id: string) => Promise<void>): Promise<void> {
    const { Worker } = await import('bullmq');
    for (const { kind, workers } of kinds) {
      const w = new Worker(`tasks-${kind}`, async (job) => run((job.data as { id: string }).id), {
        connection: await this.connection(true),
        prefix: `${this.prefix}bull`,
        concurrency: Math.max(1, workers),
        lockDuration: LOCK_MS,
        stalledInterval: STALLED_CHECK_MS,
        maxStalledCount: MAX_STALLED,
      });
      w.on('error', (err) => this.log.warn({ err, kind }, 'task queue worker error'));
      w.on('failed', (job, err) => this.log.warn({ err, kind, task: (job?.data as { id?: string } | undefined)?.id }, 'task queue job failed'));
      this.workers.push(w);
    }
  }

  signal(op: 'cancel' | 'remove', id: string): void {
    this.bus.publish({ t: 'task', op, id });
  }

  onSignal(handler: (op: 'cancel' | 'remove', id: string) => void): void {
    this.bus.subscribe((e) => {
      if (e.t === 'task') handler(e.op, e.id);
    });
  }

  /** Stops taking jobs (the manager has already settled the running ones), then disconnects. */
  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.close()));
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    await Promise.allSettled(this.connections.map((c) => c.quit()));
  }
}
