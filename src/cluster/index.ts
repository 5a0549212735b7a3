import type { AuthCache } from '../auth/auth-cache.js';
import type { Config } from '../config/defaults.js';
import type { Fs } from '../fs/fs.js';
import type { Metas } from '../fs/metas.js';
import type { Storages } from '../fs/storages.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import type { ShareStreams } from '../shares/streams.js';
import type { TaskManager } from '../tasks/manager.js';
import { type ClusterBus, type ClusterEvent, RedisBus } from './bus.js';
import { BullTaskQueue } from './task-queue.js';

/** The in-memory state of one process that other processes may change through the database. */
export interface ClusterParts {
  fs: Fs;
  storages: Storages;
  settings: Settings;
  metas: Metas;
  tasks: TaskManager;
  auth: AuthCache;
  shareStreams: ShareStreams;
  log: Logger;
}

/**
 * Several processes serving one tree: with `redis.url` set, what one process changes in memory
 * (listing caches, mounted storages, settings, path rules) is announced on Redis pub/sub and
 * the others drop or reload theirs; tasks go through BullMQ queues. Users and sessions are
 * cached in each process (AuthCache); a change to either is announced before it is answered,
 * so a logout or a password change holds at once on every process. Without `redis.url`
 * nothing is started and a single process works as before.
 */
export class Cluster {
  private bus: ClusterBus | undefined;
  private queue: BullTaskQueue | undefined;

  constructor(
    private readonly config: Config['redis'],
    private readonly parts: ClusterParts,
  ) {}

  get enabled(): boolean {
    return this.config.url !== '';
  }

  /** Connects to Redis and wires the announcements; a no-op in single-process mode. */
  async start(): Promise<void> {
    if (!this.enabled || this.bus) return;
    const { fs, storages, settings, metas, tasks, shareStreams, log } = this.parts;
    const bus = await RedisBus.open(this.config.url, this.config.key_prefix, log);
    this.bus = bus;
    fs.onInvalidate = (storage, path, recursive) => bus.publish({ t: 'listing', storage, path, recursive });
    storages.onAdminChange = (id) => bus.publish({ t: 'storage', id });
    settings.onChange((_keys, fromPeer) => {
      if (!fromPeer) bus.publish({ t: 'settings' });
    });
    metas.onChange = () => void bus.publish({ t: 'metas' });
    this.parts.auth.onChange = () => bus.publish({ t: 'auth' });
    shareStreams.onEnd = (id) => bus.publish({ t: 'share-end', id });
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
      case 'share-end':
        this.parts.shareStreams.end(e.id, true);
        break;
      case 'task':
        break; // the task queue listens for these itself
    }
  }

  async close(): Promise<void> {
    await this.queue?.close();
    await this.bus?.close();
    this.queue = undefined;
    this.bus = undefined;
  }
}
