import type { AuditEventsRepo } from '../db/audit-events.js';
import type { Logger } from '../logger.js';
import type { OpEvent, OpEvents } from './events.js';

export const AUDIT_ENABLED_SETTING = 'audit_log_enabled';
export const AUDIT_RETENTION_SETTING = 'audit_log_retention_days';

/** What the audit log reads of the settings (settings/service.ts). */
export interface AuditSettings {
  getBool(key: string): boolean;
  getNumber(key: string): number;
}

export interface AuditLogOptions {
  /** Milliseconds between writes (default 500). */
  flushEvery?: number;
  /** A batch this large is written at once (default 500). */
  batch?: number;
  /** Events held while the database is slow; more are dropped and counted (default 50 000). */
  maxQueued?: number;
  /** Milliseconds between retention sweeps (default one hour). */
  sweepEvery?: number;
}

const DAY = 86_400_000;

/**
 * The audit log: takes every operation event (audit/events.ts), holds them in memory and writes
 * them in batches off the request path — every `flushEvery` ms or `batch` events, in one
 * multi-row insert. `close()` writes what is held (core.close, before the database closes), so
 * a clean shutdown loses nothing and a kill -9 at most the last interval. The queue is bounded:
 * when the database falls behind, new events are dropped, counted and logged. A sweep (at start
 * and hourly) deletes events older than `audit_log_retention_days`.
 */
export class AuditLog {
  private queue: OpEvent[] = [];
  private writing?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private dropped = 0;
  private closed = false;
  private readonly flushEvery: number;
  private readonly batch: number;
  private readonly maxQueued: number;
  private readonly sweepEvery: number;

  constructor(
    events: OpEvents,
    private readonly repo: AuditEventsRepo,
    private readonly settings: AuditSettings,
    private readonly log: Logger,
    opts: AuditLogOptions = {},
  ) {
    this.flushEvery = opts.flushEvery ?? 500;
    this.batch = opts.batch ?? 500;
    this.maxQueued = opts.maxQueued ?? 50_000;
    this.sweepEvery = opts.sweepEvery ?? 3_600_000;
    events.on((e) => this.take(e));
  }

  /** Events dropped because the queue was full (since the start). */
  get droppedCount(): number {
    return this.dropped;
  }

  /** Starts the sweeps (the first one now). Events are taken from construction on. */
  start(): void {
    if (this.sweeper || this.closed) return;
    void this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), this.sweepEvery);
    this.sweeper.unref();
  }

  private take(e: OpEvent): void {
    if (this.closed || !this.settings.getBool(AUDIT_ENABLED_SETTING)) return;
    if (this.queue.length >= this.maxQueued) {
      if (this.dropped++ % 1000 === 0) this.log.warn({ dropped: this.dropped }, 'audit log: the database is behind, events dropped');
      return;
    }
    this.queue.push(e);
    if (this.queue.length >= this.batch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushEvery);
      this.timer.unref();
    }
  }

  /** Writes every event held now (and waits for a write in progress). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.writing = this.repo.insert(batch).catch((err: unknown) => {
      this.dropped += batch.length;
      this.log.error({ err, dropped: batch.length }, 'audit log: writing events failed');
    });
    try {
      await this.writing;
    } finally {
      this.writing = undefined;
    }
    if (this.queue.length > 0 && !this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushEvery);
      this.timer.unref();
    }
  }

  /** Deletes the events past the retention (0 days keeps them all); returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    const days = this.settings.getNumber(AUDIT_RETENTION_SETTING);
    if (!(days > 0)) return 0;
    try {
      return await this.repo.deleteBefore(now - days * DAY);
    } catch (err) {
      this.log.warn({ err }, 'audit log: the retention sweep failed');
      return 0;
    }
  }

  /** Stops taking events and writes what is held. */
  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.flush();
    this.closed = true;
    await this.flush();
  }
}
