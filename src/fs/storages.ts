import path from 'node:path';
import type { StoragesRepo, StorageRow } from '../db/storages.js';
import { driverFactory } from '../drivers/registry.js';
import type { Driver, DriverFactory, VirtualFs } from '../drivers/types.js';
import { BadRequest, Exists, NotFound, Unavailable } from '../errors.js';
import type { Logger } from '../logger.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import { cleanPath, isSubPath } from '../util/paths.js';
import { watchDriverErrors } from './driver-errors.js';

export const STATUS_WORK = 'work';
export const STATUS_DISABLED = 'disabled';

/** A storage as this process holds it: its row, its driver (when init succeeded) and status. */
export interface Mounted {
  row: StorageRow;
  factory: DriverFactory;
  driver?: Driver;
  /** Mount path without any `.balance…` suffix. */
  actualMount: string;
}

/** The fields a client may set on create/update (status and modified are the server's). */
export type StorageInput = Omit<StorageRow, 'id' | 'status' | 'modified'> & { id?: number };

/** `/movies.balance1` serves the same path as `/movies` (load-balanced replicas). */
export function actualMountPath(mountPath: string): string {
  const i = mountPath.lastIndexOf('.balance');
  return i === -1 ? mountPath : cleanPath(mountPath.slice(0, i));
}

const depth = (p: string) => (p === '/' ? 0 : p.split('/').length - 1);

/** What the mounted storages need, given once by the composition root (core.ts). */
export interface StoragesDeps {
  repo: StoragesRepo;
  log: Logger;
  tempDir: string;
  fileType: (name: string) => number;
  links: LinkFetcher;
  /** The virtual tree for overlay drivers (Alias, Crypt): built on the fs layer, which is built on these storages, so asked for when a storage is mounted. */
  vfs: () => VirtualFs;
  /** Link signing and the site URL, for drivers that write links into content (Strm). */
  sign: (virtualPath: string) => string;
  siteUrl: string;
  /** Called with a storage id whenever a storage is (re)mounted or removed (the listing cache drops it). */
  onChange: (id: number) => void;
  /** Called when a driver operation fails for a reason of the storage's (for the metrics). */
  onDriverError: (driver: string, op: string, err: unknown) => void;
}

/** A storage's driver being built and initialised, before it takes the place of what serves its id. */
interface Mounting {
  row: StorageRow;
  actualMount: string;
  /** Never rejects: the new mount, or undefined when a later change of the id made it moot. */
  done: Promise<Mounted | undefined>;
}

const SETTLED: Promise<void> = Promise.resolve();

export class Storages {
  private mounted = new Map<number, Mounted>();
  private roundRobin = new Map<string, number>();
  private mounting = new Map<number, Mounting>();
  /** While a full load reads the rows, no one knows yet which mounts a path must wait for. */
  private reading: Promise<void> | undefined;
  private loading: Promise<void> = Promise.resolve();
  /** Called after an admin created, changed, enabled, disabled or deleted a storage here (cluster mode announces it). */
  onAdminChange: (id: number) => void = () => {};
  private readonly repo: StoragesRepo;
  private readonly log: Logger;
  private readonly tempDir: string;
  private readonly fileType: (name: string) => number;
  private readonly links: LinkFetcher;

  constructor(private readonly deps: StoragesDeps) {
    ({ repo: this.repo, log: this.log, tempDir: this.tempDir, fileType: this.fileType, links: this.links } = deps);
  }

  private onChange(id: number): void {
    this.deps.onChange(id);
  }

  private onDriverError(driver: string, op: string, err: unknown): void {
    this.deps.onDriverError(driver, op, err);
  }

  /**
   * Resolves once the storages that decide these virtual paths are mounted: a storage being
   * mounted where nothing serves its path yet, at or above a path (its owner) or below it (a
   * listing's mount points); a storage being mounted again is not waited for when its previous
   * mount works, which serves until the new one is ready. With no path, every mount under way
   * (the settled state: statuses, a shutdown). Scoped so that a
   * storage whose mount asks this server itself (a WebDAV storage on this server's /dav, or on
   * a peer that asks back) is not waited for by its own mount's requests, which deadlocked.
   */
  ready(...virtualPaths: string[]): Promise<void> {
    if (!this.reading && this.mounting.size === 0) return SETTLED;
    return this.mountsAt(virtualPaths);
  }

