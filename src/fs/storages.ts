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

export class Storages {
  private mounted = new Map<number, Mounted>();
  private roundRobin = new Map<string, number>();
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

  /** Resolves once the initial (or a requested) load of all storages has finished. */
  ready(): Promise<void> {
    return this.loading;
  }

  /** Mounts every enabled storage; one that fails keeps its error as status and the rest go on. */
  loadAll(): Promise<void> {
    this.loading = this.loading.then(async () => {
      for (const m of this.mounted.values()) await this.unmount(m);
      this.mounted.clear();
      // All at once: a storage whose peer is slow to answer delays none of the others.
      await Promise.all((await this.repo.all()).filter((row) => !row.disabled).map((row) => this.mount(row)));
    });
    return this.loading;
  }

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
    if (status !== row.status || m.row.addition !== row.addition) await this.repo.update(m.row);
    this.mounted.set(row.id, m);
    this.onChange(row.id);
    return m;
  }

  private async unmount(m: Mounted): Promise<void> {
    try {
      await m.driver?.drop();
    } catch (err) {
      this.log.warn({ storage: m.row.mount_path, err: (err as Error).message }, 'storage drop failed');
    }
    this.mounted.delete(m.row.id);
    this.onChange(m.row.id);
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
    const m = await this.mount({ ...row, id });
    this.onAdminChange(id);
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
    const live = this.mounted.get(old.id);
    if (live) await this.unmount(live);
    this.onAdminChange(old.id);
    if (row.disabled) return;
    const m = await this.mount(row);
    if (m.row.status !== STATUS_WORK) throw new Unavailable(`failed init storage: ${m.row.status}`);
  }

  async delete(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row) throw new NotFound('storage not found');
    const live = this.mounted.get(id);
    if (live) await this.unmount(live);
    await this.repo.delete(id);
    this.onAdminChange(id);
  }

  async enable(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row) throw new NotFound('storage not found');
    if (!row.disabled) throw new BadRequest('this storage have enabled');
    const next = { ...row, disabled: false, modified: Date.now() };
    await this.repo.update(next);
    await this.mount(next);
    this.onAdminChange(id);
  }

  async disable(id: number): Promise<void> {
    const row = await this.repo.byId(id);
    if (!row) throw new NotFound('storage not found');
    if (row.disabled) throw new BadRequest('this storage have disabled');
    const live = this.mounted.get(id);
    if (live) await this.unmount(live);
    await this.repo.update({ ...row, disabled: true, status: STATUS_DISABLED, modified: Date.now() });
    this.onAdminChange(id);
  }

  /** Mounts a storage again as the database now holds it (changed by another process), or drops it. */
  reloadOne(id: number): Promise<void> {
    this.loading = this.loading.then(async () => {
      const live = this.mounted.get(id);
      if (live) await this.unmount(live);
      const row = await this.repo.byId(id);
      if (row && !row.disabled) await this.mount(row);
    });
    return this.loading;
  }

  /**
   * Brings the mounted storages in line with the database after another process changed some
   * (cluster/staleness.ts): remounts a storage whose row changed (`modified`), mounts an enabled
   * one not mounted here, unmounts one deleted or disabled. A storage that failed to mount here
   * stays as it is until its row changes. Resolves to the ids reloaded.
   */
  reconcile(): Promise<number[]> {
    const done = this.loading.then(async () => {
      const rows = await this.repo.all();
      const ids = new Set<number>();
      for (const row of rows) {
        const live = this.mounted.get(row.id);
        if (row.disabled ? live : !live || live.row.modified !== row.modified) ids.add(row.id);
      }
      const present = new Set(rows.map((r) => r.id));
      for (const id of this.mounted.keys()) if (!present.has(id)) ids.add(id);
      return [...ids];
    });
    this.loading = done.then(() => undefined, () => undefined);
    return done.then(async (ids) => {
      await Promise.all(ids.map((id) => this.reloadOne(id)));
      return ids;
    });
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
