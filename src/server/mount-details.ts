import type { Core } from '../core.js';
import type { Mounted } from '../fs/storages.js';

/** OpenList's `mount_details` of a storage: its disk usage in bytes (omitted where the driver cannot tell). */
export interface MountDetails {
  driver_name: string;
  total_space: number;
  free_space: number;
  used_space: number;
}

/** How long one answer of a driver is reused: listings of the root must not stat every storage each time. */
const TTL_MS = 10_000;
const cache = new WeakMap<Mounted, { at: number; value: Promise<MountDetails | undefined> }>();

/** The storage's usage, or undefined when its driver has no usage capability, is not mounted, or fails. */
export function mountDetailsOf(storage: Mounted): Promise<MountDetails | undefined> {
  const hit = cache.get(storage);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
  const driver = storage.driver;
  const value = driver?.usage
    ? driver.usage().then(
        ({ total, free }) => ({ driver_name: storage.factory.config.name, total_space: total, free_space: free, used_space: Math.max(0, total - free) }),
        () => undefined,
      )
    : Promise.resolve(undefined);
  cache.set(storage, { at: Date.now(), value });
  return value;
}

/** Details for the storage mounted exactly at `virtualPath` (file pages), unless `hide_storage_details`. */
export async function mountDetailsAt(core: Core, virtualPath: string): Promise<MountDetails | undefined> {
  if (core.settings.getBool('hide_storage_details')) return undefined;
  const storage = core.storages.all().find((m) => m.actualMount === virtualPath);
  return storage ? mountDetailsOf(storage) : undefined;
}

/** Adds `"mount_details":{…}` to an object already serialised as JSON text (listings are built as text). */
export function withMountDetails(objText: string, details: MountDetails | undefined): string {
  return details ? `${objText.slice(0, -1)},"mount_details":${JSON.stringify(details)}}` : objText;
}