  private async mountsAt(virtualPaths: string[]): Promise<void> {
    while (this.reading) await this.reading;
    const waits: Array<Promise<unknown>> = [];
    for (const [id, f] of this.mounting) {
      if (virtualPaths.length === 0) {
        waits.push(f.done);
        continue;
      }
      const live = this.mounted.get(id);
      if (live?.driver && live.actualMount === f.actualMount) continue;
      const decides = (p: string) => isSubPath(f.actualMount, p) || isSubPath(p, f.actualMount);
      if (virtualPaths.some(decides)) waits.push(f.done);
    }
    await Promise.all(waits);
  }

  /**
   * Mounts every enabled storage and unmounts the others; one that fails keeps its error as
   * status and the rest go on. A storage mounted already serves until its new mount is ready.
   */
  loadAll(): Promise<void> {
    const applied = this.loading.then(() => this.apply(true));
    const reading = applied.then(() => undefined, () => undefined);
    this.reading = reading;
    void reading.then(() => {
      if (this.reading === reading) this.reading = undefined;
    });
    const loaded = applied.then(({ mounted }) => mounted);
    this.loading = loaded.catch(() => undefined);
    return loaded;
  }

  /**
   * Brings this process's mounts in line with the rows: starts the mount of each enabled storage
   * whose row changed (`modified`; every one when `all`) or that is not mounted, and unmounts the
   * deleted and disabled ones. Resolves once that is decided and the unmounts done, with the ids
   * it touched; `mounted` resolves when the mounts are ready, which may take a peer's time.
   */
  private async apply(all: boolean): Promise<{ ids: number[]; mounted: Promise<void> }> {
    const rows = await this.repo.all();
    const ids: number[] = [];
    const mounts: Array<Promise<unknown>> = [];
    const enabled = new Set<number>();
    for (const row of rows) {
      if (row.disabled) continue;
      enabled.add(row.id);
      const serving = this.mounting.get(row.id)?.row.modified ?? this.mounted.get(row.id)?.row.modified;
      if (!all && serving === row.modified) continue;
      ids.push(row.id);
      // All at once: a storage whose peer is slow to answer delays none of the others.
      mounts.push(this.remount(row));
    }
    for (const id of new Set([...this.mounted.keys(), ...this.mounting.keys()])) {
      if (enabled.has(id)) continue;
      ids.push(id);
      await this.unmountId(id);
    }
    return { ids, mounted: Promise.all(mounts).then(() => undefined) };
  }

  /**
   * Builds a mount of `row` and, once its driver is ready, puts it in the place of what serves
   * the id (dropping that); a later remount or unmount of the id makes this one moot. Resolves
   * to the mount that took its place, or undefined when it was made moot.
   */
  private remount(row: StorageRow): Promise<Mounted | undefined> {
    const entry: Mounting = { row, actualMount: actualMountPath(row.mount_path), done: SETTLED as Promise<undefined> };
    entry.done = this.mount(row)
      .then(async (m) => {
        if (this.mounting.get(row.id) !== entry) {
          await this.dropDriver(m);
          return undefined;
        }
        this.mounting.delete(row.id);
        // Its status (and an addition the driver changed) saved only while it is the id's own
        // mount: a moot one's row is older than what the database holds.
        if (m.row.status !== row.status || m.row.addition !== row.addition) {
          await this.repo.update(m.row).catch((err: unknown) => this.log.warn({ err, storage: row.mount_path }, "saving a storage's status failed"));
        }
        const old = this.mounted.get(row.id);
        this.mounted.set(row.id, m);
        this.onChange(row.id);
        if (old) await this.dropDriver(old);
        return m;
      })
      .catch((err: unknown) => {
        if (this.mounting.get(row.id) === entry) this.mounting.delete(row.id);
        this.log.error({ err, storage: row.mount_path }, 'mounting a storage failed');
        return undefined;
      });
    this.mounting.set(row.id, entry);
    return entry.done;
  }

