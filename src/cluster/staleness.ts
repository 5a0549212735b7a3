import type { AuthCache } from '../auth/auth-cache.js';
import type { StateKind, StateVersions, StateVersionsRepo } from '../db/state-versions.js';
import { STATE_KINDS } from '../db/state-versions.js';
import type { Fs } from '../fs/fs.js';
import type { Metas } from '../fs/metas.js';
import type { Storages } from '../fs/storages.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';

/** How often the counters are read (one small query per process per period). */
export const CHECK_EVERY_MS = 1000;
/** A request waits for a check only when the last one is older than this (a paused or blocked process). */
export const STALE_AFTER_MS = 1500;
/**
 * How long the requests waiting for a check wait at most. A check that has not finished by then
 * (the counters' query, or a reload such as a storage's mount, that does not answer) is given up
 * on, logged: the requests go on with the state they have, as when the counters can not be read,
 * and the next check starts afresh. Without it, one check that never settled held every later
 * request of the process, /ping included. Well above what a slow check takes (a reload waiting on
 * a Redis command retried through an outage: ioredis gives up after ~20 reconnection attempts),
 * which the requests must wait for to decide on the new state (5 s answered a paused process's
 * first request with the old state in a CI run).
 */
export const CHECK_TIMEOUT_MS = 30_000;

/** What a moved counter reloads: the same reloads a bus message triggers (cluster/index.ts). */
export interface Reloadable {
  fs: Fs;
  storages: Storages;
  settings: Settings;
  metas: Metas;
  auth: AuthCache;
  hooks: HookCopies;
  log: Logger;
}

/** What the cluster needs of the event hooks: each process's copy, reloaded when another changed them. */
export interface HookCopies {
  reload(): Promise<void>;
  onChange: () => void;
}

/**
 * The bound on staleness that does not depend on Redis: every change of a kind of cached state
 * bumps its counter in the database (`bump`, right after the change's write), and every process
 * reads all counters once a second (one query, shared by concurrent callers) and reloads the
 * kinds whose counter moved. Pub/sub stays the fast path; this catches what it missed (an
 * outage, a restart of Redis, a lost message, a paused process), within CHECK_EVERY_MS plus
 * the reload. `fresh()` lets a request wait for a check when the timer could not run.
 */
export class Staleness {
  private seen: Partial<StateVersions> = {};
  /** When the last completed check started (what it read is at least that recent). */
  private lastCheck = 0;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** What the running check waits for (named in the log when it is given up on). */
  private waitingFor = new Set<string>();
  /** Counter reads done (for the metrics and the cost figures in docs/cluster.md). */
  checks = 0;
  reloads = 0;

  constructor(
    private readonly repo: StateVersionsRepo,
    private readonly parts: Reloadable,
    private readonly now: () => number = Date.now,
    private readonly timeoutMs = CHECK_TIMEOUT_MS,
  ) {}

  /** Reads the counters now (reloading everything whose counter is unknown), then every second. */
  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** After this process changed a kind: its counter moves, so the other processes reload it. */
  async bump(kind: StateKind): Promise<void> {
    try {
      await this.repo.bump(kind);
    } catch (err) {
      this.parts.log.warn({ err, kind }, 'bumping a state version failed: other processes see the change at the next bump');
    }
  }

  /**
   * Undefined while the last check started under STALE_AFTER_MS ago; otherwise waits for a check
   * that started after this call (one in flight may have read the counters before a pause).
   */
  fresh(): Promise<void> | undefined {
    const asked = this.now();
    if (asked - this.lastCheck < STALE_AFTER_MS) return undefined;
    return this.check().then(() => (this.lastCheck >= asked ? undefined : this.check()));
  }

  /** One read of the counters at a time; callers while it runs share it. */
  check(): Promise<void> {
    if (this.running) return this.running;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.parts.log.warn({ ms: this.timeoutMs, waiting_for: [...this.waitingFor] }, 'a check of the state versions has not finished: requests go on without it');
        resolve();
      }, this.timeoutMs);
      timer.unref();
    });
    const mine: Promise<void> = Promise.race([this.compare(), late]).finally(() => {
      clearTimeout(timer);
      if (this.running === mine) this.running = undefined;
    });
    this.running = mine;
    return mine;
  }

  private async compare(): Promise<void> {
    const started = this.now();
    let now: StateVersions;
    this.waitingFor = new Set(['the counters']);
    try {
      now = await this.repo.all();
    } catch (err) {
      this.parts.log.warn({ err }, 'reading the state versions failed');
      return;
    }
    this.checks++;
    const moved = STATE_KINDS.filter((k) => this.seen[k] !== now[k]);
    const waiting = new Set(moved.map((k) => `the ${k} reload`));
    this.waitingFor = waiting;
    await Promise.all(moved.map((k) => this.reload(k).then(() => {
      this.seen[k] = now[k];
    }, (err) => this.parts.log.error({ err, kind: k }, 'reloading state after a version change failed')).finally(() => waiting.delete(`the ${k} reload`))));
    // (a check given up on that finishes later does not move it back)
    this.lastCheck = Math.max(this.lastCheck, started);
  }

  private async reload(kind: StateKind): Promise<void> {
    const { storages, settings, metas, auth, hooks } = this.parts;
    this.reloads++;
    switch (kind) {
      case 'metas':
        await metas.reload();
        break;
      case 'settings':
        await settings.reloadFromPeer();
        break;
      case 'storages':
        await storages.reconcile();
        break;
      case 'auth':
        auth.drop();
        break;
      case 'hooks':
        await hooks.reload();
        break;
    }
  }
}
