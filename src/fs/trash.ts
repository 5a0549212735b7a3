import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { TrashEntry, TrashRepo } from '../db/trash.js';
import type { Driver } from '../drivers/types.js';
import { BadRequest, Exists, isKind, NotFound, Unsupported } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Mounted, Storages } from './storages.js';
import { STATUS_WORK } from './storages.js';

/** The folder at a storage's root that holds its trash: `<id>/<name>` per deleted object. No front lists or reaches it. */
export const TRASH_DIR = '.atrium-trash';
const TRASH_ROOT = `/${TRASH_DIR}`;

/** Whether a path of a storage (its actual path) is its trash folder or inside it. */
export const inTrash = (actualPath: string): boolean => actualPath === TRASH_ROOT || actualPath.startsWith(`${TRASH_ROOT}/`);

/** Who deleted an object, and through which front. */
export interface Deleter {
  userId: number;
  username: string;
  front: string;
}

/** What a restore does with a name already at its destination (recursive_move's policies). */
export type RestorePolicy = 'cancel' | 'overwrite' | 'skip';

const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 500;
const DAY = 86_400_000;

const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/**
 * Each storage's trash: a delete moves the object into `/.atrium-trash/<id>/` on its own storage
 * (a rename where the driver has one: no bytes copied) and records who deleted it, from where
 * and when; a restore moves it back, a purge or the retention sweep deletes it for good. On by
 * default for Local storages without a recycle bin (`trash` ''), opt-in ('on') for the others,
 * off with 'off'. The fs layer hides the folder from every listing and refuses every path into
 * it, so it is reached only through this service.
 */
export class TrashBin {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly repo: TrashRepo,
    private readonly storages: Storages,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether deletes on this storage go to its trash. */
  enabled(m: Mounted): boolean {
    if (m.row.trash === 'on') return true;
    if (m.row.trash === 'off') return false;
    if (m.row.driver !== 'Local') return false;
    let bin = '';
    try {
      bin = String((JSON.parse(m.row.addition) as { recycle_bin_path?: unknown }).recycle_bin_path ?? '').trim();
    } catch {
      // an unreadable addition: as a Local storage without a recycle bin
    }
    return bin === '' || bin === 'delete permanently';
  }

  /** Moves `actualPath` of storage `m` into its trash and records it; the object's name and virtual path are kept. */
  async put(m: Mounted, driver: Driver, actualPath: string, virtualPath: string, by: Deleter): Promise<void> {
    if (!driver.move || !driver.makeDir) throw new Unsupported(`storage ${m.row.mount_path} can not move into its trash`);
    const obj = await driver.get(actualPath);
    const id = `${this.now().toString(36)}-${randomBytes(6).toString('hex')}`;
    await this.ensureDir(driver, '/', TRASH_DIR);
    await driver.makeDir(TRASH_ROOT, id);
    await driver.move(actualPath, `${TRASH_ROOT}/${id}`);
    const name = path.posix.basename(actualPath);
    await this.repo.insert({ id, storageId: m.row.id, path: virtualPath, name, size: obj.isDir ? 0 : obj.size, isDir: obj.isDir, deletedAt: this.now(), userId: by.userId, username: by.username, front: by.front });
  }

  private async ensureDir(driver: Driver, parent: string, name: string): Promise<void> {
    try {
      await driver.get(join(parent, name));
    } catch (err) {
      if (!isKind(err, 'NotFound')) throw err;
      await driver.makeDir!(parent, name);
    }
  }

  /** A storage's entries, newest first: every one for an admin (`userId` undefined), else the user's own. */
  list(m: Mounted, userId: number | undefined, page: number, perPage: number): Promise<{ entries: TrashEntry[]; total: number }> {
    return this.repo.list(m.row.id, userId, page, perPage);
  }

  entries(ids: string[]): Promise<TrashEntry[]> {
    return this.repo.byIds(ids);
  }

  private working(entry: TrashEntry): { m: Mounted; driver: Driver } {
    const m = this.storages.byId(entry.storageId);
    if (!m || m.row.status !== STATUS_WORK || !m.driver) throw new NotFound(`the storage of ${entry.name} is not mounted`);
    return { m, driver: m.driver };
  }

  /**
   * Moves an entry back into `dstActualDir` of its own storage (its original folder, or another
   * one), under its name; a name already there follows `policy` — `cancel` refuses (`Exists`),
   * `skip` leaves the entry in the trash (false), `overwrite` first moves what is there into the
   * trash in its turn. True when restored.
   */
  async restore(entry: TrashEntry, dstActualDir: string, policy: RestorePolicy, by: Deleter, dstVirtualDir: string): Promise<boolean> {
    const { m, driver } = this.working(entry);
    if (!driver.move) throw new Unsupported(`storage ${m.row.mount_path} can not move out of its trash`);
    if (inTrash(dstActualDir)) throw new BadRequest('a restore can not go into the trash');
    const target = join(dstActualDir, entry.name);
    const there = await driver.get(target).then(
      () => true,
      (err: unknown) => {
        if (isKind(err, 'NotFound')) return false;
        throw err;
      },
    );
    if (there) {
      if (policy === 'skip') return false;
      if (policy === 'cancel') throw new Exists(`${entry.name} exists in the destination folder`);
      await this.put(m, driver, target, join(dstVirtualDir, entry.name), by);
    }
    await driver.move(`${TRASH_ROOT}/${entry.id}/${entry.name}`, dstActualDir);
    await driver.remove?.(`${TRASH_ROOT}/${entry.id}`).catch((err: unknown) => this.log.warn({ err, entry: entry.id }, 'trash: an emptied entry folder was left'));
    await this.repo.delete(entry.id);
    return true;
  }

  /** Deletes an entry for good. */
  async purge(entry: TrashEntry): Promise<void> {
    const m = this.storages.byId(entry.storageId);
    if (m?.driver?.remove && m.row.status === STATUS_WORK) {
      try {
        await m.driver.remove(`${TRASH_ROOT}/${entry.id}`);
      } catch (err) {
        if (!isKind(err, 'NotFound')) throw err;
      }
    }
    await this.repo.delete(entry.id);
  }

  /** Purges, on every mounted storage, the entries past its `trash_days` (0 keeps them); how many. */
  async sweep(): Promise<number> {
    let purged = 0;
    for (const m of this.storages.all()) {
      const days = Number(m.row.trash_days);
      if (!(days > 0)) continue;
      for (;;) {
        const old = await this.repo.olderThan(m.row.id, this.now() - days * DAY, SWEEP_BATCH);
        for (const e of old) {
          try {
            await this.purge(e);
            purged++;
          } catch (err) {
            this.log.warn({ err, entry: e.id, storage: m.row.mount_path }, 'trash: purging an expired entry failed');
            return purged;
          }
        }
        if (old.length < SWEEP_BATCH) break;
      }
    }
    return purged;
  }

  /** The retention sweep, now and hourly (the server). */
  start(): void {
    if (this.sweeper) return;
    const run = () => void this.sweep().catch((err: unknown) => this.log.warn({ err }, 'trash: the retention sweep failed'));
    void this.storages.ready().then(run);
    this.sweeper = setInterval(run, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