  /** Builds a storage's mount: its driver created and initialised, or the reason it failed as status. */
  private async mount(row: StorageRow): Promise<Mounted> {
    const factory = driverFactory(row.driver);
    const m: Mounted = { row: { ...row }, factory: factory!, actualMount: actualMountPath(row.mount_path) };
    let status = STATUS_WORK;
    if (!factory) {
      status = `no driver named: ${row.driver}`;
    } else {
      try {
        let addition: Record<string, unknown>;
        try {
          addition = row.addition ? JSON.parse(row.addition) : {};
        } catch (err) {
          throw new Error(`invalid addition JSON: ${(err as Error).message}`);
        }
        const saveAddition = async (a: Record<string, unknown>) => {
          m.row.addition = JSON.stringify(a);
          await this.repo.update(m.row);
        };
        const driver = await factory.create(addition, { mountPath: row.mount_path, tempDir: this.tempDir, fileType: this.fileType, vfs: this.deps.vfs(), links: this.links, sign: this.deps.sign, siteUrl: this.deps.siteUrl, saveAddition });
        await driver.init();
        m.driver = watchDriverErrors(driver, (op, err) => this.onDriverError(row.driver, op, err));
        const after = JSON.stringify(driver.addition());
        if (after !== row.addition) {
          m.row.addition = after;
        }
      } catch (err) {
        status = `failed init storage: ${(err as Error).message}`;
        this.onDriverError(row.driver, 'init', err);
        this.log.warn({ storage: row.mount_path, err: (err as Error).message }, 'storage init failed');
      }
    }
    m.row.status = status;
    return m;
  }

  /** Stops serving a storage here, and any mount of it under way. */
  private async unmountId(id: number): Promise<void> {
    this.mounting.delete(id);
    const live = this.mounted.get(id);
    if (!live) return;
    this.mounted.delete(id);
    this.onChange(id);
    await this.dropDriver(live);
  }

  private async dropDriver(m: Mounted): Promise<void> {
    try {
      await m.driver?.drop();
    } catch (err) {
      this.log.warn({ storage: m.row.mount_path, err: (err as Error).message }, 'storage drop failed');
    }
  }

  private normalize(input: StorageInput): StorageInput {
    const mount = cleanPath(input.mount_path ?? '');
    if (!input.mount_path || input.mount_path.trim() === '') throw new BadRequest('mount_path is required');
    if (mount.includes('\0')) throw new BadRequest('mount_path contains a NUL character');
    return { ...input, mount_path: mount };
  }

  async create(input: StorageInput): Promise<{ id: number; error?: string }> {
    const s = this.normalize(input);
    const factory = driverFactory(s.driver);
    if (!factory) throw new BadRequest(`no driver named: ${s.driver}`);
    if (await this.repo.byMountPath(s.mount_path)) {
      throw new Exists(`failed create storage in database: mount path ${s.mount_path} is already used`, { id: 0 });
    }
    const row: Omit<StorageRow, 'id'> = { ...s, status: '', modified: Date.now() };
    delete (row as { id?: number }).id;
    const id = await this.repo.create(row);
    const m = (await this.remount({ ...row, id })) ?? this.mounted.get(id);
    this.onAdminChange(id);
    if (!m) return { id };
    if (m.row.status !== STATUS_WORK) {
      throw new Unavailable(`failed init storage but storage is already created: ${m.row.status}`, { id });
    }
    return { id };
  }

  async update(input: StorageInput & { id: number }): Promise<void> {
    const s = this.normalize(input);
    const old = await this.repo.byId(s.id!);
    if (!old) throw new NotFound('storage not found');
    if (old.driver !== s.driver) throw new BadRequest('driver cannot be changed');
    const other = await this.repo.byMountPath(s.mount_path);
    if (other && other.id !== old.id) throw new Exists(`mount path ${s.mount_path} is already used`);
    const row: StorageRow = { ...old, ...s, id: old.id, status: s.disabled ? STATUS_DISABLED : old.status, modified: Date.now() };
    await this.repo.update(row);
    this.onAdminChange(old.id);
    if (row.disabled) return this.unmountId(old.id);
    const m = (await this.remount(row)) ?? this.mounted.get(old.id);
    if (m && m.row.status !== STATUS_WORK) throw new Unavailable(`failed init storage: ${m.row.status}`);
  }

