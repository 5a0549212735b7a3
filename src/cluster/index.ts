import type { AuthCache } from '../auth/auth-cache.js';
import type { Config } from '../config/defaults.js';
import type { Fs } from '../fs/fs.js';
import type { Metas } from '../fs/metas.js';
import type { Storages } from '../fs/storages.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import type { ShareStreams } from '../shares/streams.js';
import type { TaskManager } from '../tasks/manager.js';
import { type ClusterBus, type ClusterEvent, connectRedis, RedisBus } from './bus.js';
import type { StateKind } from '../db/state-versions.js';
import { BullTaskQueue } from './task-queue.js';
import type { StateVersionsRepo } from '../db/state-versions.js';
import { type HookCopies, Staleness } from './staleness.js';
import type { FailureStore, LoginLimiter } from '../auth/login-limiter.js';
import { MirroredFailureStore, RedisFailureStore } from './login-failures.js';
import { RedisVisitMemo, type VisitMemo } from './visit-memo.js';

/** The in-memory state of one process that other processes may change through the database. */
export interface ClusterParts {
  fs: Fs;
  storages: Storages;
  settings: Settings;
  metas: Metas;
  tasks: TaskManager;
  auth: AuthCache;
  hooks: HookCopies;
  shareStreams: ShareStreams;
  /** The per-kind counters in the database that bound staleness whatever happens to Redis. */
  versions: StateVersionsRepo;
  /** The login throttle: its failure counts go to Redis so that every process counts them. */
  limiter: LoginLimiter;
  /** The same counts in the database: what the throttle reads while Redis is unreachable. */
  dbFailures: FailureStore;
  log: Logger;
}

/**
 * Several processes serving one tree: with `redis.url` set, what one process changes in memory
 * (listing caches, mounted storages, settings, path rules) is announced on Redis pub/sub and
 * the others drop or reload theirs; tasks go through BullMQ queues. Users and sessions are
 * cached in each process (AuthCache); a change to either is announced before it is answered,
 * so a logout or a password change holds at once on every process. Each change of rules,
 * settings, storages or accounts also bumps its counter in the database (Staleness), read by
 * every process once a second: what pub/sub missed holds within ~1 s. Without `redis.url`
 * nothing is started and a single process works as before.
 */
export class Cluster {
  private bus: ClusterBus | undefined;
  private queue: BullTaskQueue | undefined;
  /** Reads the state versions once a second in cluster mode; undefined on a single process. */
  private staleness: Staleness | undefined;
  private failures: RedisFailureStore | undefined;
  private visitMemo: VisitMemo | undefined;

  constructor(
    private readonly config: Config['redis'],
    private readonly parts: ClusterParts,
  ) {}

  /**
   * Awaited by a front before it decides a request: undefined (nothing to wait for) on a single
   * process and while the last check of the state versions is under 1.5 s old; otherwise the
   * check (a paused process catches up before it answers).
   */
  fresh(): Promise<void> | undefined {
    return this.staleness?.fresh();
  }

  /** Share visitors remembered across processes (cluster mode); undefined on one process. */
  get visits(): VisitMemo | undefined {
    return this.visitMemo;
  }

  /** Checks of the state versions and reloads they caused (docs/cluster.md's cost figures). */
  get stalenessStats(): { checks: number; reloads: number } | undefined {
    return this.staleness && { checks: this.staleness.checks, reloads: this.staleness.reloads };
  }

  get enabled(): boolean {
    return this.config.url !== '';
  }

  /** Connects to Redis and wires the announcements; a no-op in single-process mode. */
  async start(): Promise<void> {
    if (!this.enabled || this.bus) return;
    const { fs, storages, settings, metas, tasks, shareStreams, log } = this.parts;
    const bus = await RedisBus.open(this.config.url, this.config.key_prefix, log);
    this.bus = bus;
    const staleness = new Staleness(this.parts.versions, this.parts);
    this.staleness = staleness;
    // Each change: its counter first (so a peer that misses the message still sees it), then the message.
    const announce = (kind: StateKind, event: ClusterEvent) => staleness.bump(kind).then(() => bus.publish(event));
    fs.onInvalidate = (storage, path, recursive) => bus.publish({ t: 'listing', storage, path, recursive });
    storages.onAdminChange = (id) => void announce('storages', { t: 'storage', id });
    settings.onChange((_keys, fromPeer) => {
      if (!fromPeer) void announce('settings', { t: 'settings' });
    });
    metas.onChange = () => void announce('metas', { t: 'metas' });
    this.parts.auth.onChange = () => announce('auth', { t: 'auth' });
    this.parts.hooks.onChange = () => void announce('hooks', { t: 'hooks' });
    shareStreams.onEnd = (id) => bus.publish({ t: 'share-end', id });
    // Invalidations are not queued for a disconnected subscriber: while it is down, listings are
    // read from the storages; when it is back, what was cached before is dropped.
    bus.onDisconnect(() => fs.trustListingCache(false));
    bus.onReconnect(() => {
      fs.trustListingCache(true);
      void staleness.check();
    });
    // Counters (login failures, share visits): no offline queue, so a lost link fails at once and callers fall back.
    const counters = await connectRedis(this.config.url, log, { enableOfflineQueue: false });
    const failures = new RedisFailureStore(counters, this.config.key_prefix);
    this.failures = failures;
    let warned = 0;
    const unreachable = (what: string) => (err: unknown) => {
      if (Date.now() - warned < 10_000) return;
      warned = Date.now();
      log.warn({ err: (err as Error).message }, `login throttle: ${what}`);
    };
    this.visitMemo = new RedisVisitMemo(counters, this.config.key_prefix);
    this.parts.limiter.onStoreError = unreachable('neither Redis nor the database answers, counting on this process only');
    this.parts.limiter.useStore(new MirroredFailureStore(failures, this.parts.dbFailures, unreachable('Redis unreachable, counting in the database')));
    await staleness.start();
    bus.subscribe((e) => this.apply(e));
    this.queue = new BullTaskQueue(this.config.url, this.config.key_prefix, bus, log);
    tasks.useQueue(this.queue);
    log.info({ node: bus.node, prefix: this.config.key_prefix }, 'cluster mode: sharing caches and tasks through Redis');
  }

  private apply(e: ClusterEvent): void {
    const { fs, storages, settings, metas, log } = this.parts;
    const failed = (what: string) => (err: unknown) => log.error({ err }, `reloading ${what} after a change in another process failed`);
    switch (e.t) {
      case 'listing':
        fs.invalidateStorage(e.storage, e.path, e.recursive);
        break;
      case 'storage':
        storages.reloadOne(e.id).catch(failed('a storage'));
        break;
      case 'settings':
        settings.reloadFromPeer().catch(failed('settings'));
        break;
      case 'metas':
        metas.reload().catch(failed('path rules'));
        break;
      case 'auth':
        this.parts.auth.drop();
        break;
      case 'hooks':
        this.parts.hooks.reload().catch(failed('the event hooks'));
        break;
      case 'share-end':
        this.parts.shareStreams.end(e.id, true);
        break;
      case 'task':
        break; // the task queue listens for these itself
    }
  }

  async close(): Promise<void> {
    this.staleness?.stop();
    this.staleness = undefined;
    await this.queue?.close();
    await this.failures?.close();
    this.failures = undefined;
    this.visitMemo = undefined;
    await this.bus?.close();
    this.queue = undefined;
    this.bus = undefined;
  }
}