  async delete(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row) throw new NotFound('storage not found');
    await this.unmountId(id);
    await this.repo.delete(id);
    this.onAdminChange(id);
  }

  async enable(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row) throw new NotFound('storage not found');
    if (!row.disabled) throw new BadRequest('this storage have enabled');
    const next = { ...row, disabled: false, modified: Date.now() };
    await this.repo.update(next);
    await this.remount(next);
    this.onAdminChange(id);
  }

  async disable(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row) throw new NotFound('storage not found');
    if (row.disabled) throw new BadRequest('this storage have disabled');
    await this.unmountId(id);
    await this.repo.update({ ...row, disabled: true, status: STATUS_DISABLED, modified: Date.now() });
    this.onAdminChange(id);
  }

  /** Mounts a storage again as the database now holds it (changed by another process), or drops it. */
  async reloadOne(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (row && !row.disabled) await this.remount(row);
    else await this.unmountId(id);
  }

  /**
   * Brings the mounted storages in line with the database after another process changed some
   * (cluster/staleness.ts): remounts a storage whose row changed (`modified`), mounts an enabled
   * one not mounted here, unmounts one deleted or disabled. A storage that failed to mount here
   * stays as it is until its row changes. Resolves once that is decided and the unmounts are
   * done, with the ids touched; `mounted` resolves when their mounts are ready. The state check
   * waits for the first only: a mount may ask this server itself, through requests that wait
   * for the check.
   */
  reconcile(): Promise<{ ids: number[]; mounted: Promise<void> }> {
    return this.apply(false);
  }

  /** The live status of a storage (the row's status when this process has not mounted it). */
  status(row: StorageRow): string {
    if (row.disabled) return STATUS_DISABLED;
    return this.mounted.get(row.id)?.row.status ?? row.status;
  }

  all(): Mounted[] {
    return [...this.mounted.values()].sort((a, b) => a.row.order - b.row.order || a.row.mount_path.localeCompare(b.row.mount_path));
  }

  byId(id: number): Mounted | undefined {
    return this.mounted.get(id);
  }

  /**
   * The storage owning a (cleaned, absolute) virtual path: the deepest mount wins; replicas of
   * one mount (`.balance`) are taken in turn — unless `turn` is false (a look that serves
   * nothing, such as what a listing tells about its folder, must not skip a replica's turn).
   * Returns the path relative to the storage root.
   */
  resolve(virtualPath: string, opts: { turn?: boolean } = {}): { storage: Mounted; actualPath: string } | undefined {
    let best: Mounted[] = [];
    let bestDepth = -1;
    for (const m of this.mounted.values()) {
      if (!isSubPath(m.actualMount, virtualPath)) continue;
      const d = depth(m.actualMount);
      if (d > bestDepth) {
        best = [m];
        bestDepth = d;
      } else if (d === bestDepth) best.push(m);
    }
    if (best.length === 0) return undefined;
    let storage = best[0]!;
    if (best.length > 1) {
      best.sort((a, b) => a.row.mount_path.localeCompare(b.row.mount_path));
      const key = best[0]!.actualMount;
      const n = this.roundRobin.get(key) ?? 0;
      if (opts.turn !== false) this.roundRobin.set(key, n + 1);
      storage = best[n % best.length]!;
    }
    const rest = storage.actualMount === '/' ? virtualPath : virtualPath.slice(storage.actualMount.length);
    return { storage, actualPath: cleanPath(rest) };
  }

  /**
   * Folders that exist only because storages are mounted below `virtualPath`: the next path
   * segment of each such mount, once, in storage order, with the storage's modified time.
   */
  virtualChildren(virtualPath: string): Array<{ name: string; modified: number }> {
    const seen = new Set<string>();
    const out: Array<{ name: string; modified: number }> = [];
    for (const m of this.all()) {
      const mp = m.actualMount;
      if (mp === virtualPath || !isSubPath(virtualPath, mp)) continue;
      const rest = virtualPath === '/' ? mp.slice(1) : mp.slice(virtualPath.length + 1);
      const name = rest.split('/')[0]!;
      if (name === '' || seen.has(name)) continue;
      seen.add(name);
      out.push({ name, modified: m.row.modified });
    }
    return out;
  }

  /** True when a storage is mounted exactly at this path (its root). */
  isMountRoot(virtualPath: string): boolean {
    return this.all().some((m) => m.actualMount === virtualPath);
  }
}

export const joinVirtual = (dir: string, name: string): string => cleanPath(path.posix.join(dir, name));
